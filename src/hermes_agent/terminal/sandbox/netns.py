"""The bwrap sandbox's own network namespace (red-team a44, a08: "loopback is not the network").

With `sandbox.network: true` under bwrap the launcher gets `--unshare-net`: 127.0.0.1 inside is the
session's own loopback (a server one command starts is reachable by the next), and the user's loopback
services (node --inspect, Jupyter, Redis, Chrome's debugging port, a keyless `hermes api`) are not. The
outside is reached through `slirp4netns` (Debian package; a user-space TCP/IP stack hermes starts per
launcher, `--disable-host-loopback`: the namespace's gateway does not lead to the host's 127.0.0.1, and its
own sandbox and seccomp filter on). A port the user grants (`sandbox.loopback_ports: [5432]`) is forwarded:
the launcher listens on 127.0.0.1:PORT inside before any command runs and hands the listening socket to
hermes, whose relay process (`relay_serve`, tagged as confined like a launcher: the peer check of a keyless
`hermes api` still refuses what comes through it) passes each connection to the host's 127.0.0.1:PORT.

Provenance by capability (a08): the interface byte counters of the namespace (`/proc/<pid>/net/dev`, every
interface but `lo`, opened once while the namespace's first process is held by bwrap) are read after each
command; any byte received from outside since the last look marks the conversation as having taken in
untrusted content, whatever the command text says. Nothing read here is writable by the confined side (the
kernel keeps the counters).

Without slirp4netns the launcher keeps the host's network as before (said once, and by `hermes doctor`)."""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import socket
import subprocess
import threading
import time

_READY_TIMEOUT_S = 10.0


def reap(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """Wait up to `grace` seconds for `proc` to end (its input was closed), then kill it; never leaves a zombie.
    The wait is on a pidfd, woken by the exit itself (Popen.wait with a timeout polls in sleeps of up to 50 ms)."""
    if proc.poll() is not None:
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd here: Popen's own timed wait
        fd = None
    if fd is not None:
        try:
            ended = bool(select.select([fd], [], [], grace)[0])
        finally:
            os.close(fd)
        if not ended:
            proc.kill()
        proc.wait()
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
SLIRP_DNS = "10.0.2.3"  # slirp4netns's built-in resolver (forwards to the host's)


@functools.cache
def forwarder() -> str | None:
    """The slirp4netns binary, or None (then a bwrap sandbox with network on shares the host's network)."""
    return shutil.which("slirp4netns")


def forwarder_problem() -> str | None:
    if forwarder() is None:
        return ("slirp4netns is not installed: commands with network on share the host's loopback (your local "
                "services such as node --inspect, Jupyter or Redis are reachable from the sandbox); install it "
                "(apt-get install slirp4netns)")
    return None


def resolv_conf_override(path: str = "/etc/resolv.conf") -> bytes | None:
    """The resolv.conf the namespace needs when the host's names a loopback resolver (systemd-resolved's
    127.0.0.53 is not reachable inside): slirp4netns's own resolver instead. None: the host's file works."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    servers = [ln.split()[1] for ln in lines if ln.split()[:1] == ["nameserver"] and len(ln.split()) > 1]
    if not any(s.startswith("127.") or s == "::1" for s in servers):
        return None
    kept = [ln for ln in lines if ln.split()[:1] in (["search"], ["options"])]
    return ("\n".join([f"nameserver {SLIRP_DNS}", *kept]) + "\n").encode()


def host_loopback_ports() -> list[int]:
    """TCP ports listening on this host's loopback (/proc/net/tcp and tcp6), for `hermes doctor`."""
    ports: set[int] = set()
    for name, loop in (("tcp", ("0100007F",)), ("tcp6", ("00000000000000000000000001000000",))):
        try:
            with open(f"/proc/net/{name}", encoding="ascii", errors="replace") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) > 3 and parts[3] == "0A":  # LISTEN
                addr, _, port = parts[1].partition(":")
                if addr in loop or (name == "tcp" and addr.endswith("7F")):
                    ports.add(int(port, 16))
    return sorted(ports)


def read_child_pid(fd: int, timeout: float = _READY_TIMEOUT_S) -> int:
    """bwrap's `--info-fd` report: {"child-pid": N}, written once the namespaces exist."""
    data = b""
    deadline = time.monotonic() + timeout
    while b"}" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise OSError("bwrap did not report its namespace")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise OSError("bwrap ended before it reported its namespace")
        data += chunk
    pid = json.loads(data[: data.index(b"}") + 1]).get("child-pid")
    if not isinstance(pid, int) or pid <= 0:
        raise OSError("bwrap reported no namespace pid")
    return pid


