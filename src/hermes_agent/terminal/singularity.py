"""SingularityBackend: each call runs `apptainer exec IMAGE bash -c ...` (or `singularity exec`);
the host's /tmp and cwd are visible inside, so state and file primitives work as for local."""

from __future__ import annotations

import subprocess

from hermes_agent import paths
from hermes_agent.errors import HermesError
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.shell import shell_argv

_BINARIES = ("apptainer", "singularity")


def singularity_binary() -> str | None:
    """Path of apptainer (preferred) or singularity, or None when neither is installed."""
    for name in _BINARIES:
        if path := paths.trusted_which(name):
            return path
    return None


def singularity_problem(image: str) -> str | None:
    """Why the singularity backend cannot run here, or None when it can."""
    if singularity_binary() is None:
        return "neither `apptainer` nor `singularity` is installed"
    if not image:
        return "terminal.singularity_image is not set"
    return None


class SingularityBackend(LocalBackend):
    """Commands inside an Apptainer/Singularity image; processes stay local (so timeouts and
    process-group kills behave as for local), only the root filesystem differs."""

    kind = "singularity"
    isolated = False

    def __init__(self, image: str, *, binds: list[str] | tuple[str, ...] = (), **kw: object) -> None:
        problem = singularity_problem(image)
        if problem:
            raise HermesError(f"singularity backend: {problem}")
        super().__init__(**kw)  # type: ignore[arg-type]
        self.image = image
        self._binary = singularity_binary() or "apptainer"
        self._binds = list(binds)
        self._inner_shell: str | None = None

    def _bash(self) -> str:
        """`bash` when the image has it, else `sh` (checked once)."""
        if self._inner_shell is None:
            try:
                proc = subprocess.run([self._binary, "exec", self.image, "sh", "-c", "command -v bash"],
                                      capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
                self._inner_shell = "bash" if proc.returncode == 0 and proc.stdout.strip() else "sh"
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise HermesError(f"singularity backend: cannot run {self.image}: {exc}") from exc
        return self._inner_shell

    def _argv(self, body: str) -> list[str]:
        binds = [arg for b in self._binds for arg in ("--bind", b)]
        return [self._binary, "exec", *binds, self.image, *shell_argv(self._bash()), body]
