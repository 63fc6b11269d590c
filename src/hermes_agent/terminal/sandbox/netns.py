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
import socket
import subprocess
import sys
import threading
import time

from hermes_agent import paths

_READY_TIMEOUT_S = 10.0
SRC_ROOT = paths.SRC_ROOT
# How every helper python process of the sandbox starts (`python -I -S -c BOOT + "name; name()"`): peer.py
# recognises this prefix (and the tag after it) in a process's command line
BOOT = f"import sys; sys.path.insert(0, {SRC_ROOT!r}); from hermes_agent.terminal.sandbox.server import "


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
    return paths.trusted_which("slirp4netns")


def forwarder_problem() -> str | None:
    if forwarder() is None:
        return ("slirp4netns is not installed: commands, MCP stdio servers and the browser with network on share "
                "the host's network (your local services such as node --inspect, Jupyter or Redis, and the cloud "
                "metadata address, are reachable from the sandbox); install it (apt-get install slirp4netns)")
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
    from hermes_agent.terminal.sandbox.nsmount import host_addresses

    own = set(host_addresses())  # unreachable from the namespace too (nsmount.reject_routes)
    if not any(s.startswith("127.") or s == "::1" or s in own for s in servers):
        return None
    kept = [ln for ln in lines if ln.split()[:1] in (["search"], ["options"])]
    return ("\n".join([f"nameserver {SLIRP_DNS}", *kept]) + "\n").encode()


def in_netns(net_fd: int, start):  # type: ignore[no-untyped-def]
    """`start()` on this thread while it is in the network namespace `net_fd` (root: setns), so what it does
    (a process it forks, routes it adds) lives there; the thread goes back to its own namespace after."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(net_fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), "setns into the sandbox's network namespace")
        try:
            return start()
        finally:
            if libc.setns(home, 0x40000000) != 0:
                raise OSError(ctypes.get_errno(), "setns back to hermes's network namespace")
    finally:
        os.close(home)


def bwrap_net_options(passed: list[int]) -> tuple[int, list[str]]:
    """bwrap options for its own network namespace: report the namespace's pid (`--info-fd`), and a resolv.conf
    naming slirp4netns's resolver when the host's resolver is on its loopback. The fds bwrap needs are appended
    to `passed` (the caller closes them once bwrap started); returns the pid report's read end."""
    info_r, info_w = os.pipe()
    passed.append(info_w)
    return info_r, ["--info-fd", str(info_w), *bwrap_resolv_options(passed)]


def bwrap_resolv_options(passed: list[int]) -> list[str]:
    """bwrap options for a sandbox in a namespace of its own (made or joined) when the host's resolver is on
    its loopback: a resolv.conf naming slirp4netns's resolver (the fd appended to `passed`)."""
    resolv = resolv_conf_override()
    if resolv is None:
        return []
    fd = os.memfd_create("hermes-resolv", os.MFD_CLOEXEC)
    os.write(fd, resolv)
    os.lseek(fd, 0, os.SEEK_SET)
    passed.append(fd)
    return ["--ro-bind-data", str(fd), os.path.realpath("/etc/resolv.conf")]


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


def _private_mounts(argv: list[str]) -> list[str]:
    """`argv` started in a mount namespace of its own whose mounts are all private, as root. slirp4netns's
    --enable-sandbox makes only "/" private before its pivot_root and lazy unmount of the old root: a shared
    mount (dockerd's data-root is one) would carry that unmount back to the host, and a container starting at
    that moment found its root filesystem gone ("exec tail failed: No such file or directory")."""
    tool = paths.trusted_which("unshare")  # util-linux: --mount makes every mount private (recursively) by default
    if tool is not None:
        return [tool, "--mount", "--propagation", "private", "--", *argv]
    boot = ("import ctypes,os,sys\nlibc=ctypes.CDLL(None,use_errno=True)\n"
            "if libc.unshare(0x20000) or libc.mount(b'none',b'/',None,0x44000,None): os._exit(125)\n"
            "os.execvp(sys.argv[1],sys.argv[1:])")
    return [sys.executable, "-I", "-S", "-c", boot, *argv]


