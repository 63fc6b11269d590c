"""SSHBackend: commands on a remote host through the OpenSSH client, one multiplexed connection
(ControlMaster/ControlPersist) per backend; cwd and exports persist remotely like local."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile

from hermes_agent import paths
from hermes_agent.errors import HermesError
from hermes_agent.terminal.remote import RemoteShellBackend


class SSHBackend(RemoteShellBackend):
    """Runs commands as `user@host`. Never prompts (BatchMode): keys or an agent must work.
    New host keys are accepted once and remembered in `known_hosts` (checked after the user's own)."""

    kind = "ssh"

    def __init__(self, host: str, *, user: str = "", port: int = 22, key: str = "", cwd: str | None = None,
                 timeout: float = 180.0, known_hosts: str | None = None, connect_timeout: int = 10,
                 persist_s: int = 300, ssh: str = "ssh", output_limit: int = 2_000_000, source_rc: bool = True) -> None:
        super().__init__(cwd=cwd, timeout=timeout, output_limit=output_limit, source_rc=source_rc)
        if not host:
            raise HermesError("ssh backend: terminal.ssh_host is not set")
        self.host = host
        self._user = user
        self._port = int(port or 22)
        self._key = os.path.expanduser(key) if key else ""
        self._known_hosts = known_hosts
        self._connect_timeout = connect_timeout
        self._persist_s = persist_s
        self._ssh = ssh
        self._control_dir: str | None = None
        self._connected = False

    def _target(self) -> str:
        return f"{self._user}@{self.host}" if self._user else self.host

    def _base_argv(self) -> list[str]:
        opts = {
            "BatchMode": "yes",
            "ControlMaster": "auto",
            "ControlPath": f"{self._control_dir}/cm-%C",
            "ControlPersist": str(self._persist_s),
            "ConnectTimeout": str(self._connect_timeout),
            "StrictHostKeyChecking": "accept-new",
            "ServerAliveInterval": "30",
            "LogLevel": "ERROR",
        }
        if self._known_hosts:
            opts["UserKnownHostsFile"] = f"{self._known_hosts} ~/.ssh/known_hosts"
        argv = [self._ssh, "-p", str(self._port)]
        if self._key:
            argv += ["-i", self._key, "-o", "IdentitiesOnly=yes"]
        for k, v in opts.items():
            argv += ["-o", f"{k}={v}"]
        return argv + [self._target()]

    def _prepare(self) -> None:
        if self._connected:
            return
        with self._lock:
            if self._connected:
                return
            found = paths.trusted_which(self._ssh)
            if found is None:
                raise HermesError(f"ssh backend: the OpenSSH client `{self._ssh}` is not installed (outside the places "
                                  "the sandbox can write)")
            self._ssh = found
            if self._control_dir is None:
                self._control_dir = tempfile.mkdtemp(prefix="hermes-ssh-")
            if self._known_hosts:
                os.makedirs(os.path.dirname(os.path.abspath(self._known_hosts)), exist_ok=True)
            try:
                proc = subprocess.run(self._base_argv() + ["true"], capture_output=True, text=True,
                                      timeout=self._connect_timeout + 20, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as exc:
                raise HermesError(f"ssh backend: connecting to {self._where()} timed out") from exc
            if proc.returncode != 0:
                detail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
                raise HermesError(f"ssh backend: cannot connect to {self._where()}: {detail}")
            self._connected = True

    def _where(self) -> str:
        return f"{self._target()}:{self._port}"

    def _client_argv(self, script: str, stdin: bool) -> list[str]:
        # The remote login shell parses this string; `sh -c` keeps our POSIX script independent of it.
        return self._base_argv() + [f"sh -c {shlex.quote(script)}"]

    def _client_failed(self, code: int, stderr: str) -> str | None:
        if code == 255:
            return f"ssh to {self._where()} failed: {stderr.strip() or 'connection lost'}"
        return None

    def close(self) -> None:
        """Remove the remote state directory and stop the master connection."""
        if self._connected:
            self._remove_state()
            try:
                subprocess.run(self._base_argv()[:-1] + ["-O", "exit", self._target()], capture_output=True,
                               timeout=10, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._connected = False
        if self._control_dir:
            shutil.rmtree(self._control_dir, ignore_errors=True)
            self._control_dir = None
