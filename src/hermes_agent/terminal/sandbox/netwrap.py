"""One wrapped program's own network namespace (`wrapped.sandbox_launch`: MCP stdio servers, the browser),
the terminal launcher's (netns.py) for a program hermes does not start itself: the MCP SDK or Playwright
starts `python -I -S -c BOOT netwrap_main TAG PLAN bwrap -- ... exec_main ...` (bwrap's options in its
environment, passed on to bwrap by `--args FD`: no command line shows them), and this process, unconfined and
tagged like a launcher (peer.py counts what it relays as confined), stays between them and the sandbox:

1. it starts the sandbox (bwrap with `--unshare-net`, or the Landlock keeper, which makes the namespace
   itself) with everything it inherited (stdio, Playwright's pipes on fds 3 and 4) and one more channel,
   named by `HERMES_NETWRAP_FD` (the keeper removes it from the program's environment);
2. the sandbox's side answers over the channel before the program runs: the listening sockets of the granted
   loopback ports (`sandbox.loopback_ports`), and under Landlock the namespace's fds; under bwrap the
   namespace comes from bwrap's `--info-fd`;
3. it makes the link-local range unreachable there and starts slirp4netns (`NetNS.start`,
   `--disable-host-loopback`), relays the granted ports to the host's 127.0.0.1 in threads of its own, then
   says "go": the program starts with its network already in place;
4. it forwards SIGTERM/SIGINT/SIGHUP to the sandbox, exits with the program's status, and dies with its
   parent (the sandbox with it: bwrap `--die-with-parent`, the keeper's parent-death signal; slirp4netns's
   exit fd).

The channel is a socketpair this process made before the sandbox existed; nothing it reads there is a path."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

ENV = "HERMES_NETWRAP_FD"
_HANDSHAKE_S = 30.0  # a loaded 2-core machine: bwrap, python and the plan before the sandbox's side answers


def main(plan: dict, argv: list[str]) -> None:
    """The wrapper's body (`server.netwrap_main`); `plan`: {"mechanism"}, `argv`: the sandbox (bwrap: its program
    and the rest after its options, which come from the environment and reach bwrap by fd)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: the caller died
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: its environment (the plan it came with) needs CAP_SYS_PTRACE
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    child.set_inheritable(True)
    passed = [child.fileno()]
    info_r = None
    argv = list(argv)
    if plan.get("mechanism") == "bwrap":  # its options (wrapped.PLAN_ENV) go to bwrap by fd, with the namespace's
        from hermes_agent.terminal.sandbox.launcher import _args_fd
        from hermes_agent.terminal.sandbox.netns import bwrap_net_options
        from hermes_agent.terminal.sandbox.server import unpack_config
        from hermes_agent.terminal.sandbox.wrapped import PLAN_ENV

        info_r, more = bwrap_net_options(passed)
        options = unpack_config(os.environ.pop(PLAN_ENV, "") or "[]") + more
        options = _without_gone_sockets(options, len(options))
        passed.append(_args_fd(options))
        argv[1:1] = ["--args", str(passed[-1])]
    for fd in passed:
        os.set_inheritable(fd, True)
    try:
        proc = subprocess.Popen(argv, close_fds=False, env={**os.environ, ENV: str(child.fileno())})
    except OSError as exc:
        sys.stderr.write(f"hermes sandbox: cannot start {argv[0]}: {exc}\n")
        os._exit(127)
    finally:
        for fd in passed:
            os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda num, _frame: _forward(proc, num))
    net = _connect(parent, proc, info_r)
    code = proc.wait()
    if net is not None:
        net.close()
    os._exit(code if code >= 0 else 128 - code)


def _without_gone_sockets(argv: list[str], end: int) -> list[str]:
    """bwrap's cover of a host socket (`--ro-bind /dev/null PATH`, bwrap._hidden_sockets) dropped when the socket
    went away since hermes planned it (containerd's shims come and go): bwrap would fail to create the mount
    point, and a socket that is gone needs no cover. Only the first `end` items (bwrap's options) are looked at."""
    out, i = [], 0
    while i < len(argv):
        if i + 2 < end and argv[i:i + 2] == ["--ro-bind", "/dev/null"] and not os.path.lexists(argv[i + 2]):
            i += 3
            continue
        out.append(argv[i])
        i += 1
    return out


