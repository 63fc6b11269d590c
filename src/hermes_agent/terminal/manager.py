"""BackendPool: one terminal backend per task, of the kind `terminal.backend` names; the only
place that maps config keys onto backend constructors."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.terminal.base import TerminalBackend

BACKENDS = ("local", "docker", "ssh", "singularity", "modal", "daytona")


def _cwd_setting(settings: Settings) -> str | None:
    from hermes_agent import paths

    return paths.work_root(settings.cfg.terminal.cwd, str(settings.home), "terminal.cwd" in settings.chosen)


def _remote_cwd(settings: Settings, default: str | None = None) -> str | None:
    """terminal.cwd for a remote machine: an explicit absolute path, else the backend's default."""
    raw = settings.cfg.terminal.cwd
    return raw if raw.startswith("/") else default


def _client_env(settings: Settings) -> dict[str, str]:
    """Environment for docker/ssh client processes: the process env plus DOCKER_* from settings."""
    env = dict(os.environ)
    env.update({k: v for k, v in settings.env.items() if k.startswith("DOCKER_")})
    return env


def _source_rc(settings: Settings) -> bool:
    return settings.cfg.terminal.auto_source_bashrc


def _local(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.local import LocalBackend
    from hermes_agent.terminal.runfile import run_record

    return LocalBackend(_cwd_setting(settings), timeout=settings.cfg.terminal.timeout,
                        env_passthrough=list(settings.cfg.terminal.env_passthrough),
                        source_rc=_source_rc(settings), record=run_record(), **opts)


def _local_opts(settings: Settings, policy: object | None, notice: Callable[[str], None] | None) -> dict:
    """Sandbox spec (from the session's path policy) and the secret variable names to strip."""
    from hermes_agent.config.loader import read_env_file
    from hermes_agent.terminal.sandbox.spec import secret_env_names, spec_from_policy

    sb = settings.cfg.sandbox
    spec = None if policy is None else spec_from_policy(
        policy, network=sb.network, mechanism=sb.mechanism, sockets=sb.sockets,  # type: ignore[arg-type]
        loopback_ports=sb.loopback_ports)
    strip = secret_env_names(read_env_file(settings.home / ".env"), settings.data, os.environ)
    if spec is not None and not spec.enabled:  # the user's own choice: said once, then the rules alone judge
        from hermes_agent.terminal.sandbox.runner import notice_once

        notice_once("hermes: sandbox.mode is off (your config): local commands run unconfined, only the "
                    "approval rules stand between the model and your files", notice)
    if spec is not None and spec.home_workspace:
        from hermes_agent.terminal.sandbox.runner import notice_once

        notice_once("hermes: the workspace is your home directory: commands may change your ordinary files "
                    "there, but not dot-files, start-up files or new entries at its top (use a project "
                    "folder as the workspace)", notice)
    if spec is not None and spec.note:
        from hermes_agent.terminal.sandbox.runner import notice_once

        notice_once(spec.note, notice)
    return {"sandbox": spec, "env_strip": strip, "notice": notice}


def _docker(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.docker import DockerBackend, docker_problem

    env = _client_env(settings)
    problem = docker_problem(env=env)
    if problem:
        raise HermesError(f"terminal.backend is docker but {problem}")
    t = settings.cfg.terminal
    mount = _cwd_setting(settings) if t.docker_mount_cwd_to_workspace else None
    return DockerBackend(
        t.docker_image, task_id=task_id,
        volumes=list(t.docker_volumes), mount_cwd=mount, network=t.docker_network,
        cpus=t.container_cpu, memory_mb=t.container_memory,
        cwd=_remote_cwd(settings), timeout=t.timeout, env=env,
        extra_args=list(t.docker_extra_args), source_rc=_source_rc(settings))


def _ssh(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.ssh import SSHBackend

    t = settings.cfg.terminal
    return SSHBackend(t.ssh_host, user=t.ssh_user,
                      port=t.ssh_port, key=t.ssh_key,
                      cwd=_remote_cwd(settings), timeout=t.timeout,
                      known_hosts=str(settings.home / "ssh" / "known_hosts"), source_rc=_source_rc(settings))


def _singularity(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.singularity import SingularityBackend

    t = settings.cfg.terminal
    return SingularityBackend(t.singularity_image, cwd=_cwd_setting(settings),
                              timeout=t.timeout,
                              env_passthrough=list(t.env_passthrough), source_rc=_source_rc(settings),
                              binds=list(t.singularity_binds))


def _env(settings: Settings, name: str) -> str:
    """A credential from the process environment or $HERMES_HOME/.env (settings.env)."""
    return os.environ.get(name) or settings.env.get(name, "")


def _daytona(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.daytona import DaytonaBackend, daytona_problem

    env = {k: _env(settings, k) for k in ("DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_TARGET")}
    if problem := daytona_problem(env):
        raise HermesError(f"terminal.backend is daytona but {problem}")
    t = settings.cfg.terminal
    return DaytonaBackend(t.daytona_image, api_key=env["DAYTONA_API_KEY"], api_url=env["DAYTONA_API_URL"],
                          target=env["DAYTONA_TARGET"], task_id=task_id, cpu=t.container_cpu,
                          memory_mb=t.container_memory, disk_mb=t.container_disk,
                          cwd=_remote_cwd(settings), timeout=t.timeout, source_rc=_source_rc(settings))


def _modal(settings: Settings, task_id: str, opts: dict) -> TerminalBackend:
    from hermes_agent.terminal.modal import ModalBackend, modal_problem

    env = {k: _env(settings, k) for k in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")}
    if problem := modal_problem(env, opts.get("modal_sdk")):
        raise HermesError(f"terminal.backend is modal but {problem}")
    t = settings.cfg.terminal
    return ModalBackend(t.modal_image, task_id=task_id, cpu=t.container_cpu, memory_mb=t.container_memory,
                        disk_mb=t.container_disk, cwd=_remote_cwd(settings), timeout=t.timeout,
                        source_rc=_source_rc(settings), sdk=opts.get("modal_sdk"))


_FACTORIES: dict[str, Callable[[Settings, str, dict], TerminalBackend]] = {
    "local": _local, "docker": _docker, "ssh": _ssh, "singularity": _singularity,
    "modal": _modal, "daytona": _daytona,
}


def backend_problem(settings: Settings) -> str | None:
    """Why the configured cloud backend (daytona, modal) cannot start: the extra to install or the
    credential to set; None when it can, and for the other backends. No network."""
    kind = settings.cfg.terminal.backend
    if kind == "daytona":
        from hermes_agent.terminal.daytona import daytona_problem

        return daytona_problem({"DAYTONA_API_KEY": _env(settings, "DAYTONA_API_KEY")})
    if kind == "modal":
        from hermes_agent.terminal.modal import modal_problem

        return modal_problem({k: _env(settings, k) for k in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")})
    return None


class BackendPool:
    """Backends keyed by task id, created on first `get` and released by `close`. `policy` (the
    session's approval.policy.PathPolicy) puts every local command inside the OS sandbox. `modal_sdk`
    stands in for the `modal` module (tests)."""

    def __init__(self, settings: Settings, *, policy: object | None = None,
                 notice: Callable[[str], None] | None = None, modal_sdk: object | None = None) -> None:
        self.settings = settings
        self.kind = settings.cfg.terminal.backend
        if self.kind not in _FACTORIES:
            raise HermesError(f"unknown terminal.backend {self.kind!r} (choose one of: {', '.join(BACKENDS)})")
        # the local sandbox spec is built when the first backend is (a run that never opens one pays nothing)
        # `policy` may be a callable giving it (a session's PendingPolicy.get): asked only then
        self._make_opts: Callable[[], dict] = ((lambda: _local_opts(settings, policy() if callable(policy) else policy,
                                                                    notice)) if self.kind == "local"
                                              else (lambda: {"modal_sdk": modal_sdk}))
        self._opts: dict | None = None
        self._backends: dict[str, TerminalBackend] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, task_id: str = "default") -> TerminalBackend:
        """The backend of `task_id`, created on first use (raises HermesError when it cannot be)."""
        backend = self._backends.get(task_id)
        if backend is not None:
            return backend
        with self._lock:
            lock = self._locks.setdefault(task_id, threading.Lock())
            if self._opts is None:
                self._opts = self._make_opts()
        with lock:
            backend = self._backends.get(task_id)
            if backend is None:
                backend = self._backends[task_id] = _FACTORIES[self.kind](self.settings, task_id, self._opts)
            return backend

    def active(self) -> list[str]:
        """Task ids that currently hold a backend."""
        return sorted(self._backends)

    def close(self, task_id: str) -> None:
        """Kill the task's background processes and release its backend."""
        from hermes_agent.terminal.processes import get_manager

        get_manager().cleanup(task_id)
        with self._lock:
            backend = self._backends.pop(task_id, None)
            self._locks.pop(task_id, None)
        if backend is not None:
            backend.close()

    def close_all(self) -> None:
        """Release every backend."""
        for task_id in list(self._backends):
            self.close(task_id)


def sandboxed_local(settings: Settings, policy: object, cwd: str | None = None,
                    notice: Callable[[str], None] | None = None) -> TerminalBackend:
    """A local backend inside the OS sandbox of `policy`, whatever `terminal.backend` says (for work
    that must run on this machine: cron's no-agent scripts live in HERMES_HOME/scripts)."""
    from hermes_agent.terminal.local import LocalBackend
    from hermes_agent.terminal.runfile import run_record

    return LocalBackend(cwd, timeout=settings.cfg.terminal.timeout,
                        env_passthrough=list(settings.cfg.terminal.env_passthrough),
                        source_rc=False, record=run_record(), **_local_opts(settings, policy, notice))
