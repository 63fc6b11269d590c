"""Edit config.yaml in ruamel round-trip mode (the user's comments and order survive), written atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from io import StringIO
from pathlib import Path

from hermes_agent.errors import ConfigError


def _yaml() -> object:
    from ruamel.yaml import YAML

    yaml = YAML()  # round-trip
    yaml.preserve_quotes = True
    return yaml


def edit_config(path: Path, mutate: Callable[[dict], object]) -> object:
    """Load `path`, let `mutate(data)` change it in place, write it back atomically; returns mutate's value."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    yaml = _yaml()
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        data = yaml.load(text) if text.strip() else None  # type: ignore[attr-defined]
    except (OSError, YAMLError) as exc:
        raise ConfigError(f"{path}: cannot edit: {str(exc).splitlines()[0]}") from exc
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    result = mutate(data)
    buf = StringIO()
    yaml.dump(data, buf)  # type: ignore[attr-defined]
    text = buf.getvalue()
    atomic_write_text(path, text if text.endswith("\n") else text + "\n")
    return result


def section(data: dict, key: str) -> dict:
    """`data[key]` as a mapping, created (as a round-trip map) when missing or null."""
    from ruamel.yaml.comments import CommentedMap

    value = data.get(key)
    if not isinstance(value, dict):
        value = CommentedMap()
        data[key] = value
    return value


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same directory + rename, keeping the old file's mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
