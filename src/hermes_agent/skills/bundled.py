"""The skills that ship with hermes-agent are read where they are packaged (src/hermes_agent/skills/bundled,
the catalog's last, read-only root); they are never copied into HERMES_HOME/skills, the folder shared with
Hermes, where Hermes would list them as the user's own (`hermes skills list`: "local") and put them in its
system prompt as such. A user's (or hub's, or Hermes's) skill of the same name wins over ours.

Homes where an earlier version of ours seeded copies: `retire_seeded` removes each copy still exactly as
seeded (its md5 in our manifest `.bundled_manifest.hermes-agent`, or in Hermes's `.bundled_manifest`
where versions before that recorded it); a copy the user edited stays, now the user's. A seeded skill the
user deleted stays hidden: its manifest line is kept, and `hidden_bundled` names it. Hermes's own
`.bundled_manifest` is only read, never written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.skills.catalog import SKILL_FILE
from hermes_agent.skills.fsutil import atomic_write, content_hash

MANIFEST = ".bundled_manifest.hermes-agent"
HERMES_MANIFEST = ".bundled_manifest"  # the released Hermes's; read, never written


def bundled_dir() -> Path:
    """Where the packaged skills live (src/hermes_agent/skills/bundled)."""
    return Path(__file__).resolve().parent / "bundled"


@dataclass(slots=True)
class RetireReport:
    """What retiring seeded copies did, by skill name."""

    removed: list[str] = field(default_factory=list)
    kept_user_modified: list[str] = field(default_factory=list)
    hidden_user_deleted: list[str] = field(default_factory=list)


def read_manifest(skills_dir: Path, name: str = MANIFEST) -> dict[str, str]:
    """name -> md5 of the bundled copy last seeded (lines `name:md5`; Hermes's v1 bare names skipped)."""
    try:
        text = (Path(skills_dir) / name).read_text(encoding="utf-8")
    except OSError:
        return {}
    pairs = (line.strip().split(":", 1) for line in text.splitlines() if ":" in line)
    return {n: digest for n, digest in pairs if n and not n.startswith("#")}


def _write_manifest(skills_dir: Path, manifest: dict[str, str]) -> None:
    body = "".join(f"{name}:{digest}\n" for name, digest in sorted(manifest.items()))
    atomic_write(skills_dir / MANIFEST, body)


def bundled_skills(source: Path | None = None) -> list[tuple[str, str, Path]]:
    """(category, name, dir) of every packaged skill."""
    root = source or bundled_dir()
    return sorted((p.parent.parent.name, p.parent.name, p.parent) for p in root.glob(f"*/*/{SKILL_FILE}"))


def hidden_bundled(skills_dir: Path) -> frozenset[str]:
    """Bundled skills the user deleted when they were seeded copies: not offered from the package."""
    return frozenset(read_manifest(skills_dir))


def _seeded(skills_dir: Path, skills: list[tuple[str, str, Path]]) -> dict[str, str]:
    ours = {name for _, name, _ in skills}
    legacy = {n: d for n, d in read_manifest(skills_dir, HERMES_MANIFEST).items() if n in ours}
    return {**legacy, **read_manifest(skills_dir)}


def retire_seeded(skills_dir: Path, source: Path | None = None) -> RetireReport:
    """Take our seeded copies back out of the shared skills folder (see the module docstring). Cheap when
    there is nothing to do (no manifest line whose copy is still there); several processes take turns
    under a file lock."""
    skills_dir = Path(skills_dir)
    skills = bundled_skills(source)
    seeded = _seeded(skills_dir, skills)
    if not any((skills_dir / cat / name).is_dir() for cat, name, _ in skills if name in seeded):
        return RetireReport(hidden_user_deleted=sorted(n for n in read_manifest(skills_dir)))
    import fcntl

    with open(skills_dir / ".bundled.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _retire_locked(skills_dir, skills)


def _retire_locked(skills_dir: Path, skills: list[tuple[str, str, Path]]) -> RetireReport:
    report = RetireReport()
    seeded = _seeded(skills_dir, skills)
    manifest = read_manifest(skills_dir)
    for category, name, _src in skills:
        digest = seeded.get(name)
        if digest is None:
            continue
        dest = skills_dir / category / name
        if not dest.is_dir():
            report.hidden_user_deleted.append(name)
            manifest[name] = digest
            continue
        if content_hash(dest, "md5") == digest:
            import shutil  # only when a seeded copy is retired (shutil loads bz2/lzma)

            shutil.rmtree(dest)
            if category and not any((skills_dir / category).iterdir()):
                (skills_dir / category).rmdir()
            report.removed.append(name)
        else:
            report.kept_user_modified.append(name)
        manifest.pop(name, None)
    if manifest:
        _write_manifest(skills_dir, manifest)
    else:
        (skills_dir / MANIFEST).unlink(missing_ok=True)
    return report
