"""Parse the `mcp_servers:` config section into ServerConfig values and build tool names.

Pure data: no `mcp` import, no process or socket here."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from hermes_agent import lazyre

DEFAULT_CALL_TIMEOUT_S = 60.0
DEFAULT_CONNECT_TIMEOUT_S = 30.0
APPROVAL_MODES = ("ask", "never")
MAX_TOOL_NAME = 64  # what OpenAI-compatible endpoints accept
_UNSAFE = lazyre.compile(r"[^A-Za-z0-9_-]")
_VAR = lazyre.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class ServerSandbox:
    """`mcp_servers.NAME.sandbox`: `false` runs a stdio server unconfined (doctor warns); a mapping grants
    more than the default (workspace + a private state dir writable, secrets hidden)."""

    enabled: bool = True
    writable_paths: tuple[str, ...] = ()
    readable_paths: tuple[str, ...] = ()
    network: bool | None = None  # None: the global sandbox.network
    loopback_ports: tuple[int, ...] = ()  # the host's 127.0.0.1 ports it may reach, with sandbox.loopback_ports


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One MCP server: stdio (`command`) or streamable HTTP (`url`)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_CALL_TIMEOUT_S
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S
    enabled: bool = True
    approval: str = "never"  # "ask": every call of this server's tools goes to the approval gate
    sandbox: ServerSandbox = ServerSandbox()
    trusted: bool = False  # True: the user vouches for its results (they do not taint the conversation)
    # path -> "sha256:HEX": files of an unconfined server in places sandboxed commands write, vouched by content
    pin: Mapping[str, str] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """What to show a user: the URL or the command line."""
        return self.url or " ".join((self.command, *self.args))


def sanitize(name: str) -> str:
    """Replace every character outside [A-Za-z0-9_-] by `_`."""
    return _UNSAFE.sub("_", name) or "_"


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, sanitised; long names keep a hash suffix so they stay unique."""
    name = f"mcp__{sanitize(server)}__{sanitize(tool)}"
    if len(name) <= MAX_TOOL_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - 9]}_{digest}"


def toolset_name(server: str) -> str:
    return f"mcp-{sanitize(server)}"


def _expand(value: object, env: Mapping[str, str]) -> str:
    """`${VAR}` in config strings is taken from the settings environment (unknown -> empty)."""
    return _VAR.sub(lambda m: env.get(m.group(1), ""), str(value))


def _str_map(raw: object, env: Mapping[str, str], what: str) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return {str(k): _expand(v, env) for k, v in raw.items()}
    raise ValueError(f"{what} must be a mapping")


def _seconds(raw: object, default: float, what: str) -> float:
    if raw is None:
        return default
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number of seconds") from None
    if value <= 0:
        raise ValueError(f"{what} must be positive")
    return value


_OFF = (False, "false", "no", "off", 0)
_ON = (True, "true", "yes", "on", 1)


def _paths(raw: object, what: str, env: Mapping[str, str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) and i.strip() for i in items):
        raise ValueError(f"`sandbox.{what}` must be a list of paths")
    return tuple(_expand(i.strip(), env) for i in items)


def parse_sandbox(raw: object, env: Mapping[str, str] | None = None) -> ServerSandbox:
    """`sandbox:` of one server: absent/true (default confinement), false, or a mapping of grants."""
    env = env or {}
    if raw is None or raw in _ON:
        return ServerSandbox()
    if raw in _OFF:
        return ServerSandbox(enabled=False)
    if not isinstance(raw, Mapping):
        raise ValueError("`sandbox` must be false or a mapping (writable_paths, readable_paths, network, "
                         "loopback_ports)")
    unknown = set(map(str, raw)) - {"writable_paths", "readable_paths", "network", "loopback_ports"}
    if unknown:
        raise ValueError(f"`sandbox` has unknown keys: {', '.join(sorted(unknown))}")
    net = raw.get("network")
    if net is not None and net not in _ON and net not in _OFF:
        raise ValueError("`sandbox.network` must be on or off")
    ports = raw.get("loopback_ports") or []
    if not isinstance(ports, list | tuple) or not all(isinstance(p, int) and 0 < p < 65536 for p in ports):
        raise ValueError("`sandbox.loopback_ports` must be a list of TCP port numbers")
    return ServerSandbox(writable_paths=_paths(raw.get("writable_paths"), "writable_paths", env),
                         readable_paths=_paths(raw.get("readable_paths"), "readable_paths", env),
                         network=None if net is None else net in _ON, loopback_ports=tuple(ports))