class NetNS:
    """slirp4netns for one sandbox network namespace, and its byte counters. Held as fds (`net`, `user`: the
    namespaces; `dev`: its net/dev), opened before any command ran: by hermes from /proc/<pid> of bwrap's
    first process (`of_pid`), or by the Landlock launcher itself and passed over its socket (it is not
    dumpable, so its /proc/<pid>/ns is closed to hermes without privileges)."""

    def __init__(self, net: int, user: int, dev: int, own_sandbox: bool = True, pid: int = 0,
                 blocked: bool = False) -> None:
        self._fds = {"net": net, "user": user, "dev": dev}
        self._blocked = blocked  # the Landlock launcher added the unreachable routes itself (nsmount)
        self._pid = pid  # bwrap's first process: slirp4netns is given its pid (its own sandbox then works)
        self._own_sandbox = own_sandbox  # slirp4netns --enable-sandbox (not in the Landlock user namespaces)
        self._proc: subprocess.Popen | None = None
        self._exit_w: int | None = None
        self._seen = 0
        self.relay: subprocess.Popen | None = None  # granted loopback ports (relay_serve), one process
        self.signal_r: int | None = None  # the relay's "bytes came in" pipe (non-blocking)

    @classmethod
    def of_pid(cls, pid: int) -> NetNS:
        import fcntl

        fds: list[int] = []
        try:
            fds.append(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC))
            # the user namespace that owns it (NS_GET_USERNS), not the process's own: without privileges bwrap's
            # first process moves on to a nested one after setup, where slirp4netns (and the routes) have no power
            fds.append(fcntl.ioctl(fds[0], 0xB701))
            os.set_inheritable(fds[1], False)
            fds.append(os.open(f"/proc/{pid}/net/dev", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        # without privileges bwrap's user namespace maps only the user's uid: slirp4netns's own sandbox needs uid 0
        # there (setegid(0) fails), as in the Landlock launcher's namespaces
        return cls(*fds, pid=pid, own_sandbox=os.geteuid() == 0)

    @property
    def net_fd(self) -> int:
        return self._fds["net"]

    def user_net_fds(self) -> tuple[int, int]:
        """The owning user namespace and the network namespace, as held (a re-planned Landlock launcher joins)."""
        return self._fds["user"], self._fds["net"]

    def join_argv(self, argv: list[str]) -> tuple[list[str], tuple[int, int]]:
        """`argv` started inside this namespace without privileges: a helper (`server.join_main`) enters the
        user namespace owning it, then the namespace, and execs `argv` (bwrap then makes its own nested user
        namespace and no network one). Returns the command line and the fds to pass it."""
        import sys

        fds = self.user_net_fds()
        plan = json.dumps({"user": fds[0], "net": fds[1]})
        return [sys.executable, "-I", "-S", "-c", BOOT + "join_main; join_main()", "hermes-netjoin", plan, *argv], fds

    def usable(self) -> bool:
        """Still configured (slirp4netns running): a re-planned launcher may join it (Launcher._joined)."""
        return "net" in self._fds and self._proc is not None and self._proc.poll() is None

    def start(self, log_fd: int) -> None:
        """Start slirp4netns on a tap device inside, wait until it is configured."""
        self._block()
        ready_r, ready_w = os.pipe()
        exit_r, self._exit_w = os.pipe()  # closed by us (or our death): slirp4netns exits
        net, user = self._fds["net"], self._fds["user"]
        argv = [forwarder() or "slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
                "--enable-seccomp", "--ready-fd", str(ready_w), "--exit-fd", str(exit_r),
                *(["--enable-sandbox"] if self._own_sandbox else [])]
        own_userns = os.fstat(user).st_ino != os.stat("/proc/self/ns/user").st_ino  # bwrap/the launcher made one
        if self._pid:  # the user namespace owning the network one (of_pid): bwrap's first process may have moved
            # on to a nested one by now (without privileges), which has no power over the network namespace
            argv += [*(["--userns-path", f"/proc/self/fd/{user}"] if own_userns else []), str(self._pid)]
        else:
            argv += ["--netns-type=path", *(["--userns-path", f"/proc/self/fd/{user}"] if own_userns else []),
                     f"/proc/self/fd/{net}"]
        argv.append("tap0")
        if self._own_sandbox and os.geteuid() == 0:
            argv = _private_mounts(argv)
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

    def _block(self) -> None:
        """Unreachable routes for the link-local range (cloud metadata) inside the namespace, added before
        slirp4netns gives it a way out: no command ever sees them routed. The sandbox does not start without
        them. In our own user namespace (root) this thread enters the network namespace for it; in one bwrap
        made (no privileges) a helper process enters both (`server.netcfg_main`: a thread of a threaded
        process cannot join a user namespace)."""
        import sys

        if self._blocked:
            return
        if os.fstat(self._fds["user"]).st_ino == os.stat("/proc/self/ns/user").st_ino:
            from hermes_agent.terminal.sandbox.nsmount import reject_routes, remember_host

            remember_host()  # hermes's main thread: the host's namespace
            try:
                in_netns(self._fds["net"], reject_routes)
            except OSError as exc:
                raise OSError(f"cannot block link-local and the host's addresses in the sandbox's network: {exc}") from exc
            return

        fds = {"user": self._fds["user"], "net": self._fds["net"]}
        argv = [sys.executable, "-I", "-S", "-c", BOOT + "netcfg_main; netcfg_main()", "hermes-netcfg",
                json.dumps(fds)]
        try:
            res = subprocess.run(argv, pass_fds=tuple(fds.values()), capture_output=True, timeout=_READY_TIMEOUT_S,
                                 check=False, stdin=subprocess.DEVNULL, env={})
        except (OSError, subprocess.SubprocessError) as exc:
            raise OSError(f"cannot block link-local addresses in the sandbox's network: {exc}") from exc
        if res.returncode != 0:
            why = res.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {res.returncode}"]
            raise OSError(f"cannot block link-local addresses in the sandbox's network: {why[0]}")

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
    # "signal": a byte per chunk that came in from the host's side (NetNS.took_in)
    threads = relay_start(plan["ports"], plan["fds"], int(plan["signal"]))
    for thread in threads:
        thread.join()


def relay_start(ports: list, fds: list, signal_fd: int = -1) -> list[threading.Thread]:
    """A thread per granted port accepting on its listening socket (fd) inside the namespace (daemon threads,
    started); `signal_fd` -1: nobody counts what comes in."""
    threads = []
    for port, fd in zip(ports, fds, strict=True):
        listener = socket.socket(fileno=int(fd))
        listener.setblocking(True)
        threads.append(threading.Thread(target=_accept, args=(listener, int(port), signal_fd), daemon=True))
    for thread in threads:
        thread.start()
    return threads


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
