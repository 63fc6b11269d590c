"""Persist "always" approvals: append to command_allowlist in config.yaml through the shared
round-trip editor (comments and indentation kept, atomic replace)."""

from __future__ import annotations

import logging
from pathlib import Path

from hermes_agent.config.edit import edit_config
from hermes_agent.errors import ConfigError

log = logging.getLogger(__name__)


def add_to_allowlist(config_path: Path, entries: list[str]) -> bool:
    """Append `entries` (not already present) to command_allowlist; False when the file is unusable."""

    def mutate(data: dict) -> None:
        from ruamel.yaml.comments import CommentedSeq

        current = data.get("command_allowlist")
        if not isinstance(current, list):
            current = data["command_allowlist"] = CommentedSeq()
        current.extend(e for e in entries if e not in current)

    try:
        edit_config(config_path, mutate)
    except (ConfigError, OSError) as exc:
        log.warning("cannot update %s: %s", config_path, exc)
        return False
    return True
