"""Atomic files: written through a temp file in the same directory, fsynced, then renamed, so a reader (or a
crash) never sees half a file. The one copy of this logic; JSON state files use it too."""

from __future__ import annotations

import json
import os
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data`; mode: given, else the old file's, else 0600."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o600
    import tempfile  # where used: tempfile loads shutil, random (and bz2, lzma) at start-up otherwise

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def write_json(path: Path, obj: object, *, mode: int | None = 0o600, indent: int | None = None) -> None:
    atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False), mode)


def read_json_dict(path: Path) -> dict:
    """The JSON object in `path`; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
