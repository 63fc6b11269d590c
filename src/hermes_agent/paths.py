"""Every on-disk location under HERMES_HOME. Functions only: nothing is created at import."""

from __future__ import annotations

import os
from pathlib import Path

PROFILE_NAME = r"[a-z0-9][a-z0-9_-]{0,63}"


def hermes_home() -> Path:
    """$HERMES_HOME, else the sticky profile of ~/.hermes/active_profile, else ~/.hermes (not created here)."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    if raw:
        return Path(raw).expanduser()
    root = Path.home() / ".hermes"
    try:
        name = (root / "active_profile").read_text(encoding="utf-8").strip()
    except OSError:
        return root
    if name and name != "default" and (root / "profiles" / name).is_dir():
        return root / "profiles" / name
    return root


def hermes_root() -> Path:
    """The directory that holds every profile: ~/.hermes, or $HERMES_HOME (minus profiles/<name>)."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    if not raw:
        return Path.home() / ".hermes"
    home = Path(raw).expanduser()
    return home.parent.parent if home.parent.name == "profiles" else home


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


def gateway_dir() -> Path:
    return hermes_home() / "gateway"


def gateway_state_path() -> Path:
    """What a running gateway reports (pid, platforms, sessions) for `gateway status` and the dashboard."""
    return gateway_dir() / "gateway_state.json"


def soul_path() -> Path:
    return hermes_home() / "SOUL.md"


def install_hint(extra: str) -> str:
    """The command that adds an optional extra to THIS installation (the index's `hermes-agent` is upstream)."""
    import json
    import sys
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        info = json.loads(metadata.distribution("hermes-agent").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        info = {}
    url = str(info.get("url", ""))
    if not url.startswith("file://"):
        return f"reinstall hermes-agent from its source checkout with the [{extra}] extra"
    editable = "-e " if (info.get("dir_info") or {}).get("editable") else ""
    return f"{sys.executable} -m pip install {editable}'{unquote(urlparse(url).path)}[{extra}]'"


def media_cache(kind: str, scope: str = "local") -> Path:
    """Where media of a session's scope go: cache/<kind>/<scope> (kind: documents, images, audio), or under the
    legacy image_cache / audio_cache directory when a Hermes home already has one. A session's sandbox reads only
    its own scope (approval/policy.py MEDIA_DIRS): a chat's files stay out of other chats and cron jobs."""
    home = hermes_home()
    legacy = home / {"images": "image_cache", "audio": "audio_cache"}.get(kind, f"{kind}_cache")
    return (legacy if legacy.is_dir() else home / "cache" / kind) / (scope or "local")


def media_scope_of(key: str, kind: str = "chat") -> str:
    """The media scope of a chat (kind "chat", its gateway session key) or a cron job (kind "cron", its id): a
    stable name that says nothing of what it stands for ("chat-" + 16 hex of a SHA-256)."""
    import hashlib

    return f"{kind}-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (pid files: the gateway, dashboards, rollout drivers); a zombie child of
    this process counts as gone (it is reaped here)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:  # not our child: it exists
        return True
