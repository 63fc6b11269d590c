"""ModalBackend: one Modal sandbox per task through the Modal SDK (`pip install 'hermes-agent[modal]'`,
credentials MODAL_TOKEN_ID + MODAL_TOKEN_SECRET or ~/.modal.toml). The sandbox (`sleep infinity`
in `terminal.modal_image`, app "hermes-agent") is created on first use and terminated by `close()`;
commands through `Sandbox.exec`, files through `Sandbox.filesystem`.

Tested only against a stand-in for the SDK's App/Image/Sandbox objects (tests/fake_modal.py):
Modal's client speaks gRPC to Modal's servers (hundreds of sandbox RPCs), too large to fake on the
wire here. Never run against the real cloud in this project's tests."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

from hermes_agent.errors import HermesError
from hermes_agent.terminal.cloud import CloudShellBackend

APP_NAME = "hermes-agent"
LIFETIME_S = 24 * 3600  # Modal's maximum; a crashed process's sandbox ends by itself after this


def modal_problem(env: dict[str, str], sdk: object | None = None) -> str | None:
    """Why the modal backend cannot run (extra or credentials missing), or None. No network."""
    if sdk is None and importlib.util.find_spec("modal") is None:
        return "the Modal SDK is not installed: pip install 'hermes-agent[modal]'"
    if env.get("MODAL_TOKEN_ID") and env.get("MODAL_TOKEN_SECRET"):
        return None
    if os.path.exists(os.path.expanduser("~/.modal.toml")):
        return None
    return "no Modal credentials: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET (or run `modal token new`)"


class ModalBackend(CloudShellBackend):
    """Commands run in a Modal sandbox; `isolated`. `sdk` is the `modal` module (imported on first
    use) or an object with the same App/Image/Sandbox/exception surface."""

    kind = "modal"

    def __init__(self, image: str, *, task_id: str = "default", cpu: float = 1, memory_mb: int = 5120,
                 disk_mb: int = 0, cwd: str | None = None, timeout: float = 180.0,
                 output_limit: int = 2_000_000, source_rc: bool = True, sdk: object | None = None) -> None:
        super().__init__(task_id=task_id, cwd=cwd, timeout=timeout, output_limit=output_limit,
                         source_rc=source_rc)
        self.image = image
        self._cpu = cpu or None
        self._memory_mb = memory_mb or None
        self._disk_mb = disk_mb  # not passed: Modal's create() has no ephemeral disk size parameter
        self._sdk = sdk
        self.sandbox = None

    def _modal(self) -> ModuleType:
        if self._sdk is None:
            try:
                import modal
            except ImportError as exc:
                raise HermesError("modal backend: the Modal SDK is not installed: "
                                  "pip install 'hermes-agent[modal]'") from exc
            self._sdk = modal
        return self._sdk  # type: ignore[return-value]

    def _error(self) -> type[BaseException]:
        return self._modal().exception.Error

    def _start(self) -> None:
        modal = self._modal()
        try:
            app = modal.App.lookup(APP_NAME, create_if_missing=True)
            image = (modal.Image.from_id(self.image) if self.image.startswith("im-")
                     else modal.Image.from_registry(self.image))
            self.sandbox = modal.Sandbox.create("sleep", "infinity", app=app, image=image, timeout=LIFETIME_S,
                                                cpu=self._cpu, memory=self._memory_mb,
                                                tags={"hermes_task_id": self._task_id})
        except (self._error(), OSError) as exc:
            raise HermesError(f"modal backend: cannot create a sandbox from {self.image}: {exc}") from exc

    def _run(self, command: str, timeout: float | None) -> tuple[str, int]:
        try:
            proc = self.sandbox.exec("sh", "-c", command, timeout=None if timeout is None else int(timeout) + 1)
            out = proc.stdout.read()
            code = proc.wait()
        except (self._error(), OSError) as exc:
            raise HermesError(f"modal backend: exec failed: {exc}") from exc
        return (out.decode("utf-8", "replace") if isinstance(out, bytes) else out), int(code)

    def _put(self, path: str, data: bytes) -> None:
        try:
            self.sandbox.filesystem.write_bytes(data, path)
        except (self._error(), OSError) as exc:
            raise HermesError(f"modal backend: write of {path} failed: {exc}") from exc

    def _get(self, path: str) -> bytes:
        try:
            return self.sandbox.filesystem.read_bytes(path)
        except (self._error(), OSError) as exc:
            raise HermesError(f"modal backend: read of {path} failed: {exc}") from exc

    def _stop(self) -> None:
        sandbox, self.sandbox = self.sandbox, None
        if sandbox is None:
            return
        try:
            sandbox.terminate()
        except (self._error(), OSError) as exc:
            raise HermesError(f"modal backend: cannot terminate the sandbox: {exc}") from exc
