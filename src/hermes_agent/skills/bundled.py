"""Seed the skills that ship with hermes-agent into HERMES_HOME/skills without clobbering user edits.

Our manifest, `.bundled_manifest.hermes-agent`, has the format of Hermes's `.bundled_manifest` (one
`name:md5` line per seeded skill: the hash of the copy last written) but is a file of its own: Hermes
drops names it does not ship from its manifest, and each side would take the other's skills for user
edits. Hermes's `.bundled_manifest` is only read (entries an older version of ours wrote there for our
skills are adopted once), never written. A skill whose current hash differs from the manifest's was
edited by the user and is never overwritten; one the user deleted is not brought back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.skills.catalog import SKILL_FILE
from hermes_agent.skills.fsutil import atomic_write, content_hash, copy_skill

MANIFEST = ".bundled_manifest.hermes-agent"
HERMES_MANIFEST = ".bundled_manifest"  # the released Hermes's; read, never written


def bundled_dir() -> Path:
    """Where the packaged skills live (src/hermes_agent/skills/bundled)."""
    return Path(__file__).resolve().parent / "bundled"


@dataclass(slots=True)
class SeedReport:
    """What seeding did, by skill name."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped_user_modified: list[str] = field(default_factory=list)
    skipped_user_deleted: list[str] = field(default_factory=list)
    skipped_conflict: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated)


def read_manifest(skills_dir: Path, name: str = MANIFEST) -> dict[str, str]:
    """name -> md5 of the bundled copy last seeded (lines `name:md5`; Hermes's v1 bare names skipped)."""
    try:
        text = (Path(skills_dir) / name).read_text(encoding="utf-8")
    except OSError:
        return {}
    pairs = (line.strip().split(":", 1) for line in text.splitlines() if ":" in line)
    return {n: digest for n, digest in pairs if n and not n.startswith("#")}


def _adopt_legacy(skills_dir: Path, ours: set[str]) -> dict[str, str]:
    """Our skills' entries from Hermes's manifest, where versions before the split recorded them."""
    return {n: d for n, d in read_manifest(skills_dir, HERMES_MANIFEST).items() if n in ours}


def _write_manifest(skills_dir: Path, manifest: dict[str, str]) -> None:
    body = "".join(f"{name}:{digest}\n" for name, digest in sorted(manifest.items()))
    atomic_write(skills_dir / MANIFEST, body)


def bundled_skills(source: Path | None = None) -> list[tuple[str, str, Path]]:
    """(category, name, dir) of every packaged skill."""
    root = source or bundled_dir()
    return sorted((p.parent.parent.name, p.parent.name, p.parent) for p in root.glob(f"*/*/{SKILL_FILE}"))


def seed_bundled(skills_dir: Path, source: Path | None = None) -> SeedReport:
    """Copy new or updated bundled skills into `skills_dir`, respecting user edits and deletions. Several
    processes starting on one fresh home (gateway, cron, api) take turns under a file lock."""
    import fcntl

    skills_dir = Path(skills_dir)
    skills_dir.mkdir(parents=True, exist_ok=True)
    with open(skills_dir / ".bundled.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _seed_locked(skills_dir, source)


def _seed_locked(skills_dir: Path, source: Path | None) -> SeedReport:
    report = SeedReport()
    skills = bundled_skills(source)
    manifest = read_manifest(skills_dir)
    if not (skills_dir / MANIFEST).exists():
        manifest = _adopt_legacy(skills_dir, {name for _, name, _ in skills})
    before = dict(manifest)
    for category, name, src in skills:
        dest = skills_dir / category / name
        new_hash = content_hash(src, "md5")
        seeded = manifest.get(name)
        if seeded is None:
            if dest.exists():
                report.skipped_conflict.append(name)
                continue
            copy_skill(src, dest)
            manifest[name] = new_hash
            report.added.append(name)
        elif not dest.exists():
            report.skipped_user_deleted.append(name)
        elif content_hash(dest, "md5") != seeded:
            report.skipped_user_modified.append(name)
        elif seeded == new_hash:
            report.unchanged.append(name)
        else:
            copy_skill(src, dest)
            manifest[name] = new_hash
            report.updated.append(name)
    if manifest != before or not (skills_dir / MANIFEST).exists():
        _write_manifest(skills_dir, manifest)
    return report
