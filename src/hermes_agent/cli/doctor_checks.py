"""The individual `hermes doctor` checks. Each returns Findings; none raises (a check that cannot run
says so as a finding)."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_agent import lazyre, paths
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError

Level = Literal["ok", "info", "warn", "fail"]
_IMPORT_NAMES = {"python-dotenv": "dotenv", "readability-lxml": "readability", "python-telegram-bot": "telegram",
                 "discord.py": "discord", "agent-client-protocol": "acp"}
_REQ = lazyre.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_SKIP_EXTRAS = {"dev"}


@dataclass(frozen=True, slots=True)
class Finding:
    level: Level
    text: str


def check_python() -> list[Finding]:
    """Python >= 3.11 (the package's floor)."""
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info >= (3, 11)
    return [Finding("ok" if ok else "fail", f"python {version} ({sys.executable})"
                    + ("" if ok else ": Hermes needs Python 3.11 or newer"))]


def _requirements() -> list[tuple[str, str | None]]:
    """(distribution, extra or None) from the installed package metadata."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        reqs = requires("hermes-agent") or []
    except PackageNotFoundError:
        return []
    out = []
    for req in reqs:
        m = _REQ.match(req)
        if not m:
            continue
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", req)
        out.append((m.group(1), extra.group(1) if extra else None))
    return out


def check_dependencies() -> list[Finding]:
    """Required libraries import (with their versions); optional extras are reported when missing."""
    import importlib
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version

    found: list[Finding] = []
    missing_extras: dict[str, list[str]] = {}
    for dist, extra in _requirements():
        if extra in _SKIP_EXTRAS:
            continue
        module = _IMPORT_NAMES.get(dist, dist.replace("-", "_").lower())
        try:
            ver = version(dist)
        except PackageNotFoundError:
            ver = ""
        if extra:
            if not ver or importlib.util.find_spec(module.split(".")[0]) is None:
                missing_extras.setdefault(extra, []).append(dist)
            else:
                found.append(Finding("ok", f"{dist} {ver} (extra {extra})"))
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # any import failure is what we are looking for
            found.append(Finding("fail", f"{dist} {ver or '(not installed)'} does not import: "
                                         f"{type(exc).__name__}: {exc}"))
            continue
        found.append(Finding("ok", f"{dist} {ver}"))
    if missing_extras:
        text = "; ".join(f"{extra} ({', '.join(dists)})" for extra, dists in missing_extras.items())
        from hermes_agent.paths import install_hint

        found.append(Finding("info", f"optional extras not installed: {text} — {install_hint('EXTRA')}"))
    return found or [Finding("warn", "hermes-agent package metadata not found: dependencies not checked")]


def check_config(settings: Settings) -> tuple[list[Finding], Settings | None]:
    """config.yaml parses and loads; unknown keys and an old _config_version are warnings. Returns the
    settings to use for the other checks (None when the user's config does not load)."""
    from hermes_agent.config.edit import ConfigDocument
    from hermes_agent.config.loader import load_settings
    from hermes_agent.config.migrate import CURRENT_VERSION, config_version, unknown_keys

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    if not cfg.exists():
        return [Finding("warn", f"no {cfg} yet: defaults apply (run `hermes setup`)")], settings
    try:
        doc = ConfigDocument.load(cfg)
        loaded = load_settings()
    except ConfigError as exc:
        return [Finding("fail", f"config: {exc}")], None
    out = [Finding("ok", f"config {cfg} is valid")]
    for item in unknown_keys(doc.data):
        hint = f" (did you mean '{item.suggestion}'?)" if item.suggestion else ""
        out.append(Finding("warn", f"config: unknown key '{item.key}' is ignored{hint}"))
    version = config_version(doc.data)
    if version < CURRENT_VERSION:
        out.append(Finding("warn", f"config version {version} < {CURRENT_VERSION}: run `hermes config migrate`"))
    return out, loaded


def check_env_file() -> list[Finding]:
    """.env exists with mode 0600 (it holds API keys)."""
    env = paths.env_path()
    if not env.exists():
        return [Finding("info", f"no {env} (API keys may come from the environment)")]
    mode = env.stat().st_mode & 0o777
    if mode & 0o077:
        return [Finding("warn", f"{env} is readable by group/others (mode {mode:04o}): run chmod 600 {env}")]
    return [Finding("ok", f"{env} mode {mode:04o}")]


def check_endpoint(settings: Settings, timeout: float, offline: bool) -> list[Finding]:
    """The model endpoint resolves and answers GET /models (the user's own endpoint only)."""
    from hermes_agent.cli.endpoint_probe import ProbeError, list_models
    from hermes_agent.providers.profiles import resolve_endpoint

    cfg = str(settings.config_file or paths.config_path())
    try:
        ep = resolve_endpoint(settings.model, settings.env, cfg)
    except ConfigError as exc:
        return [Finding("fail", f"model: {exc}")]
    head = f"model {ep.model} via {ep.provider} at {ep.base_url}"
    if offline:
        return [Finding("info", f"{head} (not contacted: --offline)")]
    try:
        res = list_models(ep.base_url, ep.api_key, timeout=timeout)
    except ProbeError as exc:
        return [Finding("fail", f"{head}: {exc}")]
    out = [Finding("ok", f"{head}: answered in {res.seconds * 1000:.0f} ms ({len(res.models)} models)")]
    if res.models and ep.model not in res.models:
        out.append(Finding("warn", f"model {ep.model!r} is not in the endpoint's model list "
                                   f"(e.g. {', '.join(res.models[:3])}); `hermes model` picks one"))
    return out


def check_tools(settings: Settings) -> list[Finding]:
    """Each tool enabled for the CLI: available, or the reason it is not; plugin load failures."""
    from hermes_agent.cli.tool_report import enabled_toolsets, inventory, selected_tools

    try:
        inv = inventory(settings)
        toolsets = enabled_toolsets(settings, "cli")
    except Exception as exc:  # tool discovery runs third-party code (plugins); report it
        return [Finding("fail", f"tools could not be inspected: {type(exc).__name__}: {exc}")]
    names = selected_tools(toolsets, inv.dynamic)
    absent = sorted(n for n in names if n not in inv.tools)
    ready = [n for n in names if n in inv.tools and inv.tools[n].available]
    out = [Finding("ok", f"{len(ready)} tools ready for toolsets {', '.join(toolsets)}")]
    for st in inv.tools.values():  # every registered tool: a plugin's tools matter even before enabling
        if not st.available:
            off = "" if st.name in names else " (not enabled for cli)"
            out.append(Finding("warn", f"tool {st.name} unavailable: {st.reason}{off}"))
    if absent:
        out.append(Finding("info", f"not included in this installation: {', '.join(absent)}"))
    out += [Finding("fail", f"plugin {name} failed to load: {why}") for name, why in sorted(inv.plugin_failures.items())]
    return out


def check_backend(settings: Settings) -> list[Finding]:
    """The terminal backend's client program exists."""
    from hermes_agent import paths

    backend = settings.cfg.terminal.backend
    need = {"docker": "docker", "ssh": "ssh", "singularity": "singularity"}.get(backend)
    if need and not (paths.trusted_which(need) or (need == "singularity" and paths.trusted_which("apptainer"))):
        return [Finding("fail", f"terminal backend {backend}: `{need}` is not on PATH (outside the places the "
                                "sandbox can write)")]
    if backend == "ssh" and not settings.cfg.terminal.ssh_host:
        return [Finding("fail", "terminal backend ssh: terminal.ssh_host is not set")]
    from hermes_agent.terminal.manager import backend_problem

    if problem := backend_problem(settings):
        return [Finding("fail", f"terminal backend {backend}: {problem}")]
    return [Finding("ok", f"terminal backend {backend}")]


def check_database() -> list[Finding]:
    """state.db: the layout version it has (shared with Hermes), a quick integrity check, search indexes."""
    from hermes_agent.storage.health import check_database as db_checks

    return [Finding(c.level, c.text) for c in db_checks(paths.state_db_path())]


def check_database_size(settings: Settings) -> list[Finding]:
    """A warning before state.db gets large: at 80% of sessions.max_db_mb."""
    from hermes_agent.storage.retention import warn_size

    path = paths.state_db_path()
    if not path.exists():
        return []
    text = warn_size(path, settings.cfg.sessions.max_db_mb * 1024 * 1024)
    return [Finding("warn", text)] if text else []


A2A_UNCAPPED_WARN_MB = 100  # the tasks file past this with nothing pruning it: a warning


def check_a2a_tasks_size(settings: Settings) -> list[Finding]:
    """A warning before the A2A server's tasks file (api_server/a2a_tasks.db) gets large: at 80% of
    sessions.a2a_tasks_max_mb, or past 100 MB when nothing prunes it (no cap, or sessions.auto_prune off); with the
    size, the key to change, and the biggest caller in team mode (with its sessions.a2a_tasks_by_caller key)."""
    from hermes_agent.api.a2a_store import tasks_path
    from hermes_agent.storage.a2a_tasks import bytes_by_owner
    from hermes_agent.storage.retention import file_bytes

    path, c = tasks_path(settings.home), settings.cfg.sessions
    try:
        size = file_bytes(path) if path.exists() else 0
    except OSError:
        return []
    mb, cap = size / 1048576, c.a2a_tasks_max_mb  # MB as the config keys count them (MiB)
    if c.auto_prune and cap:
        if mb < cap * 0.8:
            return []
        text = (f"A2A tasks file {path} is {mb:.0f} MB (limit sessions.a2a_tasks_max_mb: {cap:g}): lower "
                "sessions.a2a_tasks_max_mb or sessions.a2a_task_retention_days")
    elif mb >= A2A_UNCAPPED_WARN_MB:
        why = "sessions.auto_prune is off" if not c.auto_prune else "sessions.a2a_tasks_max_mb is 0"
        text = (f"A2A tasks file {path} is {mb:.0f} MB and nothing prunes it ({why}): set sessions.a2a_tasks_max_mb "
                "(and sessions.auto_prune: true); `hermes api` then prunes finished tasks in the background")
    else:
        return []
    owners = {o: n for o, n in bytes_by_owner(path).items() if o}
    if owners:
        who, n = max(owners.items(), key=lambda kv: kv[1])
        text += (f"; the biggest caller is {who} with {n / 1048576:.0f} MB (its own cap: sessions.a2a_tasks_by_caller."
                 f"{who.removeprefix('api:')}.max_mb, or sessions.a2a_tasks_max_mb_per_caller for every caller)")
    return [Finding("warn", text)]


def check_sandbox(settings: Settings) -> list[Finding]:
    """The OS sandbox of local commands: which mechanism works here, or why none does."""
    if settings.cfg.terminal.backend != "local":
        return []
    from hermes_agent.terminal.sandbox.launcher import choose_mechanism
    from hermes_agent.terminal.sandbox.spec import SandboxSpec

    mode = settings.cfg.sandbox.mode
    if mode == "off":
        return [Finding("warn", "sandbox.mode is off: local commands run unconfined (only the approval rules "
                                "stand between the model and your files)")]
    mechanism, why = choose_mechanism(SandboxSpec(mode=mode, mechanism=settings.cfg.sandbox.mechanism))
    extra = [_sandbox_env(settings), _sandbox_home(settings), *_sandbox_git(settings), _sandbox_reads(settings), _sandbox_net(settings, mechanism),
             _peer_check()]
    if mechanism is None:
        return [Finding("warn", f"no OS sandbox for local commands: {why}; every command needs a person's yes "
                                "for that one call (--yolo and approvals.mode: off do not cover it; chat -q without "
                                "a terminal refuses them) (apt-get install bubblewrap)"), *extra]
    tmp = "shared /tmp" if settings.cfg.sandbox.shared_tmp else "private /tmp"
    if mechanism == "landlock":
        from hermes_agent.terminal.sandbox.launcher import landlock_binds_work, landlock_pidns_works

        if landlock_pidns_works():  # a pid namespace, /proc and read-only carve-outs of the session's own (root, or
            # a normal user in a user namespace of the launcher's own)
            return [Finding("ok", f"sandbox {mode} (landlock, {tmp}, own pid namespace and /proc)"), *extra]
        from hermes_agent.terminal.sandbox.landlock import abi_version

        hooks = "" if landlock_binds_work() else " and .git/hooks plants are only put back after each command"
        signals = "" if abi_version() >= 6 else "; they can signal your other processes (Landlock ABI < 6)"
        return [Finding("warn", f"sandbox {mode} (landlock, {tmp}); landlock without a pid namespace (no user "
                                "namespaces for you here): other processes' command lines (hermes's too) are visible "
                                f"to commands (a password in an argv leaks){signals}{hooks}; install bubblewrap"),
                *extra]
    return [Finding("ok", f"sandbox {mode} ({mechanism}, {tmp})"), *extra]


def _sandbox_net(settings: Settings, mechanism: str | None) -> Finding:
    """What a confined command can reach over the network (terminal/sandbox/netns.py)."""
    from hermes_agent.terminal.sandbox import netns

    sb = settings.cfg.sandbox
    if not sb.network:
        return Finding("ok", "network: off (commands reach only their own loopback)")
    granted = ", ".join(str(p) for p in sb.loopback_ports) or "none (sandbox.loopback_ports)"
    problem = netns.forwarder_problem()
    if problem is None and mechanism == "landlock":
        from hermes_agent.terminal.sandbox.launcher import landlock_netns_works

        if not landlock_netns_works():
            problem = "landlock cannot give commands a network namespace here: no user namespaces (install bubblewrap)"
    if problem is None and mechanism in ("bwrap", "landlock"):
        return Finding("ok", f"network: commands, MCP stdio servers and the browser have their own namespace "
                             f"(slirp4netns): the internet and their own loopback are reachable, your loopback "
                             f"services and the cloud metadata address (169.254.0.0/16) are not; granted host "
                             f"loopback ports: {granted}; bytes a command receives mark the conversation untrusted")
    open_ports = ", ".join(f"127.0.0.1:{p}" for p in netns.host_loopback_ports()[:12]) or "none right now"
    return Finding("warn", f"network: commands, MCP stdio servers and the browser share this host's network, "
                           f"loopback and cloud metadata included ({problem}); local services they can reach: "
                           f"{open_ports}; every command counts as untrusted content (memory and skill writes "
                           "after it need your yes)")


def _peer_check() -> Finding:
    """Can a keyless hermes api / the dashboard tell a sandboxed client from the user's (terminal/sandbox/peer.py)?"""
    from hermes_agent.terminal.sandbox.peer import self_test

    why = self_test()
    if why is None:
        return Finding("ok", "loopback services: a keyless hermes api and the dashboard refuse sandboxed clients")
    return Finding("warn", f"loopback services cannot identify their clients here ({why}): a keyless hermes api "
                           "and the dashboard refuse every client; set API_SERVER_KEY")


def _sandbox_reads(settings: Settings) -> Finding:
    """What a confined command may read outside HOME (an allowlist: terminal/sandbox/readable.py)."""
    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.terminal.sandbox.readable import describe

    return Finding("ok", describe(policy_for_settings(settings)))


def _sandbox_home(settings: Settings) -> Finding:
    """What a confined command and the file tools may read in HOME (default-deny: terminal/sandbox/views.py)."""
    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.terminal.sandbox.views import describe_home

    return Finding("ok", describe_home(policy_for_settings(settings)))


def _sandbox_git(settings: Settings) -> list[Finding]:
    """What the sandbox's copy of the global git config leaves out (terminal/sandbox/gitglobal.py), and which
    settings files inside the readable tool folders are hidden (approval/toolsecrets.py), once each."""
    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.approval.toolsecrets import hidden_in_trees, truncated
    from hermes_agent.terminal.sandbox.gitglobal import left_out

    home = os.path.realpath(os.path.expanduser("~"))
    names, out = left_out(home), []
    if names:
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        out.append(Finding("ok", f"git config: commands see a copy of your global git config without {shown} "
                                 "(credentials, shell aliases, values shaped like a token or password, settings that "
                                 "run programs); to let them read the original, add ~/.gitconfig to "
                                 "sandbox.readable_paths"))
    policy = policy_for_settings(settings)
    hidden = hidden_in_trees(policy.tool_trees, policy.readable_grants)
    if hidden:
        shown = ", ".join(p.replace(home, "~", 1) for p in hidden[:6]) + (" ..." if len(hidden) > 6 else "")
        cut = f"; not walked to the end (deeper files not hidden): {', '.join(truncated())}" if truncated() else ""
        out.append(Finding("ok", f"tool folders: {len(hidden)} settings or credential files inside them are hidden "
                                 f"from commands and file tools ({shown}){cut}; a tool that needs one: add it to "
                                 "sandbox.readable_paths"))
    return out


def _sandbox_env(settings: Settings) -> Finding:
    """What a confined command's environment holds: the allowlist plus terminal.env_passthrough."""
    from hermes_agent.terminal.sandbox.envallow import describe

    passthrough = list(settings.cfg.terminal.env_passthrough)
    kept, dropped = describe(os.environ, passthrough)
    extra = f"; passed through: {', '.join(passthrough)}" if passthrough else ""
    return Finding("ok", f"commands' environment: {', '.join(kept) or '(none)'}{extra} "
                         f"({len(dropped)} other variables dropped; add names to terminal.env_passthrough)")


def check_mcp(settings: Settings) -> list[Finding]:
    """How each configured MCP server runs: confined (and what it may write), unconfined, or refused."""
    if not settings.cfg.mcp_servers:
        return []
    from dataclasses import asdict

    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.tools.mcp.config import parse_servers
    from hermes_agent.tools.mcp.confine import confine, trust_line

    servers, errors = parse_servers(settings.cfg.mcp_servers, settings.env)
    out = [Finding("fail", f"MCP server {name}: {err}") for name, err in errors.items()]
    policy, sandbox = policy_for_settings(settings), asdict(settings.cfg.sandbox)
    for cfg in servers:
        if not cfg.enabled:
            continue
        if cfg.transport == "http":
            out.append(Finding("info", f"MCP server {cfg.name}: remote ({cfg.url}), no local process; {trust_line(cfg)}"))
            continue
        conf = confine(cfg, policy, sandbox, create=False)
        level = "fail" if conf.error else "warn" if conf.spec is None else "ok"
        out.append(Finding(level, f"MCP server {cfg.name}: {conf.describe()}; {trust_line(cfg)}"))
    return out
