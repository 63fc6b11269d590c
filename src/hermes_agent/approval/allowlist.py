"""Persist "always" approvals: append to command_allowlist in config.yaml with ruamel round-trip,
keeping the user's comments and indentation, and replace the file atomically."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)


def add_to_allowlist(config_path: Path, entries: list[str]) -> bool:
    """Append `entries` (not already present) to command_allowlist; False when the file is unusable."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        text = config_path.read_text(encoding="utf-8") if config_path.exists() else ""
        data, indent, block_seq_indent = load_yaml_guess_indent(text) if text.strip() else (None, 2, 0)
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
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    seq_offset = block_seq_indent or 0
    yaml.indent(mapping=indent or 2, sequence=(indent or 2) + seq_offset, offset=seq_offset)
    return _atomic_dump(yaml, data, config_path)


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
