"""Every on-disk location under HERMES_HOME. Functions only: nothing is created at import."""

from __future__ import annotations

import os
from pathlib import Path


def hermes_home() -> Path:
    """$HERMES_HOME, default ~/.hermes (not created here)."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def ensure_home() -> Path:
    """Create HERMES_HOME (mode 0700) if missing and return it."""
    home = hermes_home()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    return home


def config_path() -> Path:
    return hermes_home() / "config.yaml"


def env_path() -> Path:
    return hermes_home() / ".env"


def state_db_path() -> Path:
    return hermes_home() / "state.db"


def memories_dir() -> Path:
    return hermes_home() / "memories"


def skills_dir() -> Path:
    return hermes_home() / "skills"


def plugins_dir() -> Path:
    return hermes_home() / "plugins"


def checkpoints_dir() -> Path:
    return hermes_home() / "checkpoints"


def logs_dir() -> Path:
    return hermes_home() / "logs"


def cron_dir() -> Path:
    return hermes_home() / "cron"


def soul_path() -> Path:
    return hermes_home() / "SOUL.md"
