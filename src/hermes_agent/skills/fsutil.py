"""File helpers shared by the skills modules: atomic writes, skill-directory hashing, safe copies."""

from __future__ import annotations

import os
from pathlib import Path

# hashlib, shutil and tempfile are imported inside the functions: building the skills index at
# start-up must not pay for OpenSSL, bz2 and lzma.

# Directories under a skills root that hold state rather than skills.
STATE_DIRS = frozenset({".hub", ".proposals", ".cache"})
_IGNORED_NAMES = frozenset({".git", "__pycache__", ".DS_Store"})


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` through a temp file + rename, so readers never see half a file (mode kept, else
    0644: skills are meant to be read)."""
    from hermes_agent.atomicfile import atomic_write_bytes

    raw = data.encode("utf-8") if isinstance(data, str) else data
    atomic_write_bytes(path, raw, None if path.exists() else 0o644)


def skill_files(skill_dir: Path) -> list[str]:
    """Relative POSIX paths of every regular file of a skill (sorted; VCS and cache dirs skipped)."""
    out: list[str] = []
    for root, dirs, files in os.walk(skill_dir):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED_NAMES)
        for name in files:
            if name in _IGNORED_NAMES:
                continue
            full = Path(root) / name
            if full.is_symlink() or not full.is_file():
                continue
            out.append(full.relative_to(skill_dir).as_posix())
    return sorted(out)


def content_hash(skill_dir: Path, algo: str = "sha256") -> str:
    """Digest over (relative path, bytes) of every file of a skill: equal trees hash equal."""
    import hashlib

    h = hashlib.new(algo)
    for rel in skill_files(skill_dir):
        h.update(rel.encode("utf-8") + b"\0")
        h.update((skill_dir / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def copy_skill(src: Path, dest: Path) -> None:
    """Replace `dest` with a copy of skill directory `src` (regular files only, staged then renamed)."""
    import shutil
    import tempfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        for rel in skill_files(src):
            target = stage / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, target)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(stage, dest)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def is_within(path: Path, root: Path) -> bool:
    """True when `path` (resolved, following symlinks) lies inside `root` (resolved)."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
