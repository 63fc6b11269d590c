"""Persist "always" approvals: append to command_allowlist in config.yaml with ruamel round-trip,
keeping the user's comments and indentation, and replace the file atomically."""

from __future__ import annotations

import logging
import os
import re
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def add_to_allowlist(config_path: Path, entries: list[str]) -> bool:
    """Append `entries` (not already present) to command_allowlist; False when the file is unusable."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    try:
        text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
        data = yaml.load(text) if text.strip() else None
    except (OSError, UnicodeDecodeError, YAMLError) as exc:
        log.warning("cannot update %s: %s", config_path, exc)
        return False
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        log.warning("cannot update %s: the top level is not a mapping", config_path)
        return False
    current = data.get("command_allowlist")
    if not isinstance(current, list):
        current = CommentedSeq()
        data["command_allowlist"] = current
    for entry in entries:
        if entry not in current:
            current.append(entry)
    mapping, offset = _guess_indent(text)
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return _atomic_dump(yaml, data, config_path)


def _guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset of block sequences) as the user wrote them; ruamel's defaults otherwise."""
    mapping = re.search(r"^[^\s#][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( +)[^\s#-]", text, re.M)
    sequence = re.search(r"^[^\s#][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)- ", text, re.M)
    return (len(mapping.group(1)) if mapping else 2), (len(sequence.group(1)) if sequence else 0)


def _atomic_dump(yaml: object, data: object, path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                yaml.dump(data, fh)  # type: ignore[attr-defined]
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)
        return False
    return True