class NetNS:
    """slirp4netns for one sandbox network namespace, and its byte counters. Held as fds (`net`, `user`: the
    namespaces; `dev`: its net/dev), opened before any command ran: by hermes from /proc/<pid> of bwrap's
    first process (`of_pid`), or by the Landlock launcher itself and passed over its socket (it is not
    dumpable, so its /proc/<pid>/ns is closed to hermes without privileges)."""

    def __init__(self, net: int, user: int, dev: int, own_sandbox: bool = True, pid: int = 0) -> None:
        self._fds = {"net": net, "user": user, "dev": dev}
        self._pid = pid  # bwrap's first process: slirp4netns is given its pid (its own sandbox then works)
        self._own_sandbox = own_sandbox  # slirp4netns --enable-sandbox (not in the Landlock user namespaces)
        self._proc: subprocess.Popen | None = None
        self._exit_w: int | None = None
        self._seen = 0
        self.relay: subprocess.Popen | None = None  # granted loopback ports (relay_serve), one process
        self.signal_r: int | None = None  # the relay's "bytes came in" pipe (non-blocking)

    @classmethod
    def of_pid(cls, pid: int) -> NetNS:
        fds = []
        try:
            for path in (f"/proc/{pid}/ns/net", f"/proc/{pid}/ns/user", f"/proc/{pid}/net/dev"):
                fds.append(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return cls(*fds, pid=pid)

    @property
    def net_fd(self) -> int:
        return self._fds["net"]

    def usable(self) -> bool:
        """Still configured (slirp4netns running): a re-planned launcher may join it (Launcher._joined)."""
        return "net" in self._fds and self._proc is not None and self._proc.poll() is None

    def start(self, log_fd: int) -> None:
        """Start slirp4netns on a tap device inside, wait until it is configured."""
        ready_r, ready_w = os.pipe()
        exit_r, self._exit_w = os.pipe()  # closed by us (or our death): slirp4netns exits
        net, user = self._fds["net"], self._fds["user"]
        argv = [forwarder() or "slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
                "--enable-seccomp", "--ready-fd", str(ready_w), "--exit-fd", str(exit_r),
                *(["--enable-sandbox"] if self._own_sandbox else [])]
        own_userns = os.fstat(user).st_ino != os.stat("/proc/self/ns/user").st_ino  # bwrap/the launcher made one
        if self._pid:
            argv += [*(["--userns-path", f"/proc/{self._pid}/ns/user"] if own_userns else []), str(self._pid)]
        else:
            argv += ["--netns-type=path", *(["--userns-path", f"/proc/self/fd/{user}"] if own_userns else []),
                     f"/proc/self/fd/{net}"]
        argv.append("tap0")
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                          pass_fds=(ready_w, exit_r, net, user), start_new_session=True)
        finally:
            os.close(ready_w)
            os.close(exit_r)
        try:
            ok = select.select([ready_r], [], [], _READY_TIMEOUT_S)[0] and os.read(ready_r, 1) == b"1"
        finally:
            os.close(ready_r)
        if not ok:
            self.close()
            raise OSError("slirp4netns did not configure the sandbox's network")
        self._seen = self.rx_bytes()

    def rx_bytes(self) -> int:
        """Bytes received from outside the namespace so far (every interface but lo)."""
        if "dev" not in self._fds:
            return 0
        try:
            text = os.pread(self._fds["dev"], 1 << 16, 0).decode("ascii", "replace")
        except OSError:
            return 0
        total = 0
        for line in text.splitlines()[2:]:
            name, _, fields = line.partition(":")
            if name.strip() != "lo" and fields.split():
                total += int(fields.split()[0])
        return total

    def took_in(self) -> bool:
        """Did anything arrive from outside since the last look?"""
        now = self.rx_bytes()
        moved, self._seen = now > self._seen, max(now, self._seen)
        return self._relayed() or moved

    def _relayed(self) -> bool:
        """Did the relay pass bytes in from a granted host port (a local proxy is the internet too)?"""
        if self.signal_r is None:
            return False
        seen = False
        try:
            while os.read(self.signal_r, 4096):
                seen = True
        except BlockingIOError:
            pass
        return seen

    def close(self) -> None:
        if self.relay is not None:
            self.relay.kill()
            self.relay.wait()
            self.relay = None
        if self._exit_w is not None:
            os.close(self._exit_w)
            self._exit_w = None
        if self._proc is not None:
            reap(self._proc)
            self._proc = None
        fds, self._fds = self._fds, {}
        for fd in (*fds.values(), *([self.signal_r] if self.signal_r is not None else [])):
            os.close(fd)
        self.signal_r = None


def relay_serve(plan: dict) -> None:
    """The relay process (`server.relay_main`): `plan` {"ports", "fds"}: the listening sockets of the ports
    inside the namespace; each accepted connection goes to the host's 127.0.0.1:port. Runs until killed (the
    launcher's close) or hermes dies (its parent-death signal)."""
    threads = []
    signal_fd = int(plan["signal"])  # a byte per chunk that came in from the host's side (NetNS.took_in)
    for port, fd in zip(plan["ports"], plan["fds"], strict=True):
        listener = socket.socket(fileno=int(fd))
        listener.setblocking(True)
        threads.append(threading.Thread(target=_accept, args=(listener, int(port), signal_fd), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _accept(listener: socket.socket, port: int, signal_fd: int) -> None:
    while True:
        try:
            inner, _ = listener.accept()
        except OSError:
            return
        try:
            outer = socket.create_connection(("127.0.0.1", port), timeout=5)
            outer.settimeout(None)
        except OSError:
            inner.close()
            continue
        pair = [inner, outer, 2, threading.Lock()]
        for src, dst, mark in ((inner, outer, -1), (outer, inner, signal_fd)):
            threading.Thread(target=_pump, args=(src, dst, pair, mark), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket, pair: list, mark: int) -> None:
    """Copy one direction (`mark` >= 0: into the sandbox, said on that pipe); the second direction to finish
    closes both sockets."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if mark >= 0:
                try:
                    os.write(mark, b"+")
                except BlockingIOError:
                    pass  # hermes has not looked yet: the pipe already says so
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    with pair[3]:
        pair[2] -= 1
        last = pair[2] == 0
    if last:
        pair[0].close()
        pair[1].close()
