"""The local backend's channels and environment, on real bash (no sandbox needed for these): state comes
back on fd 4 as data, a forged or oversized state is ignored, nothing marks the environment, and the
Landlock path's seccomp filter refuses unix sockets but not socketpairs or TCP."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import socket
import tempfile

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


def test_seccomp_refuses_unix_sockets_and_datagram_pairs_only():
    from hermes_agent.terminal.sandbox import landlock, seccomp

    if seccomp.program() is None or landlock.abi_version() < 1:
        pytest.skip("no seccomp program for this machine or no Landlock (no_new_privs)")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            landlock.fence()
            seccomp.install(seccomp.Policy(unix=True))
            verdict = []
            try:
                socket.socket(socket.AF_UNIX)
                verdict.append("unix-allowed")
            except PermissionError:
                verdict.append("unix-refused")
            a, b2 = socket.socketpair()
            a3, b3 = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
            verdict.append("pair-ok")
            for kind in (socket.SOCK_DGRAM, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, socket.SOCK_RAW):
                try:
                    socket.socketpair(socket.AF_UNIX, kind)  # a39: an end could sendto() any host dgram path
                    verdict.append("dgram-pair-allowed")
                except PermissionError:
                    pass
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.syscall(425, 1, ctypes.create_string_buffer(120)) < 0 and ctypes.get_errno() == errno.ENOSYS:
                verdict.append("no-io-uring")
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # DNS-shaped: sendto with an address
            u.sendto(b"x", ("127.0.0.1", 9))
            u.close()
            socket.socket(socket.AF_INET).close()
            verdict.append("inet-ok")
            os.write(w, " ".join(verdict).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 100).decode() == "unix-refused pair-ok no-io-uring inet-ok"


def _mechanisms() -> list:
    from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
    from hermes_agent.terminal.sandbox.launcher import landlock_problem

    return [pytest.param("bwrap", marks=pytest.mark.skipif(bool(bwrap_problem()), reason=str(bwrap_problem()))),
            pytest.param("landlock",
                         marks=pytest.mark.skipif(bool(landlock_problem()), reason=str(landlock_problem())))]


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_unconfined_call_never_runs_what_the_sandbox_left(mechanism, tmp_path):
    """a10/a44: a confined call defines `ls`, an alias, puts ws/bin first in PATH, exports LD_PRELOAD-like
    variables and cds through a link it made to a directory outside; an approved `sandbox=False` call runs
    none of it, starts in the workspace root and says so."""
    from hermes_agent.terminal.sandbox.spec import SandboxSpec

    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    flag = tmp_path / "PWNED"
    b = LocalBackend(str(ws), source_rc=False,
                     sandbox=SandboxSpec(writable=(str(ws),), mechanism=mechanism))
    try:
        assert b.sandbox_state == mechanism
        planted = b.execute(
            f"mkdir -p bin sub && printf '#!/bin/sh\\ntouch {flag}\\n' > bin/git && chmod +x bin/git && "
            f"export PATH=$PWD/bin:$PATH BASH_ENV=$PWD/bin/git && ls() {{ touch {flag}; }} && export -f ls && "
            f"alias cat='touch {flag};' && export PLANTED=1 && cd sub && echo planted")
        assert planted.output.strip() == "planted", planted.output
        res = b.execute("ls; git --version; cat /dev/null; echo \"[$PLANTED] $PWD\"", sandbox=False)
        assert not flag.exists(), res.output
        assert f"[] {ws / 'sub'}" in res.output  # the cwd inside the workspace is kept, by its real path
        assert b.execute("echo $PLANTED", sandbox=True).output == "1\n"  # the confined state is still there
        os.symlink(outside, ws / "link")  # as the sandbox could have made it
        b.execute(f"printf '%s\\0' {ws / 'link'} >&4; exec 4>&-")  # a forged cwd through that link
        assert b.cwd() == str(ws / "link")
        res = b.execute("pwd; touch made-here", sandbox=False)
        assert res.output.startswith(f"{ws}\n") and "workspace root" in res.output, res.output
        assert (ws / "made-here").exists() and not (outside / "made-here").exists()
    finally:
        b.close()


_PROBE_LAUNCHER = r'''
import ctypes, os, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
print("launcher", b"server" in open(f"/proc/{pid}/cmdline", "rb").read())
pidfd = libc.syscall(434, pid, 0)  # pidfd_open
print("taken", [fd for fd in range(256) if libc.syscall(438, pidfd, fd, 0) >= 0])  # pidfd_getfd
try:  # as root the fd names may list (the directory is root's), never what they are
    names = os.listdir(f"/proc/{pid}/fd")
except OSError:
    names = ["100"]
for fd in names:
    try:
        print("fd", fd, os.readlink(f"/proc/{pid}/fd/{fd}"))
        os.close(os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY))
        print("fd", fd, "opened")
    except OSError:
        print("fd", fd, "denied")
try:
    open(f"/proc/{pid}/environ", "rb").read()
    print("environ readable")
except OSError:
    print("environ denied")
print("self dumpable", libc.prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
'''


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_commands_cannot_reach_into_the_launcher(mechanism, tmp_path):
    """a36: the launcher holds the control socket to hermes (fd 100); a command (its child) cannot take it
    with pidfd_getfd nor read or open /proc/<launcher>/fd/*, while commands stay debuggable among themselves."""
    import sys

    from hermes_agent.terminal.sandbox.spec import SandboxSpec

    (tmp_path / "probe.py").write_text(_PROBE_LAUNCHER)
    b = LocalBackend(str(tmp_path), source_rc=False,
                     sandbox=SandboxSpec(writable=(str(tmp_path),), mechanism=mechanism))
    try:
        assert b.sandbox_state == mechanism
        out = b.execute(f"{sys.executable} probe.py $PPID; sleep 5 & ls /proc/$!/fd >/dev/null && echo own-child-ok; "
                        "kill $!").output
        assert "launcher True" in out, out  # the probe looked at the launcher itself
        assert "taken []" in out and "fd 100 denied" in out and "environ denied" in out, out
        assert "socket:" not in out and "opened" not in out, out
        assert "self dumpable 1" in out and "own-child-ok" in out, out
    finally:
        b.close()


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_host_datagram_socket_is_out_of_reach(mechanism, tmp_path):
    """a39: a socketpair(AF_UNIX, SOCK_DGRAM) end sending to a host datagram socket by path (journald/notify
    shape) reaches nothing; ordinary UDP sendto (DNS) still works: to an outside host (tests/outside_net.py; the
    host's loopback and own addresses are not the sandbox's network when it has a namespace of its own)."""
    import sys

    from hermes_agent.terminal.sandbox.spec import SandboxSpec

    host = tempfile.mkdtemp(prefix=".hermes-test-dgram-", dir="/root" if os.access("/root", os.W_OK) else None)
    path = os.path.join(host, "service.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)
    srv.settimeout(0.5)
    from tests.outside_net import listening_socket, outside_ip

    # an outside host (the host's own addresses are unreachable from a sandbox's namespace, netns.py)
    # Not root: no outside network can be made, and the host's loopback is not the sandbox's (its own namespace),
    # so the UDP half is left out; the refused host socket is still checked.
    outside = outside_ip()
    udp = listening_socket(outside or "127.0.0.1", udp=True)
    udp.settimeout(5)
    code = ("import socket\ntry:\n a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            f" a.sendto(b'PWN', {path!r})\n print('sent')\nexcept OSError as e:\n print('refused', e.errno)\n"
            f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'dns', {udp.getsockname()!r})")
    (tmp_path / "probe.py").write_text(code)
    b = LocalBackend(str(tmp_path), source_rc=False,
                     sandbox=SandboxSpec(writable=(str(tmp_path),), mechanism=mechanism))
    try:
        assert b.sandbox_state == mechanism
        out = b.execute(f"{sys.executable} probe.py").output
        assert "sent" in out or "refused" in out, out
        if outside:
            assert udp.recv(10) == b"dns", out
        with pytest.raises(TimeoutError):
            srv.recv(10)
    finally:
        b.close()
        srv.close()
        udp.close()
        shutil.rmtree(host, ignore_errors=True)
