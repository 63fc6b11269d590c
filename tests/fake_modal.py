"""A stand-in for the parts of the `modal` SDK the modal backend uses (App.lookup, Image.from_registry /
from_id, Sandbox.create -> exec / filesystem / terminate, exception.Error), replacing the SDK at its
own boundary: Modal's gRPC wire protocol is too large to fake. A "sandbox" is a directory on this
machine (its HOME and working directory); exec runs argv there as a local process."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from types import SimpleNamespace

from tests.helpers import end_fake_box


class Error(Exception):
    """modal.exception.Error"""


class _Reader:
    def __init__(self, proc: subprocess.Popen, timeout: float | None) -> None:
        self._proc = proc
        self._timeout = timeout
        self._data: bytes | None = None

    def read(self) -> str:
        if self._data is None:
            try:
                self._data, _ = self._proc.communicate(timeout=self._timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, 9)
                self._data, _ = self._proc.communicate()
        return self._data.decode("utf-8", "replace")


class _Process:
    def __init__(self, proc: subprocess.Popen, timeout: float | None) -> None:
        self._proc = proc
        self.stdout = _Reader(proc, timeout)

    def wait(self) -> int:
        self.stdout.read()
        return self._proc.returncode


class _Filesystem:
    def __init__(self, box: FakeSandbox) -> None:
        self._box = box

    def read_bytes(self, remote_path: str) -> bytes:
        self._box.check()
        try:
            with open(remote_path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise Error(f"SandboxFilesystemError: {exc}") from exc

    def write_bytes(self, data: bytes, remote_path: str) -> None:
        self._box.check()
        try:
            with open(remote_path, "wb") as fh:
                fh.write(bytes(data))
        except OSError as exc:
            raise Error(f"SandboxFilesystemError: {exc}") from exc


class FakeSandbox:
    def __init__(self, sdk: FakeModal, args: tuple, kwargs: dict) -> None:
        self.args, self.kwargs = args, kwargs
        self.root = tempfile.mkdtemp(prefix="fake-modal-")
        self.terminated = False
        self.commands: list[str] = []
        self.filesystem = _Filesystem(self)
        self._sdk = sdk

    def check(self) -> None:
        if self.terminated:
            raise Error("Sandbox has already terminated")

    def exec(self, *argv: str, timeout: int | None = None, **_: object) -> _Process:
        self.check()
        self._sdk.execs += 1
        self.commands.append(" ".join(argv))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.root, "LANG": "C.UTF-8"}
        proc = subprocess.Popen(list(argv), cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        return _Process(proc, timeout)

    def terminate(self) -> None:
        self.terminated = True
        end_fake_box(self.root, self.commands)


class FakeModal:
    """Pass as `sdk=` (ModalBackend) or `modal_sdk=` (BackendPool). `fail_create` makes
    Sandbox.create raise like an unauthenticated client would."""

    def __init__(self, fail_create: str = "") -> None:
        self.sandboxes: list[FakeSandbox] = []
        self.apps: list[str] = []
        self.execs = 0
        self._lock = threading.Lock()
        self.exception = SimpleNamespace(Error=Error)
        self.App = SimpleNamespace(lookup=self._lookup)
        self.Image = SimpleNamespace(from_registry=lambda tag, **_: ("registry", tag),
                                     from_id=lambda image_id, **_: ("id", image_id))
        self.Sandbox = SimpleNamespace(create=self._create)
        self._fail_create = fail_create

    def _lookup(self, name: str, create_if_missing: bool = False) -> str:
        self.apps.append(name)
        return f"app:{name}"

    def _create(self, *args: str, **kwargs: object) -> FakeSandbox:
        if self._fail_create:
            raise Error(self._fail_create)
        box = FakeSandbox(self, args, kwargs)
        with self._lock:
            self.sandboxes.append(box)
        return box

    def live(self) -> list[FakeSandbox]:
        return [b for b in self.sandboxes if not b.terminated]
