"""Hermes's global emergency stop: today's Hermes's `hermes pause` writes `$HERMES_HOME/ESTOP` (optional JSON
{"reason", "engaged_at"}), `hermes resume` removes it. While it exists, in the home or (for a profile) its
root, no cron run is dispatched and no new gateway turn starts here either; in-flight work goes on. A sentinel
that cannot be read, or a stat that fails, still counts as engaged (fail safe), as in Hermes."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_agent import paths

SENTINEL = "ESTOP"


def engaged(home: Path) -> dict | None:
    """{"reason": ...} while the emergency stop is on for `home`, else None."""
    root = paths.profile_root(Path(home))
    for path in (Path(home) / SENTINEL, *((root / SENTINEL,) if root else ())):
        try:
            if not path.exists():
                continue
        except OSError:
            return {"reason": None}
        try:
            raw = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            raw = None
        return {"reason": (raw.get("reason") or None) if isinstance(raw, dict) else None}
    return None


def paused_reply(state: dict) -> str:
    """What a new gateway turn gets while paused (Hermes's words)."""
    tag = f" ({state['reason']})" if state.get("reason") else ""
    return f"⏸️ Hermes is paused{tag}. New work is on hold; run `hermes resume` to pick things back up."