def _forward(proc: subprocess.Popen, sig: int) -> None:
    try:
        proc.send_signal(sig)
    except OSError:
        pass


def _connect(parent: socket.socket, proc: subprocess.Popen, info_r: int | None):  # type: ignore[no-untyped-def]
    """Steps 2 and 3 above; on any failure the sandbox is killed (the program never ran) and one line says why."""
    from hermes_agent.terminal.sandbox import netns
    from hermes_agent.terminal.sandbox.server import recv_frame

    net = None
    log = os.memfd_create("hermes-netwrap-log", os.MFD_CLOEXEC)
    try:
        if info_r is not None:
            net = netns.NetNS.of_pid(netns.read_child_pid(info_r, _HANDSHAKE_S))
        parent.settimeout(_HANDSHAKE_S)
        frame = recv_frame(parent)
        if frame is None or not isinstance(frame[0], dict):
            raise OSError("the sandbox ended before it was ready")
        msg, fds = frame
        listening = [int(p) for p in msg.get("listening") or []]
        if msg.get("netns") and len(fds) == len(listening) + 3:  # Landlock: the namespace it made, held as fds
            ns, fds = fds[len(listening):], fds[:len(listening)]
            net = netns.NetNS(*ns, own_sandbox=os.geteuid() == 0, blocked=bool(msg.get("blocked")))
        if net is None or len(fds) != len(listening):
            raise OSError("the sandbox made no network namespace")
        net.start(log)
        netns.relay_start(listening, fds)
        parent.sendall(b"1")
    except (OSError, ValueError) as exc:
        said = os.pread(log, 4096, 0).decode("utf-8", "replace").splitlines()
        why = next((ln for ln in reversed(said) if ln.strip() and not ln.startswith("seccomp: ")), "")
        sys.stderr.write(f"hermes sandbox: network namespace: {exc}{f' ({why})' if why else ''}\n")
        proc.kill()
        proc.wait()
        if net is not None:
            net.close()
        os._exit(125)
    finally:
        if info_r is not None:
            os.close(info_r)
        parent.close()
    return net


def handshake(cfg: dict) -> None:
    """The sandbox's side (server.exec_main, inside, before the program runs): listen on the granted ports,
    send them (and the namespace's fds, when this process made it) to the wrapper, wait for its "go"."""
    raw = os.environ.pop(ENV, "")
    if not raw.isdigit():
        return
    from hermes_agent.terminal.sandbox.server import _listen, _ns_fds, send_frame

    channel = socket.socket(fileno=int(raw))
    try:
        inside = cfg.get("landlock") is None or cfg.get("netns_made")  # never a port of the host's own loopback
        listening = _listen(cfg.get("listen") or [] if inside else [])
        ns = _ns_fds() if cfg.get("netns_made") else []
        send_frame(channel, {"listening": [p for p, _ in listening], "netns": bool(ns), "blocked": bool(ns)},
                   [*(s.fileno() for _, s in listening), *ns])
        for _, listener in listening:
            listener.close()
        for fd in ns:
            os.close(fd)
        go = channel.recv(1)
    finally:
        channel.close()
    if go != b"1":
        sys.stderr.write("hermes sandbox: the network namespace was not set up; not started\n")
        os._exit(125)


def wrapped(mechanism: str, argv: list[str], boot: str, tag: str) -> list[str]:
    """`argv` (the sandbox's command line; bwrap's options in the environment, wrapped.PLAN_ENV) behind the
    wrapper."""
    plan = {"mechanism": mechanism}
    return [sys.executable, "-I", "-S", "-c", boot + "netwrap_main; netwrap_main()", tag, json.dumps(plan), *argv]
