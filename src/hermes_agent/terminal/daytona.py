"""DaytonaBackend: one Daytona sandbox per task through the Daytona Python SDK (`pip install
'hermes-agent[daytona]'`), an HTTP client of DAYTONA_API_URL authenticated by DAYTONA_API_KEY.
The sandbox is created on first use (from `terminal.daytona_image`, with container_cpu/memory/disk)
and deleted by `close()`; commands go through the toolbox's process exec, files through its file API."""

from __future__ import annotations

import importlib.util
import math
import shlex

from hermes_agent.errors import HermesError
from hermes_agent.terminal.cloud import CloudShellBackend
from hermes_agent.terminal.shell import new_call_id

DEFAULT_API_URL = "https://app.daytona.io/api"
_NO_LIMIT_S = 24 * 3600


def daytona_problem(env: dict[str, str]) -> str | None:
    """Why the daytona backend cannot run (extra or key missing), or None. No network."""
    if importlib.util.find_spec("daytona") is None:
        return "the Daytona SDK is not installed: pip install 'hermes-agent[daytona]'"
    if not env.get("DAYTONA_API_KEY"):
        return "DAYTONA_API_KEY is not set (in the environment or $HERMES_HOME/.env)"
    return None


class DaytonaBackend(CloudShellBackend):
    """Commands run in a Daytona sandbox; `isolated` (nothing of the host is mounted)."""

    kind = "daytona"

    def __init__(self, image: str, *, api_key: str, api_url: str = "", target: str = "",
                 task_id: str = "default", cpu: float = 1, memory_mb: int = 5120, disk_mb: int = 10240,
                 cwd: str | None = None, timeout: float = 180.0, output_limit: int = 2_000_000,
                 source_rc: bool = True) -> None:
        super().__init__(task_id=task_id, cwd=cwd, timeout=timeout, output_limit=output_limit,
                         source_rc=source_rc)
        self.image = image
        self._api_key = api_key
        self._api_url = api_url or DEFAULT_API_URL
        self._target = target
        self._cpu = max(1, int(math.ceil(cpu or 1)))
        self._memory_gib = max(1, math.ceil((memory_mb or 1024) / 1024))
        self._disk_gib = min(10, max(1, math.ceil((disk_mb or 1024) / 1024)))  # the platform's cap
        self._client = None
        self.sandbox = None

    def _start(self) -> None:
        try:
            from daytona import CreateSandboxFromImageParams, Daytona, DaytonaConfig, DaytonaError, Resources
        except ImportError as exc:
            raise HermesError("daytona backend: the Daytona SDK is not installed: "
                              "pip install 'hermes-agent[daytona]'") from exc
        self._error = DaytonaError
        safe_task = "".join(c if c.isalnum() or c in "-_" else "-" for c in self._task_id)[:40]
        params = CreateSandboxFromImageParams(
            image=self.image, name=f"hermes-{safe_task}-{new_call_id()}", labels={"hermes_task_id": self._task_id},
            resources=Resources(cpu=self._cpu, memory=self._memory_gib, disk=self._disk_gib),
            auto_stop_interval=0)
        try:
            self._client = Daytona(DaytonaConfig(api_key=self._api_key, api_url=self._api_url,
                                                 target=self._target or None))
            self.sandbox = self._client.create(params, timeout=300)
        except (DaytonaError, OSError) as exc:
            raise HermesError(f"daytona backend: cannot create a sandbox from {self.image} "
                              f"at {self._api_url}: {exc}") from exc

    def _run(self, command: str, timeout: float | None) -> tuple[str, int]:
        # The toolbox hands the string to a shell of the sandbox's choosing: give it plain `sh -c`.
        try:
            # No timeout would mean the toolbox's default of 10 s: "no limit" is a day instead.
            res = self.sandbox.process.exec(f"sh -c {shlex.quote(command)}",
                                            timeout=_NO_LIMIT_S if timeout is None else int(timeout) + 1)
        except (self._error, OSError) as exc:
            raise HermesError(f"daytona backend: exec failed: {exc}") from exc
        return res.result or "", int(res.exit_code if res.exit_code is not None else 1)

    def _put(self, path: str, data: bytes) -> None:
        try:
            self.sandbox.fs.upload_file(data, path)
        except (self._error, OSError) as exc:
            raise HermesError(f"daytona backend: upload of {path} failed: {exc}") from exc

    def _get(self, path: str) -> bytes:
        try:
            return self.sandbox.fs.download_file(path)
        except (self._error, OSError) as exc:
            raise HermesError(f"daytona backend: download of {path} failed: {exc}") from exc

    def _stop(self) -> None:
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is None:
            return
        try:
            sandbox.delete(timeout=60)
        except (self._error, OSError) as exc:
            raise HermesError(f"daytona backend: cannot delete sandbox {sandbox.id}: {exc}") from exc

