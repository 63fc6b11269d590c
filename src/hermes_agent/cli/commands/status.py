"""`hermes status`: what is configured and stored, read locally (no network: `hermes doctor` probes)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from hermes_agent import __version__, paths
from hermes_agent.config.settings import Settings

TOLERATES_BROKEN_CONFIG = True  # status says the config is broken instead of refusing to run


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes status`."""
    subparsers.add_parser("status", help="model, endpoint, paths, toolsets and what is stored")


def _config_line(cfg: Path) -> str:
    from hermes_agent.config.loader import read_yaml_file
    from hermes_agent.config.migrate import config_version
    from hermes_agent.errors import ConfigError

    if not cfg.exists():
        return f"{cfg} (missing: defaults apply; run `hermes setup`)"
    try:
        return f"{cfg} (config version {config_version(read_yaml_file(cfg))})"
    except ConfigError as exc:
        return f"{cfg} — BROKEN: {exc} (run `hermes doctor`)"


def _env_line() -> str:
    from hermes_agent.config.loader import read_env_file

    env = paths.env_path()
    if not env.exists():
        return f"{env} (missing)"
    mode = env.stat().st_mode & 0o777
    warn = "  — readable by others: chmod 600" if mode & 0o077 else ""
    return f"{env} ({len(read_env_file(env))} variables, mode {mode:04o}){warn}"


def _endpoint_lines(settings: Settings) -> list[tuple[str, str]]:
    from hermes_agent.errors import ConfigError
    from hermes_agent.providers.profiles import resolve_endpoint

    try:
        ep = resolve_endpoint(settings.model, settings.env, str(settings.config_file or paths.config_path()))
    except ConfigError as exc:
        return [("model", f"not ready: {exc}")]
    key = "none (local endpoint)" if ep.api_key == "no-key" else "set"
    return [("model", ep.model), ("provider", ep.provider), ("endpoint", ep.base_url), ("api key", key)]


def _sessions() -> str:
    db = paths.state_db_path()
    if not db.exists():
        return "none yet"
    from hermes_agent.storage import SessionStore

    with SessionStore(db) as store:
        st = store.stats()
    return f"{st.sessions} sessions, {st.messages} messages ({st.db_bytes / 1e6:.1f} MB in {db})"


def _skills(settings: Settings) -> str:
    root = paths.skills_dir()
    if not root.is_dir():
        return "none installed"
    from hermes_agent.skills.catalog import SkillCatalog

    skills = SkillCatalog([root], use_disk_cache=False).all()
    return f"{len(skills)} installed ({root})"


def _memory(settings: Settings) -> str:
    from hermes_agent.memory.store import MemoryStore

    store = MemoryStore.from_settings(settings)
    parts = [f"{t}: {len(store.entries(t))} entries" for t in ("memory", "user")]
    return ", ".join(parts) + ("" if store.dir.is_dir() else " (nothing saved yet)")


def _safely(fn: Callable[[], str]) -> str:
    """A store that is missing or broken degrades to one clear phrase; status always completes."""
    try:
        return fn()
    except ImportError as exc:
        return f"unavailable (module missing: {exc.name or exc})"
    except Exception as exc:  # a broken store must not hide the rest of the status
        return f"unavailable: {type(exc).__name__}: {exc}"


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print one aligned line per item."""
    from hermes_agent.cli.tool_report import enabled_toolsets

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    config_line = _config_line(cfg)
    broken = " — BROKEN: " in config_line
    rows: list[tuple[str, str]] = [
        ("version", f"hermes-agent {__version__} (python {sys.version.split()[0]})"),
        ("home", str(settings.home)),
        ("config", config_line),
        (".env", _env_line()),
        *([("model", "unknown until config.yaml loads")] if broken else _endpoint_lines(settings)),
        ("terminal", settings.cfg.terminal.backend),
        ("toolsets", _safely(lambda: ", ".join(enabled_toolsets(settings, "cli")))),
        ("sessions", _safely(_sessions)),
        ("skills", _safely(lambda: _skills(settings))),
        ("memory", _safely(lambda: _memory(settings))),
        ("mcp servers", str(len(settings.cfg.mcp_servers)) + " configured"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0