def parse_server(name: str, raw: object, env: Mapping[str, str] | None = None) -> ServerConfig:
    """One entry of `mcp_servers`; raises ValueError with a one-line reason."""
    env = env or {}
    if not isinstance(raw, Mapping):
        raise ValueError("expected a mapping with `command` or `url`")
    command, url = str(raw.get("command") or "").strip(), str(raw.get("url") or "").strip()
    if bool(command) == bool(url):
        raise ValueError("set exactly one of `command` (stdio) or `url` (streamable HTTP)")
    args = raw.get("args") or []
    if not isinstance(args, list | tuple):
        raise ValueError("`args` must be a list")
    if url and not url.startswith(("http://", "https://")):
        raise ValueError("`url` must start with http:// or https://")
    cwd = raw.get("cwd")
    approval = str(raw.get("approval") or "never").strip().lower()
    if approval not in APPROVAL_MODES:
        raise ValueError(f"`approval` must be one of {', '.join(APPROVAL_MODES)}")
    return ServerConfig(
        name=name,
        command=_expand(command, env),
        args=tuple(_expand(a, env) for a in args),
        env=_str_map(raw.get("env"), env, "`env`"),
        cwd=_expand(cwd, env) if cwd else None,
        url=_expand(url, env),
        headers=_str_map(raw.get("headers"), env, "`headers`"),
        timeout=_seconds(raw.get("timeout"), DEFAULT_CALL_TIMEOUT_S, "`timeout`"),
        connect_timeout=_seconds(raw.get("connect_timeout"), DEFAULT_CONNECT_TIMEOUT_S, "`connect_timeout`"),
        enabled=raw.get("enabled", True) not in (False, "false", "no", "off", 0),
        approval=approval,
        sandbox=parse_sandbox(raw.get("sandbox"), env),
        trusted=_flag(raw.get("trusted", False), "`trusted`"),
        pin=_pins(raw.get("pin"), env),
    )


def _pins(raw: object, env: Mapping[str, str]) -> dict[str, str]:
    """`pin: {PATH: sha256:HEX}` (tools/mcp/pins.py)."""
    pins = _str_map(raw, env, "`pin`")
    for path, value in pins.items():
        hexpart = value.removeprefix("sha256:")
        if not value.startswith("sha256:") or len(hexpart) != 64 or any(c not in "0123456789abcdef" for c in hexpart):
            raise ValueError(f"`pin` of {path} must be sha256:<64 lowercase hex digits>")
    return pins


def _flag(raw: object, what: str) -> bool:
    if raw in _ON or raw in _OFF:
        return raw in _ON
    raise ValueError(f"{what} must be true or false")


def parse_servers(section: object, env: Mapping[str, str] | None = None) -> tuple[list[ServerConfig], dict[str, str]]:
    """All servers of `mcp_servers` (enabled or not) and name -> error for broken entries."""
    if not section:
        return [], {}
    if not isinstance(section, Mapping):
        return [], {"mcp_servers": "must be a mapping of server name to settings"}
    servers: list[ServerConfig] = []
    errors: dict[str, str] = {}
    for name, raw in section.items():
        try:
            servers.append(parse_server(str(name), raw, env))
        except ValueError as exc:
            errors[str(name)] = str(exc)
    return servers, errors


def missing_command(cfg: ServerConfig) -> str:
    """Why a stdio server cannot start because its program is not there ("" when it is, or for HTTP): looked up
    on the server's own `env: PATH` or the user's PATH, as the sandbox will. Pure lookup: nothing is started."""
    if cfg.transport != "stdio" or not cfg.command:
        return ""
    import os
    import shutil

    from hermes_agent import paths

    path = cfg.env.get("PATH") or paths.user_path()
    found = shutil.which(cfg.command, path=path) if os.sep not in cfg.command else (
        cfg.command if os.access(os.path.expanduser(cfg.command), os.X_OK) else None)
    return "" if found else f"command not found: {cfg.command}"


def startable(section: object, env: Mapping[str, str] | None = None) -> tuple[list[ServerConfig], dict[str, str]]:
    """The enabled servers worth starting, and name -> why for each entry left out (broken, or its command
    missing): what a run checks before it loads anything of MCP, so a server that cannot start costs nothing."""
    servers, errors = parse_servers(section, env)
    keep = []
    for cfg in servers:
        if not cfg.enabled:
            continue
        why = missing_command(cfg)
        if why:
            errors[cfg.name] = why
        else:
            keep.append(cfg)
    return keep, errors
