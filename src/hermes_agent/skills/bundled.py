"""Seed the skills that ship with hermes-agent into HERMES_HOME/skills without clobbering user edits.

`.bundled_manifest` holds one `name:md5` line per seeded skill: the hash of the copy we last wrote.
A skill whose current hash differs from it was edited by the user and is never overwritten; one
the user deleted is not brought back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.skills.catalog import SKILL_FILE
from hermes_agent.skills.fsutil import atomic_write, content_hash, copy_skill

MANIFEST = ".bundled_manifest"


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


def read_manifest(skills_dir: Path) -> dict[str, str]:
    """name -> md5 of the bundled copy last seeded."""
    try:
        text = (Path(skills_dir) / MANIFEST).read_text(encoding="utf-8")
    except OSError:
        return {}
    pairs = (line.strip().split(":", 1) for line in text.splitlines() if ":" in line)
    return {name: digest for name, digest in pairs if name and not name.startswith("#")}


def _write_manifest(skills_dir: Path, manifest: dict[str, str]) -> None:
    body = "".join(f"{name}:{digest}\n" for name, digest in sorted(manifest.items()))
    atomic_write(skills_dir / MANIFEST, body)


def bundled_skills(source: Path | None = None) -> list[tuple[str, str, Path]]:
    """(category, name, dir) of every packaged skill."""
    root = source or bundled_dir()
    return sorted((p.parent.parent.name, p.parent.name, p.parent) for p in root.glob(f"*/*/{SKILL_FILE}"))


def seed_bundled(skills_dir: Path, source: Path | None = None) -> SeedReport:
    """Copy new or updated bundled skills into `skills_dir`, respecting user edits and deletions."""
    skills_dir = Path(skills_dir)
    report = SeedReport()
    manifest = read_manifest(skills_dir)
    before = dict(manifest)
    for category, name, src in bundled_skills(source):
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
