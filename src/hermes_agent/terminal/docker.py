"""DockerBackend: one long-lived container per task (`docker run -d`, network off unless asked),
each command through `docker exec`; file primitives through exec as well."""

from __future__ import annotations

import os
import subprocess

from hermes_agent import paths
from hermes_agent.errors import HermesError
from hermes_agent.terminal.remote import RemoteShellBackend
from hermes_agent.terminal.shell import new_call_id

_WORKSPACE = "/workspace"


def docker_problem(docker: str = "docker", env: dict[str, str] | None = None) -> str | None:
    """Why the docker backend cannot run here (no CLI, daemon unreachable), or None when it can."""
    if paths.trusted_which(docker) is None:
        return f"the `{docker}` CLI is not installed (install Docker or choose terminal.backend: local)"
    try:
        proc = subprocess.run([docker, "version", "--format", "{{.Server.Version}}"], capture_output=True,
                              text=True, timeout=20, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run `{docker} version`: {exc}"
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["daemon unreachable"])[-1]
        return f"the Docker daemon is not reachable: {detail}"
    return None


class DockerBackend(RemoteShellBackend):
    """Commands run inside a container started on first use and removed by `close()`.
    `isolated` is True unless host directories are mounted into it."""

    kind = "docker"

    def __init__(self, image: str, *, task_id: str = "default", volumes: list[str] | tuple[str, ...] = (),
                 mount_cwd: str | None = None, network: bool = False, cpus: float | None = 1,
                 memory_mb: int | None = 5120, cwd: str | None = None, timeout: float = 180.0,
                 env: dict[str, str] | None = None, docker: str = "docker",
                 extra_args: list[str] | tuple[str, ...] = (), output_limit: int = 2_000_000,
                 source_rc: bool = True) -> None:
        super().__init__(cwd=cwd or (_WORKSPACE if mount_cwd else None), timeout=timeout,
                         output_limit=output_limit, source_rc=source_rc)
        self.image = image
        self.isolated = not volumes and not mount_cwd
        self._task_id = task_id
        self._volumes = list(volumes)
        self._mount_cwd = mount_cwd
        self._network = network
        self._cpus = cpus
        self._memory_mb = memory_mb
        self._client_env = dict(os.environ) if env is None else dict(env)
        self._docker = docker
        self._extra = list(extra_args)
        self.container: str | None = None

    def _run_argv(self, name: str) -> list[str]:
        argv = [self._docker, "run", "-d", "--init", "--name", name, "--label", "hermes-agent=1",
                "--label", f"hermes-task={self._task_id}"]
        if not self._network:
            argv += ["--network", "none"]
        if self._cpus:
            argv += ["--cpus", str(self._cpus)]
        if self._memory_mb:
            argv += ["--memory", f"{int(self._memory_mb)}m"]
        for vol in self._volumes:
            argv += ["-v", os.path.expanduser(vol)]
        if self._mount_cwd:
            argv += ["-v", f"{os.path.abspath(self._mount_cwd)}:{_WORKSPACE}", "-w", _WORKSPACE]
        # `tail -f /dev/null` keeps the container alive in any image (coreutils or busybox);
        # --init reaps the orphans that killed commands leave behind.
        return argv + self._extra + [self.image, "tail", "-f", "/dev/null"]

    def _prepare(self) -> None:
        if self.container is not None:
            return
        with self._lock:
            if self.container is not None:
                return
            found = paths.trusted_which(self._docker)
            if found is None:
                raise HermesError(f"docker backend: {docker_problem(self._docker, self._client_env)}")
            self._docker = found
            safe_task = "".join(c if c.isalnum() or c in "-_." else "-" for c in self._task_id)[:40]
            name = f"hermes-{safe_task}-{new_call_id()}"
            try:
                proc = subprocess.run(self._run_argv(name), capture_output=True, text=True, timeout=300,
                                      env=self._client_env, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise HermesError(f"docker backend: cannot start a container from {self.image}: {exc}") from exc
            if proc.returncode != 0:
                detail = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
                raise HermesError(f"docker backend: cannot start a container from {self.image}: {detail}")
            self.container = proc.stdout.strip() or name

    def _client_argv(self, script: str, stdin: bool) -> list[str]:
        return [self._docker, "exec", *(["-i"] if stdin else []), self.container or "", "sh", "-c", script]

    def _client_failed(self, code: int, stderr: str) -> str | None:
        if code in (125, 126, 127) or "Error response from daemon" in stderr:
            return f"docker exec failed ({code}): {stderr.strip() or 'no detail'}"
        return None

    def close(self) -> None:
        """Remove the container (and everything started in it)."""
        name, self.container = self.container, None
        if name:
            try:
                subprocess.run([self._docker, "rm", "-f", name], capture_output=True, timeout=60,
                               env=self._client_env, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                pass
