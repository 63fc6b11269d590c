"""The parent side of the per-backend launcher: choose the mechanism (bwrap, else Landlock, probed
once), start the launcher inside the sandbox, send it spawn requests, and hand back Popen-like
proxies whose exit status the launcher reports and which it signals. Nothing here opens a path the
sandbox can write: the launcher's log is an anonymous file (memfd) this side holds.
`sandbox_launch` wraps one argv (MCP servers)."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from hermes_agent.errors import HermesError
from hermes_agent.terminal.sandbox import landlock, netns, proctree, views
from hermes_agent.terminal.sandbox.bwrap import bwrap_argv, bwrap_problem
from hermes_agent.terminal.sandbox.llconfig import landlock_config
from hermes_agent.terminal.sandbox.proxy import _HEARTBEAT_S, SandboxedProcess
from hermes_agent.terminal.sandbox.server import recv_frame, send_frame
from hermes_agent.terminal.sandbox.spec import SandboxSpec

_START_TIMEOUT_S = 30.0  # a loaded 2-core machine: python, the plan and a namespace's forwarder
_PONG_WITHIN_S = 10.0  # a launcher that has not answered a ping for this long is stopped or hung: killed (a15)
_SRC_ROOT, _BOOT = netns.SRC_ROOT, netns.BOOT
# The launcher's (and the MCP keeper's) argv[1]: what `peer.py` reads in /proc/<pid>/cmdline to know that
# everything below that process is confined. Commands cannot change another process's command line.
CONFINED_TAG, UNCONFINED_TAG = "hermes-confined", "hermes-unconfined"


class SandboxError(HermesError):
    """The sandbox could not be started: the command was not run."""


@functools.cache
def landlock_problem() -> str | None:
    abi = landlock.abi_version()
    return None if abi >= 1 else "Landlock is not available in this kernel"


_PIDNS_PROBE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if uid != 0:  # a normal user: in a user namespace of its own (nsmount.own_user)
    if libc.unshare(0x10000000) != 0:
        os._exit(1)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
if libc.unshare(0x20000000) != 0:
    os._exit(1)
pid = os.fork()
if pid == 0:
    ok = libc.unshare(0x00020000) == 0 and libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) == 0
    os._exit(0 if ok and libc.mount(b"proc", b"/proc", b"proc", 14, None) == 0 else 1)
os._exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@functools.cache
def landlock_pidns_works() -> bool:
    """Can the Landlock launcher give commands a pid namespace and /proc of their own here (server._own_proc; a
    normal user's in a user namespace of its own, nsmount.user_pidns)?"""
    return _probe(_PIDNS_PROBE)


_BINDS_PROBE = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nos._exit(0 if libc.unshare(0x10020000) == 0 "
                "and libc.mount(b'none', b'/', None, 0x4000 | 0x40000, None) == 0 else 1)")


@functools.cache
def landlock_user_binds_work() -> bool:
    """Can a normal user's Landlock launcher bind the carve-outs read-only (nsmount.user_binds)?"""
    return _probe(_BINDS_PROBE)


def landlock_binds_work() -> bool:
    """Does this user's Landlock launcher bind the carve-outs read-only (in its pid namespace's own mount
    namespace, or a normal user's without one)?"""
    return landlock_pidns_works() or (os.geteuid() != 0 and landlock_user_binds_work())


_NETNS_PROBE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os._exit(0 if libc.unshare(0x40000000) == 0 or libc.unshare(0x50000000) == 0 else 1)
"""


@functools.cache
def landlock_netns_works() -> bool:
    """Can the Landlock launcher make a network namespace here (as root, or in user namespaces of its own)?"""
    return _probe(_NETNS_PROBE)


def _probe(code: str) -> bool:
    try:
        return subprocess.run([sys.executable, "-I", "-S", "-c", code], timeout=10, check=False,
                              capture_output=True).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def choose_mechanism(spec: SandboxSpec) -> tuple[str | None, str]:
    """(mechanism or None, why not): bwrap when it works here, else Landlock."""
    if not spec.enabled:
        return None, "sandbox.mode is off"
    problems = []
    for name, probe in (("bwrap", bwrap_problem), ("landlock", landlock_problem)):
        if spec.mechanism not in ("auto", name):
            continue
        problem = probe()
        if problem is None:
            return name, ""
        problems.append(problem)
    return None, "; ".join(problems) or f"unknown sandbox.mechanism {spec.mechanism!r}"


def launcher_env() -> dict[str, str]:
    """The launcher's own environment: nothing secret (commands get theirs per request, and a command
    can read its parent's /proc/<pid>/environ)."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME")
    return {k: os.environ[k] for k in keep if k in os.environ}


# Under bwrap: namespaces do ipc and network, read-only mounts do chmod outside the writable roots (inside them
# no setuid/setgid bit); the keyring is not namespaced.
BWRAP_SECCOMP = {"keyring": True, "setid": True}


def bwrap_seccomp(spec: SandboxSpec) -> dict:
    """The launcher's filter under bwrap. With the host's /tmp shared (`sandbox.shared_tmp: true`) and no
    socket granted, unix sockets are refused as on the Landlock path (a38): the host's sockets there are
    covered only when the launcher starts, and one a daemon binds later (docker, tmux, an IDE) would be
    reachable. With a grant, the mount-time covering alone holds (README)."""
    if not spec.private_tmp and not spec.sockets:
        return {**BWRAP_SECCOMP, "unix": True}
    return BWRAP_SECCOMP


def pack_config(cfg: dict | list) -> str:
    """The keeper's plan as one argument: JSON, or zlib + base64 behind "z:" when it is big (the kernel refuses
    one argument over 128 KiB, and a HOME or /root with many entries makes the Landlock plan that long)."""
    text = json.dumps(cfg, separators=(",", ":"))
    if len(text) < 60000:
        return text
    import base64
    import zlib

    return "z:" + base64.b64encode(zlib.compress(text.encode(), 6)).decode()


def _args_fd(args: list[str]) -> int:
    """An anonymous file holding `args` NUL-terminated, read from the start (bwrap's `--args FD`)."""
    fd = os.memfd_create("hermes-bwrap-args", os.MFD_CLOEXEC)
    os.write(fd, b"".join(os.fsencode(a) + b"\0" for a in args))  # a name that is not UTF-8 (rt15 d07)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _not_dumpable() -> None:
    """Landlock (unlike bwrap's pid namespace) leaves /proc/<hermes>/environ readable to the commands of the
    same user; a non-dumpable process's /proc files need CAP_SYS_PTRACE, which commands no longer have.
    /proc/<hermes>/cmdline stays readable to everyone (mode 0444): its arguments (the prompt of `chat -q`)
    are blanked, `ps` shows the program only (argscrub.py)."""
    import ctypes

    from hermes_agent.terminal.sandbox import argscrub

    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    argscrub.scrub(3 if sys.orig_argv[1:2] == ["-m"] else 2)


def _exit_words(code: int) -> str:
    return f"exit status {code}" if code >= 0 else f"signal {-code}: {signal.strsignal(-code) or 'unknown'}"


class _Unsent(ConnectionError):
    """A request that never reached the launcher (so nothing ran)."""


_SPAWNER: list = []  # one long-lived thread that starts every launcher
_SPAWNER_LOCK = threading.Lock()


def _from_spawner(start):  # type: ignore[no-untyped-def]
    """Run `start()` (a Popen) on one thread that lives as long as hermes. The launcher's death signal
    (bwrap --die-with-parent, the keeper's PR_SET_PDEATHSIG) follows the *thread* that forked it: started
    from a turn's or a pool's short-lived thread, the session's sandbox died with that thread."""
    with _SPAWNER_LOCK:
        if not _SPAWNER:
            from concurrent.futures import ThreadPoolExecutor

            _SPAWNER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-sandbox-spawner"))
        pool = _SPAWNER[0]
    return pool.submit(start).result()


class Launcher:
    """One launcher process per backend, restarted when it died before a request reached it."""

    def __init__(self, spec: SandboxSpec, mechanism: str, joined: netns.NetNS | None = None) -> None:
        self.spec = spec
        self.mechanism = mechanism
        self._joined = joined  # a re-planned launcher's predecessor's namespace: its servers stay reachable
        self._borrowed = False  # self.net is the predecessor's (it closes it)
        self._log_fd: int | None = None  # the launcher's stderr: an anonymous file only we hold
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self.net: netns.NetNS | None = None  # bwrap's own network namespace (network on, slirp4netns here)
        self._pending: dict[int, list] = {}
        self._by_pid: dict[int, SandboxedProcess] = {}
        self._next = 0
        self._ping_at = 0.0  # when the unanswered ping went out (0: none outstanding)
        self._pinged = 0.0  # when the last ping went out
        self.lost_why = ""  # set when the launcher was killed for not answering
        self._starting: socket.socket | None = None  # a start under way: its socket (abort_start shuts it)
        self._aborted = False  # the session is closing: no start begins (a warm-up's)
        self.tree: proctree.Tree | None = None  # processes below it when it became ready (`strays`)
        self.pidns = False  # Landlock: its commands live in a pid namespace of their own (its ready frame says)
        self.retired = False  # the sandbox was re-planned: later commands run in a newer launcher (runner.py)

    def check(self) -> None:
        """The heartbeat, called by whoever waits on the launcher: ping it (at most every _HEARTBEAT_S); when a
        ping has gone unanswered for _PONG_WITHIN_S (a command SIGSTOPped it, red-team round 6 a15; or it hangs),
        kill it with everything it started, so every wait on it ends; the next spawn starts a fresh one."""
        now = time.monotonic()
        with self._lock:
            sock = self._sock
            if sock is None:
                return
            if self._ping_at and now - self._ping_at > _PONG_WITHIN_S:
                stuck = True
            else:
                stuck = False
                if not self._ping_at and now - self._pinged >= _HEARTBEAT_S:
                    self._ping_at = self._pinged = now
                    try:
                        send_frame(sock, {"ping": 1})
                    except OSError:
                        pass
        if stuck:
            self.lost_why = (f"the sandbox launcher stopped answering for {_PONG_WITHIN_S:g}s (a command may have "
                             "stopped it with SIGSTOP); it was killed with everything it ran and the next "
                             "command starts a fresh one")
            self._close_launcher()

    # -- lifecycle -------------------------------------------------------------------------

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._sock is not None

    def start(self) -> None:
        """Start the launcher; when that fails and the spec can be planned again, once more on a fresh plan (a
        path the plan named may have gone between planning and launch: bwrap "Can't mkdir ...")."""
        try:
            try:
                self._start_once()
            except SandboxError:  # and once more when it died without a word (a start racing a loaded machine)
                if self._aborted:
                    raise
                if self.spec.replan is not None:
                    self.spec = self.spec.replanned()
                self._start_once()
        finally:
            self._starting = None

    def abort_start(self) -> None:
        """The session is closing: a start under way (a warm-up's) fails now, and none begins after this."""
        self._aborted = True
        sock = self._starting
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _start_once(self) -> None:
        if self._aborted:
            raise SandboxError(f"cannot start the {self.mechanism} sandbox: the session is closing")
        if self.mechanism == "landlock":
            _not_dumpable()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._starting = parent
        if self._aborted:  # closed between the check above and now
            parent.shutdown(socket.SHUT_RDWR)
        tag = CONFINED_TAG if self.mechanism in ("bwrap", "landlock") else UNCONFINED_TAG
        boot = [sys.executable, "-I", "-S", "-c", _BOOT + "main; main()", tag, str(child.fileno())]
        argv, passed = boot, [child.fileno()]
        own_net = self.spec.network and netns.forwarder() is not None and self.mechanism in ("bwrap", "landlock")
        # the predecessor's namespace (its servers stay reachable): as root this thread enters it while it starts
        # the launcher; bwrap without privileges, a helper enters it and execs bwrap (netns.join_argv)
        join = self._joined if own_net and self._joined is not None and self._joined.usable() else None
        info_r = None
        if self.mechanism == "bwrap":  # options through `--args FD`: /proc/<pid>/cmdline shows no hidden path
            binds: list[int] = []  # the writable roots and carve-outs, bound by no-follow fds (bwrap._bind)
            prefix = bwrap_argv(self.spec, own_net=own_net and join is None, fds=binds)
            passed += binds
            if own_net:  # its own namespace, or its predecessor's: only its resolv.conf
                info_r, more = netns.bwrap_net_options(passed) if join is None else (None, [])
                prefix[-1:-1] = more or netns.bwrap_resolv_options(passed)
            passed.append(_args_fd(prefix[1:]))
            argv = [prefix[0], "--args", str(passed[-1]), *boot]
        held = ()  # the joined namespace's fds, passed to the helper (netns holds them: not closed here)
        if join is not None and os.geteuid() != 0 and self.mechanism == "bwrap":
            argv, held = join.join_argv(argv)
        sent = join.user_net_fds() if join is not None and os.geteuid() != 0 and self.mechanism == "landlock" else ()
        env = launcher_env()
        try:
            if self._log_fd is None:
                self._log_fd = os.memfd_create("hermes-sandbox-log", os.MFD_CLOEXEC)
            start = functools.partial(
                subprocess.Popen, argv, stdin=subprocess.DEVNULL, stdout=self._log_fd, stderr=self._log_fd,
                pass_fds=(*passed, *held), start_new_session=True, env=env)
            thread_join = join is not None and not held and not sent
            self._proc = _from_spawner(functools.partial(netns.in_netns, join.net_fd, start) if thread_join else start)
        except OSError as exc:
            parent.close()
            if info_r is not None:
                os.close(info_r)
            raise SandboxError(f"cannot start the {self.mechanism} sandbox: {exc}") from exc
        finally:
            child.close()
            for fd in passed[1:]:
                os.close(fd)
        if info_r is not None:
            try:
                self._start_net(parent, lambda: netns.NetNS.of_pid(netns.read_child_pid(info_r)))
            finally:
                os.close(info_r)
        parent.settimeout(_START_TIMEOUT_S)
        try:
            # with `sent`: the namespace the launcher joins (server._setup)
            send_frame(parent, self._first_frame(own_net, join is not None, bool(sent)), sent)
            reply = recv_frame(parent)
        except TimeoutError:
            self._fail_start(parent, f"the launcher did not answer within {_START_TIMEOUT_S:.0f} s")
        except (OSError, ValueError):
            reply = None
        ok = reply is not None and isinstance(reply[0], dict) and reply[0].get("ready")
        if not ok:
            self._fail_start(parent, reply[0].get("error") if reply and isinstance(reply[0], dict) else None)
        self._take_ready(parent, reply[0], list(reply[1]), join)  # type: ignore[index]
        self.tree = proctree.Tree(self._proc.pid)  # its own processes, before any command
        parent.settimeout(None)
        self._ping_at, self.lost_why = 0.0, ""
        self._sock = parent
        threading.Thread(target=self._read, args=(parent,), name="hermes-sandbox", daemon=True).start()

    def strays(self) -> bool:
        """Are confined processes alive below it that were not there when it became ready (an orphan of a
        finished command: `setsid`, double fork, `&`; or a background process)?"""
        tree, proc = self.tree, self._proc
        return tree is not None and proc is not None and proc.poll() is None and tree.grown()

    def _take_ready(self, parent: socket.socket, ready: dict, fds: list[int], join: netns.NetNS | None) -> None:
        """The launcher's ready frame: the granted ports' listening sockets (relayed), and under Landlock the
        namespace it made (slirp4netns started for it here)."""
        listening, self.pidns = ready.get("listening") or [], bool(ready.get("pidns"))
        if self.mechanism == "landlock" and ready.get("netns") and len(fds) == len(listening) + 3:
            ns = fds[len(listening):]  # its network and user namespaces and net/dev, opened before any command
            del fds[len(listening):]
            # unprivileged, slirp4netns cannot make its own mount sandbox in the launcher's user namespaces
            self._start_net(parent, lambda: netns.NetNS(*ns, own_sandbox=os.geteuid() == 0,
                                                        blocked=bool(ready.get("blocked"))))
        if join is not None:
            self.net, self._borrowed = join, True
        if self.net is not None and not self._borrowed:
            self._relay(listening, fds)
        else:
            for fd in fds:
                os.close(fd)

    def _first_frame(self, own_net: bool, joined: bool, sent: bool) -> dict:
        """The launcher's plan (server._setup): `own_net` a network namespace of its own or (`joined`) its
        predecessor's, whose fds ride along when `sent` (Landlock without privileges)."""
        if self.mechanism == "landlock":
            return {**landlock_config(self.spec, own_net), "netns": own_net and not joined, "join": sent,
                    "joined": joined}
        return {"landlock": None, "fence": self.mechanism == "bwrap", "keeper": True,
                "seccomp": bwrap_seccomp(self.spec) if self.mechanism == "bwrap" else None,
                "listen": list(self.spec.loopback_ports) if own_net and not joined else []}

    def _start_net(self, parent: socket.socket, make) -> None:  # type: ignore[no-untyped-def]
        """slirp4netns for the namespace just made (`make()`: its NetNS); the launcher fails to start without
        it."""
        try:
            self.net = make()
            self.net.start(self._log_fd)  # type: ignore[union-attr]
        except OSError as exc:
            self._fail_start(parent, f"network namespace: {exc}")

    def _relay(self, ports: list, fds: list[int]) -> None:
        """Relay the granted loopback ports the launcher listens on inside to the host's: one process holding
        the listening sockets, tagged like a launcher (peer.py counts its connections as confined)."""
        assert self.net is not None
        if not ports:
            for fd in fds:
                os.close(fd)
            return
        signal_r, signal_w = os.pipe()
        os.set_blocking(signal_r, False)
        os.set_blocking(signal_w, False)
        self.net.signal_r = signal_r
        argv = [sys.executable, "-I", "-S", "-c", _BOOT + "relay_main; relay_main()", CONFINED_TAG,
                json.dumps({"ports": [int(p) for p in ports], "fds": fds, "signal": signal_w})]
        try:
            self.net.relay = _from_spawner(functools.partial(
                subprocess.Popen, argv, stdin=subprocess.DEVNULL, stdout=self._log_fd, stderr=self._log_fd,
                pass_fds=(*fds, signal_w), start_new_session=True, env=launcher_env()))
        finally:
            for fd in (*fds, signal_w):
                os.close(fd)

    def took_in(self) -> bool | None:
        """Did bytes arrive from outside the sandbox's network namespace since the last look? None: no
        namespace of its own (the host's network, or none at all), so nobody can tell."""
        return self.net.took_in() if self.net is not None else None

    def _fail_start(self, parent: socket.socket, error: object) -> None:
        parent.close()
        net, self.net = self.net, None
        if net is not None:
            net.close()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        code = self._proc.wait() if self._proc is not None else None
        # slirp4netns shares the log (its seccomp note, its addresses): never the launcher's or bwrap's last word
        log = [line for line in self.log().strip().splitlines()
               if not line.startswith(("seccomp: ", "* ", "WARNING: ", "sent tapfd", "received tapfd",
                                       "Starting slirp", "starting slirp", "do_slirp"))]
        log = [line for line in log if line.startswith("bwrap: ")] or log  # bwrap's own word first
        ended = f"the launcher ended ({_exit_words(code)}) without answering" if code is not None else "no launcher"
        why = error or (f"{log[-1]} ({ended})" if log else ended)
        why = f"{why}{views.plan_size_note((*self.spec.readonly, *self.spec.pinned, *self.spec.secrets))}"
        self._proc = None
        raise SandboxError(f"cannot start the {self.mechanism} sandbox: {why}")

    def log(self, limit: int = 65536) -> str:
        """The tail of what the launcher (and bwrap) wrote to stderr."""
        if self._log_fd is None:
            return ""
        try:
            size = os.fstat(self._log_fd).st_size
            data = os.pread(self._log_fd, limit, max(size - limit, 0))
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        self._close_launcher()
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

    def _close_launcher(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:  # first: the launcher winds down while slirp4netns is waited for
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        net, self.net = self.net, None
        if net is not None and not self._borrowed:
            net.close()
        self._borrowed = False
        if self._proc is not None:
            netns.reap(self._proc)
            self._proc = None

    # -- requests --------------------------------------------------------------------------

    def signal(self, pid: int, sig: int) -> None:
        """Signal the process group of `pid` (a pid the launcher reported)."""
        with self._lock:
            sock = self._sock
            if sock is None:
                return
            try:
                send_frame(sock, {"signal": pid, "sig": int(sig)})
            except OSError:
                pass

    def warm(self) -> None:
        """Start the launcher now if it is not running (a warm-up ahead of the first command: bootstrap/warm.py);
        a spawn meanwhile waits for this start and uses it."""
        with self._lock:
            if not self.alive() and not self._aborted:
                self._close_launcher()
                self.start()

    def spawn(self, argv: list[str], *, cwd: str, env: dict[str, str], stdin: int, stdout: int, stderr: int,
              pty: bool = False, pipes: tuple = (None, None), extra: tuple[int, ...] = ()) -> SandboxedProcess:
        """Start `argv` inside the sandbox with the given fds (`extra` become its fds 3, 4, ...);
        restarts a dead launcher once."""
        for attempt in (1, 2):
            with self._lock:
                if not self.alive():
                    self._close_launcher()
                    self.start()
            try:
                return self._request(argv, cwd, env, (stdin, stdout, stderr, *extra), pty, pipes)
            except _Unsent as exc:  # never reached the launcher: safe to try once more on a fresh one
                if attempt == 2:
                    raise SandboxError(f"the sandbox launcher failed: {exc}") from exc
                self._close_launcher()
            except (OSError, ConnectionError) as exc:  # sent: it may have run, so it is never run twice
                self._close_launcher()
                raise SandboxError(f"the sandbox launcher died while starting the command (it may have run): "
                                   f"{exc}") from exc
        raise AssertionError("unreachable")

    def _request(self, argv: list[str], cwd: str, env: dict[str, str], fds: tuple[int, ...], pty: bool,
                 pipes: tuple) -> SandboxedProcess:
        slot: list = [threading.Event(), None, None]
        with self._lock:
            self._next += 1
            rid = self._next
            self._pending[rid] = slot
            slot[2] = (argv, pipes)
            sock = self._sock
            if sock is None:
                self._pending.pop(rid, None)
                raise _Unsent("launcher not running")
            try:
                send_frame(sock, {"id": rid, "argv": argv, "cwd": cwd, "env": env, "pty": pty}, fds)
            except OSError as exc:  # the launcher reads whole frames only: a failed send ran nothing
                self._pending.pop(rid, None)
                raise _Unsent(str(exc)) from exc
        while not slot[0].wait(0.5):
            self.check()  # a stopped launcher never answers: killed after _PONG_WITHIN_S, never waited on forever
            if not self.alive():
                self._pending.pop(rid, None)
                raise ConnectionError(self.lost_why or "the launcher exited")
        reply = slot[1]
        if isinstance(reply, SandboxedProcess):
            return reply
        if isinstance(reply, dict):
            raise SandboxError(f"the sandbox could not start the command: {reply.get('error')}")
        raise ConnectionError("the launcher exited")

    def _read(self, sock: socket.socket) -> None:
        """Replies and exit reports, in order: a pid reply always precedes its exit report."""
        while True:
            try:
                frame = recv_frame(sock)
            except (OSError, ValueError):
                frame = None
            if frame is None:
                break
            msg = frame[0] if isinstance(frame[0], dict) else {}
            if "pong" in msg:
                self._ping_at = 0.0
                continue
            if "exit" in msg:
                proc = self._by_pid.pop(int(msg["exit"]), None)
                if proc is not None:
                    proc._finish(int(msg.get("code", -1)))
                continue
            slot = self._pending.pop(int(msg.get("id", -1)), None)
            if slot is None:
                continue
            if "pid" in msg:
                argv, (pin, pout) = slot[2]
                slot[1] = self._by_pid[int(msg["pid"])] = SandboxedProcess(int(msg["pid"]), argv, pin, pout,
                                                                                self)
            else:
                slot[1] = msg
            slot[0].set()
        for proc in list(self._by_pid.values()):
            proc._orphan()
        self._by_pid.clear()
        for slot in list(self._pending.values()):
            slot[0].set()
        self._pending.clear()
