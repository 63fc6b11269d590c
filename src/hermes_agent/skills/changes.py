"""A planned change to one skill (file writes/deletes, whole-dir removal), its diff, and applying it live."""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.fsutil import atomic_write, skill_files


@dataclass(frozen=True, slots=True)
class FileChange:
    """Set `rel` (relative to the skill dir) to `content`, or delete it when content is None."""

    rel: str
    content: str | None


@dataclass(frozen=True, slots=True)
class Change:
    """What one skill_manage call does. `remove_dir` empties the skill dir before the file changes."""

    action: str
    name: str
    skill_rel: str
    files: tuple[FileChange, ...] = ()
    remove_dir: bool = False


def sha256_text(text: str | None) -> str | None:
    """Digest of a file's text (None stays None: the file is absent)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(path: Path) -> str | None:
    """File text, or None when absent."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def apply_change(skills_dir: Path, change: Change) -> Path:
    """Make `change` live under `skills_dir`; every file write is atomic. Returns the skill dir."""
    skill_dir = skills_dir / change.skill_rel
    if change.remove_dir and skill_dir.exists():
        shutil.rmtree(skill_dir)
    for fc in change.files:
        target = skill_dir / fc.rel
        if fc.content is None:
            target.unlink(missing_ok=True)
            _prune_empty(target.parent, skill_dir)
        else:
            atomic_write(target, fc.content)
    if change.remove_dir and not change.files:
        _prune_empty(skill_dir.parent, skills_dir)
    return skill_dir


def _prune_empty(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def diff_change(skills_dir: Path, skill_rel: str, files: dict[str, str | None], remove_dir: bool) -> str:
    """Unified diff (live -> result) of a change, paths shown relative to the skills dir."""
    skill_dir = skills_dir / skill_rel
    rels = set(files)
    if remove_dir and skill_dir.is_dir():
        rels |= set(skill_files(skill_dir))
    chunks: list[str] = []
    for rel in sorted(rels):
        before = read_text(skill_dir / rel) if skill_dir.is_dir() else None
        after = files.get(rel) if rel in files else (None if remove_dir else before)
        if before == after:
            continue
        label = f"{skill_rel}/{rel}"
        chunks.append("".join(difflib.unified_diff(
            (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
            fromfile="/dev/null" if before is None else f"a/{label}",
            tofile="/dev/null" if after is None else f"b/{label}")))
    return "\n".join(c if c.endswith("\n") else c + "\n" for c in chunks)
