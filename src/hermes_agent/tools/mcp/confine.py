"""Confinement of one stdio MCP server: the OS sandbox spec, environment and working directory it runs with.

Default: the session's sandbox with the writable set narrowed to the workspace plus a private state
directory (~/.cache/hermes/mcp/<name>-<profile>, shared by every instance: package caches) and a temp directory
of this instance only (~/.cache/hermes/mcp-run/<name>-<profile>-XXXX, made fresh by hermes in a folder no sandbox
can write, removed when the server stops: its TMPDIR and, under bwrap, its /tmp; red-team round 6 a10),
secrets hidden as for commands, the environment by the commands' allowlist (terminal/sandbox/envallow.py) plus
the server's own `env:`. `mcp_servers.NAME.sandbox` grants more
(writable_paths, readable_paths, network) or turns it off (`false`). Pure apart from mkdir."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, replace

from hermes_agent import paths
from hermes_agent.approval.policy import PathPolicy, resolve
from hermes_agent.terminal.sandbox.envallow import allowed_env
from hermes_agent.terminal.sandbox.spec import SandboxSpec, spec_from_policy
from hermes_agent.tools.mcp.config import ServerConfig, sanitize


@dataclass(frozen=True, slots=True)
class Confinement:
    """How one server is started: `spec` None means unconfined (`why` says why); `error` refuses the start."""

    spec: SandboxSpec | None
    env: dict[str, str]
    cwd: str | None
    state_dir: str = ""
    why: str = ""
    error: str = ""
    writable: tuple[str, ...] = ()  # as configured (the spec keeps only the ones that exist)
    tmp: str = ""  # this instance's own temp directory (hermes removes it when the server stops)
    command: str = ""  # the program to start when it is not cfg.command (an unconfined server's, resolved)
    args: tuple[str, ...] | None = None  # the arguments when not cfg.args (a pinned script's copy: pins.py)

    def describe(self) -> str:
        """One line for `hermes doctor` / `hermes mcp test`."""
        if self.error:
            return self.error
        if self.spec is None:
            return f"unconfined ({self.why})" + (f"; starts in {self.cwd}" if self.cwd else "")
        roots = ", ".join(w + ("" if os.path.exists(w) or w == self.state_dir else " (missing)")
                          for w in self.writable or self.spec.writable)
        return f"confined ({self.why}): writes only {roots}; secrets hidden; network {self._network()}"

    def _network(self) -> str:
        from hermes_agent.terminal.sandbox.wrapped import own_network

        assert self.spec is not None
        if not self.spec.network:
            return "off"
        if not own_network(self.spec, self.why):
            return "on (the host's network: your loopback services are reachable)"
        ports = ", ".join(map(str, self.spec.loopback_ports))
        return "on (own namespace: your loopback services are not reachable" + (
            f"; granted host loopback ports: {ports})" if ports else ")")


def state_dir_for(name: str, home: str, hermes_home: str) -> str:
    """The server's private state/cache directory, ~/.cache/hermes/mcp/<name>-<profile hash> (its TMPDIR).
    Not under $HERMES_HOME: the sandbox re-binds that read-only or hides it, which would cover this one."""
    profile = hashlib.sha1(os.path.realpath(hermes_home).encode()).hexdigest()[:6]
    return os.path.join(os.path.realpath(home), ".cache", "hermes", "mcp", f"{sanitize(name)}-{profile}")


def make_private(path: str) -> str:
    """Create `path` (mode 700) one component at a time below ~/.cache, never following a symlink: the
    server can write inside it, so hermes must never follow a link planted there ("" when fine, else why)."""
    cache = path[:path.index("/.cache/") + len("/.cache")]
    current = cache
    try:
        os.makedirs(cache, exist_ok=True)
        for part in path[len(cache) + 1:].split("/"):
            current = os.path.join(current, part)
            try:
                os.mkdir(current, 0o700)
            except FileExistsError:
                pass
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return f"its state directory {current} is not a plain directory (a symlink?); remove it"
    except OSError as exc:
        return f"cannot create its state directory {current}: {exc.strerror or exc}"
    return ""


def instance_tmp(state: str) -> tuple[str, str]:
    """(a fresh temp directory for one instance of the server of state dir `state`, error). It lives in
    ~/.cache/hermes/mcp-run, which no sandbox can write: another instance (another session's) cannot swap it for
    a symlink between this check and the sandbox's rule, and a link left in the shared state dir stops nothing."""
    import tempfile

    run = os.path.join(os.path.dirname(os.path.dirname(state)), "mcp-run")
    problem = make_private(run)
    if problem:
        return "", problem
    try:
        return tempfile.mkdtemp(prefix=os.path.basename(state) + "-", dir=run), ""
    except OSError as exc:
        return "", f"cannot create its temp directory in {run}: {exc.strerror or exc}"


def remove_tmp(path: str) -> None:
    """Remove an instance's temp directory (shutil.rmtree works by fd: a link inside is removed, not followed)."""
    import shutil

    if path:
        shutil.rmtree(path, ignore_errors=True)


def server_env(cfg: ServerConfig, environ: Mapping[str, str], tmpdir: str | None, state: str = "") -> dict[str, str]:
    """The variables of `environ` a confined command gets (terminal/sandbox/envallow.py: the same allowlist,
    whatever the name of the rest; HERMES_HOME too), TMPDIR, then the server's own `env:` on top."""
    env = allowed_env(environ)
    env.pop("HERMES_HOME", None)  # commands may run `hermes`; a third-party server is not told where it lives
    if tmpdir:  # package runners (npx, uvx, pip) cache inside the private state dir, the one place they may write
        state = state or os.path.dirname(tmpdir)
        env.update(TMPDIR=tmpdir, XDG_CACHE_HOME=os.path.join(state, "cache"),
                   npm_config_cache=os.path.join(state, "npm"), UV_CACHE_DIR=os.path.join(state, "uv"),
                   PIP_CACHE_DIR=os.path.join(state, "pip"))
        from hermes_agent.terminal.sandbox.hardlinks import COPY_ENV

        env.update(COPY_ENV)  # no new hard links into the user's package stores
    env.update(cfg.env)
    return env


def _narrowed(policy: PathPolicy, cfg: ServerConfig, state_dir: str) -> PathPolicy:
    """The session policy with writes limited to the workspace, the state dir and the server's grants."""
    ws = policy.workspace[0] if policy.workspace else None
    grants = tuple(resolve(p, ws, policy.home) for p in cfg.sandbox.writable_paths)
    readable = tuple(resolve(p, ws, policy.home) for p in cfg.sandbox.readable_paths)
    secrets = tuple(s for s in policy.secrets
                    if not any(_related(s, r) for r in (*readable, *policy.readable_grants)))
    writable = tuple(dict.fromkeys((*policy.workspace, os.path.realpath(state_dir), *grants)))
    code = _server_code(policy, cfg)
    return replace(policy, writable=writable, secrets=secrets, readable_grants=(*policy.readable_grants, *readable),
                   readable=(*policy.readable, *code))


def _server_code(policy: PathPolicy, cfg: ServerConfig) -> tuple[str, ...]:
    """The server's own program and files (the command and the paths among its arguments, readable_paths
    aside): reads outside HOME are an allowlist (terminal/sandbox/readable.py), and the user named these.
    Not inside a Hermes home (it keeps its own rules), nor HOME itself, another user's home or their dot-entries
    (a program in a plain folder of one — ~/tools/server.py under a default-deny HOME, a clone in /root while
    HOME is elsewhere — is granted)."""
    from hermes_agent.terminal.sandbox.readable import program_paths, under

    found = program_paths((cfg.command, *cfg.args), policy.writable)
    return tuple(p for p in found if not any(under(p, h) or under(h, p) for h in policy.hermes_roots if h)
                 and not any(_dotted_in(p, f) for f in (policy.home, *policy.foreign_homes) if f))


def _dotted_in(path: str, home: str) -> bool:
    """`path` is another home, holds one, or lies in one of its dot-entries (where credentials live): not granted.
    A server's program in a plain folder of such a home (a clone in /root while HOME is elsewhere) is."""
    if path == home or home.startswith(path.rstrip("/") + "/"):
        return True
    if not path.startswith(home.rstrip("/") + "/"):
        return False
    return any(part.startswith(".") for part in path[len(home.rstrip("/")) + 1:].split("/"))


def _related(secret: str, grant: str) -> bool:
    """A granted path inside a hidden one (or the reverse) un-hides that entry."""
    def under(a: str, b: str) -> bool:
        return a == b or a.startswith(b.rstrip("/") + "/")
    return under(grant, secret) or under(secret, grant)


def confine(cfg: ServerConfig, policy: PathPolicy | None, sandbox: Mapping | None,
            environ: Mapping[str, str] | None = None, *, create: bool = True) -> Confinement:
    """The confinement of stdio server `cfg` under the session `policy` and the `sandbox:` settings
    (mode, network, mechanism). Refuses (error) when a sandbox is wanted and none works here."""
    from hermes_agent.terminal.sandbox.launcher import choose_mechanism

    environ = paths.user_environ() if environ is None else environ
    sb = dict(sandbox or {})
    cwd = os.path.expanduser(cfg.cwd) if cfg.cwd else (policy.workspace[0] if policy and policy.workspace else None)
    if policy is not None:  # the places sandboxed commands write: never where an unconfined server comes from
        paths.distrust_writable(*(p for p in policy.writable if os.path.exists(p)))
    if not cfg.sandbox.enabled:
        return _outside(cfg, environ, cwd, f"mcp_servers.{cfg.name}.sandbox is false", create)
    if policy is None or str(sb.get("mode") or "workspace-write") == "off":
        return _outside(cfg, environ, cwd, "sandbox.mode is off", create)
    state = state_dir_for(cfg.name, policy.home, policy.hermes_home)
    problem = make_private(state) if create else ""
    tmp, problem = instance_tmp(state) if create and not problem else (os.path.join(state, "tmp"), problem)
    if problem:
        return Confinement(None, {}, cwd, state, error=f"not started: {problem}")
    network = sb.get("network", True) if cfg.sandbox.network is None else cfg.sandbox.network
    narrowed = _narrowed(policy, cfg, state)
    ports = (*(sb.get("loopback_ports") or ()), *cfg.sandbox.loopback_ports)  # its own network namespace
    spec = spec_from_policy(narrowed, network=network, mechanism=str(sb.get("mechanism") or "auto"),
                            mode=str(sb.get("mode") or ""), loopback_ports=ports)
    mechanism, why = choose_mechanism(spec)
    env = server_env(cfg, environ, tmp, state)
    if mechanism is None:
        if create:
            remove_tmp(tmp)
        return Confinement(spec, env, cwd, state, writable=narrowed.writable, error=(
            f"not started: no OS sandbox works here ({why}); set mcp_servers.{cfg.name}.sandbox: false "
            "to run it unconfined"))
    if mechanism == "landlock" and spec.git_config_global:  # no bind: the credential-free copy by name
        env["GIT_CONFIG_GLOBAL"] = spec.git_config_global
    if spec.mode == "read-only":  # the server still needs its own state dir
        spec = spec.with_writable(state)
    spec = spec.with_private_tmp(tmp)  # /tmp inside is its own (bwrap); TMPDIR names it either way
    return Confinement(spec, env, cwd, state, why=mechanism, writable=narrowed.writable, tmp=tmp if create else "")


def _outside(cfg: ServerConfig, environ: Mapping[str, str], cwd: str | None, why: str,
             create: bool = True) -> Confinement:
    """An unconfined server: its program and its PATH come from where no sandbox writes (paths.trusted_which):
    a `python3` a command planted in an activated project venv is not what runs outside (red-team round 9
    a29). A command given as a path, and the files its arguments name, pass the same rule unless the user
    pinned their content (pins.py); a pinned script runs from hermes's copy of its directory."""
    from hermes_agent.tools.mcp import launch, pins

    env = server_env(cfg, environ, None)
    env["PATH"] = paths.trusted_path(env.get("PATH") or paths.user_path())
    env.update(pins.safe_path_env(cfg, cwd))
    found = cfg.command if os.sep in cfg.command else paths.trusted_which(cfg.command)
    if found is None:
        return Confinement(None, env, cwd, why=why, error=(
            f"not started: no `{cfg.command}` on PATH outside the places sandboxed commands can write"))
    start, problem = launch.start_dir(cfg, cwd)  # never the workspace (rt12 a45, a48, a49)
    planned = pins.Plan(problem) if problem else pins.plan(cfg, cwd, cfg.command, create=create, env=env,
                                                           start=start)
    if planned.error:
        return Confinement(None, env, cwd, why=why, error=planned.error)
    env = planned.env if planned.env is not None else env
    command = planned.command or ("" if found == cfg.command else found)
    args = planned.args if planned.args is not None else cfg.args
    if cwd and start != os.path.abspath(cwd):  # the files it names (checked by pins.plan) stay the same files
        args = tuple(launch.absolute(a, cwd) for a in args)
        command = command or launch.absolute(cfg.command, cwd, program=True)
        command = "" if command == cfg.command else command
    return Confinement(None, env, start, why=why, command=command, args=args)


def trust_line(cfg: ServerConfig) -> str:
    """How the server's results count for provenance (tools/provenance.py), for doctor and `hermes mcp test`."""
    if cfg.trusted:
        return f"results trusted (mcp_servers.{cfg.name}.trusted: true)"
    return (f"results and tool descriptions count as untrusted content: once its tools are offered to the model, "
            f"memory, skill, context-file and config writes need approval "
            f"(mcp_servers.{cfg.name}.trusted: true if you vouch for the server)")


def unconfined(cfg: ServerConfig) -> Confinement:
    """No session policy was given (library use, unit tests): allowlisted env, no OS sandbox."""
    return Confinement(None, server_env(cfg, paths.user_environ(), None), os.path.expanduser(cfg.cwd) if cfg.cwd else None,
                       why="started without a session sandbox")
