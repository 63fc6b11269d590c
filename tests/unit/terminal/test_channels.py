"""The local backend's channels and environment, on real bash (no sandbox needed for these): state comes
back on fd 4 as data, a forged or oversized state is ignored, nothing marks the environment, and the
Landlock path's seccomp filter refuses unix sockets but not socketpairs or TCP."""

from __future__ import annotations

import os
import socket

import pytest

from hermes_agent.terminal.local import LocalBackend
from hermes_agent.terminal.sandbox.envallow import allowed_env, describe


def test_environment_is_an_allowlist():
    env = {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "GITHUB_PAT": "x", "MY_NOTES": "y", "TMUX": "/tmp/t,1,0",
           "SSH_AUTH_SOCK": "/s", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/b", "XDG_RUNTIME_DIR": "/run/user/0",
           "VIRTUAL_ENV": "/v", "PASSME": "1"}
    got = allowed_env(env, ["PASSME"])
    assert got == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "VIRTUAL_ENV": "/v", "PASSME": "1"}
    kept, dropped = describe(env, [])
    assert "GITHUB_PAT" in dropped and "PASSME" in dropped and "PATH" in kept


def test_state_round_trips_and_forgeries_are_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_PAT", "ghp_should_not_pass")
    b = LocalBackend(str(tmp_path), source_rc=False)
    try:
        b.execute("mkdir -p sub && cd sub && export KEEP=1 && f() { echo fn; }")
        res = b.execute("echo $KEEP $(basename $PWD); f; env")
        assert res.output.startswith("1 sub\nfn\n")
        assert res.cwd == str(tmp_path / "sub")
        assert "GITHUB_PAT" not in res.output and "_TOKEN=" not in res.output
        # a relative cwd written to the state channel is not taken
        b.execute("printf 'relative\\0' >&4; exec 4>&-")
        assert b.cwd() == str(tmp_path / "sub")
        # more than 8 MB of state: ignored, the previous state stays
        b.execute("head -c 9000000 /dev/zero | tr '\\0' x >&4; printf '\\0' >&4; exec 4>&-")
        assert b.execute("echo $KEEP").output == "1\n"
    finally:
        b.close()


def test_output_is_an_anonymous_file(tmp_path):
    b = LocalBackend(str(tmp_path), source_rc=False)
    try:
        out = b.execute("readlink /proc/self/fd/1 /proc/self/fd/4; [ -e /proc/$$/fd/3 ] && echo fd3-open").output
        assert "/memfd:hermes-out" in out and "/memfd:hermes-state-out" in out
        assert "fd3-open" not in out  # the saved state's fd is closed before the command runs
    finally:
        b.close()


def test_seccomp_refuses_unix_sockets_only():
    from hermes_agent.terminal.sandbox import landlock, seccomp

    if seccomp.program() is None or landlock.abi_version() < 1:
        pytest.skip("no seccomp program for this machine or no Landlock (no_new_privs)")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            landlock.fence()
            seccomp.deny_unix_sockets()
            verdict = []
            try:
                socket.socket(socket.AF_UNIX)
                verdict.append("unix-allowed")
            except PermissionError:
                verdict.append("unix-refused")
            a, b2 = socket.socketpair()
            verdict.append("pair-ok")
            socket.socket(socket.AF_INET).close()
            verdict.append("inet-ok")
            os.write(w, " ".join(verdict).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 100).decode() == "unix-refused pair-ok inet-ok"
