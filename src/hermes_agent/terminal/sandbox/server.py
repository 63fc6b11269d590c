"""The launcher process (stdlib only): started once per local backend inside the sandbox (under
bwrap, or restricting itself with Landlock first), it starts every command of that backend with
plain subprocess (the vfork fast path), so each command inherits the sandbox for ~1 ms.

Protocol on a unix stream socket, frames of a 4-byte length + JSON: the first frame from the
parent is {"landlock": [[path, rights]...] | null, "network": bool, "fence": bool, "keeper": bool,
"seccomp": {seccomp.Policy fields} | null, "listen": [loopback ports]}; it answers
{"ready": true, "listening": [ports]} (the listening sockets of those ports attached, netns.Relay) or
{"error": "..."}. Then {"id", "argv", "cwd", "env", "pty"} with three or more fds
attached (stdin, stdout, stderr, then the extra channels the child sees as fds 3, 4, ...) ->
{"id", "pid"} or {"id", "error"}, and later {"exit": pid, "code"}; {"signal": pid, "sig": n} signals the
process group of `pid` (pids are the sandbox's own: under bwrap it has its own pid namespace).
EOF from the parent ends the launcher and everything it started: under bwrap the pid namespace dies with
it; under Landlock a keeper process (a subreaper, in an outer Landlock domain the commands cannot signal)
kills every descendant, setsid, double fork and `env -i` included."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from queue import SimpleQueue

from hermes_agent.terminal.sandbox.nsmount import (  # noqa: F401  (re-exported names the launcher uses)
    _CLONE_NEWNET,
    _CLONE_NEWPID,
    _OUTER,
    _join_user_netns,
    _loopback_up,
    _own_proc,
    _own_user_netns,
    _reap_until,
    _unshare,
    bind_resolv,
    own_user,
    reject_routes,
    remember_host,
    user_binds,
    user_pidns,
)

MAX_FRAME = 64 * 1024 * 1024


def send_frame(sock: socket.socket, obj: object, fds: list[int] | tuple[int, ...] = ()) -> None:
    """One frame; `fds` ride on its first bytes."""
    data = json.dumps(obj).encode()
    data = struct.pack("!I", len(data)) + data
    sent = socket.send_fds(sock, [data], list(fds)) if fds else sock.send(data)
    if sent < len(data):
        sock.sendall(data[sent:])


def recv_frame(sock: socket.socket) -> tuple[object, list[int]] | None:
    """(object, fds) of the next frame, None at EOF."""
    head, fds = b"", []
    while len(head) < 4:
        chunk, got, _, _ = socket.recv_fds(sock, 4 - len(head), 64)
        if not chunk:
            for fd in got:
                os.close(fd)
            return None
        head += chunk
        fds += got
    size = struct.unpack("!I", head)[0]
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            return None
        body += chunk
    return json.loads(body), fds


def _take_controlling_tty() -> None:
    import fcntl
    import termios

    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    except OSError:
        pass


class _Server:
    def __init__(self, sock: socket.socket, fence_spawns: bool = False) -> None:
        self.sock = sock
        self.send_lock = threading.Lock()
        self.spawns: SimpleQueue | None = None
        if fence_spawns:  # commands start from one thread in a Landlock domain of its own (_spawn_thread)
            self.spawns = SimpleQueue()
            threading.Thread(target=self._spawn_thread, name="spawner", daemon=True).start()

    def _spawn_thread(self) -> None:
        """Landlock restricts the calling thread only: this thread takes one more (empty) domain and starts every
        command, so all commands share it (they may signal each other, across calls too) while the launcher's
        other threads stay outside it: with ABI >= 6 no command can signal (SIGSTOP: red-team round 6 a15), ptrace
        or reach the launcher itself; it signals them (they are nested below it)."""
        from hermes_agent.terminal.sandbox import landlock

        try:
            landlock.fence()
        except OSError as exc:
            sys.stderr.write(f"hermes sandbox: no domain for the commands' thread: {exc}\n")
        assert self.spawns is not None
        while True:
            req, fds, done = self.spawns.get()
            try:
                self.spawn(req, fds)
            finally:
                done.set()

    def send(self, obj: object) -> None:
        with self.send_lock:
            send_frame(self.sock, obj)

    def spawn(self, req: dict, fds: list[int]) -> None:
        std: list[int] = []
        targets: list[int] = []
        try:
            if len(fds) < 3:
                raise ValueError(f"expected at least 3 fds, got {len(fds)}")
            std, targets = _place(fds)
            proc = subprocess.Popen(
                req["argv"], stdin=std[0], stdout=std[1], stderr=std[2], cwd=req.get("cwd") or None,
                env=req.get("env"), start_new_session=True, pass_fds=tuple(targets),
                preexec_fn=_take_controlling_tty if req.get("pty") else None)
        except (OSError, ValueError, KeyError, subprocess.SubprocessError) as exc:
            self.send({"id": req.get("id"), "error": f"{type(exc).__name__}: {exc}"})
            return
        finally:
            for fd in (*fds, *std, *targets):
                _close(fd)
        self.send({"id": req.get("id"), "pid": proc.pid})
        threading.Thread(target=self._reap, args=(proc,), daemon=True).start()

    def _reap(self, proc: subprocess.Popen) -> None:
        code = proc.wait()
        try:
            self.send({"exit": proc.pid, "code": code})
        except OSError:
            pass

    def serve(self) -> None:
        while True:
            try:
                frame = recv_frame(self.sock)
            except (OSError, ValueError):
                return
            if frame is None:
                return
            req, fds = frame
            req = req if isinstance(req, dict) else {}
            if "ping" in req:  # the parent's heartbeat: a stopped or hung launcher stops answering (a15)
                for fd in fds:
                    _close(fd)
                self.send({"pong": req["ping"]})
                continue
            if "signal" in req:
                for fd in fds:
                    _close(fd)
                _signal_group(int(req.get("signal") or 0), int(req.get("sig") or 9))
                continue
            if self.spawns is not None:  # one at a time: spawn moves fds onto 3, 4... (no recv meanwhile)
                done = threading.Event()
                self.spawns.put((req, fds, done))
                done.wait()
            else:
                self.spawn(req, fds)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


_HIGH_FD = 100


def _place(fds: list[int]) -> tuple[list[int], list[int]]:
    """(stdin, stdout, stderr) moved out of the way (>= 100) and fds[3:] duplicated onto 3, 4, ... (the
    numbers the child sees: received fds may sit on those numbers, hence the move first). The caller
    closes both lists and the received fds."""
    high = [fcntl_dup_high(fd) for fd in fds]
    for fd in fds:
        _close(fd)
    targets = []
    for i, fd in enumerate(high[3:]):
        os.dup2(fd, 3 + i, inheritable=True)
        _close(fd)
        targets.append(3 + i)
    return high[:3], targets


def fcntl_dup_high(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)


def _signal_group(pid: int, sig: int) -> None:
    """Signal the process group `pid` leads (its own session), else the process itself."""
    if pid <= 1:
        return
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


_CONFINED = [False]  # set by _setup: the commands run confined (their thread then gets a domain of its own)


def _setup(sock: socket.socket) -> bool:
    """Apply the first frame's Landlock rules (when any) and answer ready/error. On the Landlock path the
    process splits first: the keeper stays behind (see `_keep`), the child serves."""
    frame = recv_frame(sock)
    if frame is None:
        return False
    cfg = frame[0] if isinstance(frame[0], dict) else {}
    if cfg.get("join") and len(frame[1]) == 2:  # the predecessor's namespace: its user and network namespaces
        cfg["join_fds"] = frame[1]
    else:
        for fd in frame[1]:
            os.close(fd)
    try:
        from hermes_agent.terminal.sandbox import landlock

        _CONFINED[0] = cfg.get("landlock") is not None or bool(cfg.get("fence"))
        if cfg.get("landlock") is not None:
            _confine(cfg, lambda channel: _split_keeper(sock, channel))
        elif cfg.get("fence"):  # bwrap: its pid namespace is the keeper
            landlock.fence()
            _install_seccomp(cfg)
        elif cfg.get("keeper"):  # unconfined (sandbox off or unavailable): still nothing outlives the session
            _split_keeper(sock)
    except OSError as exc:
        send_frame(sock, {"error": f"landlock/seccomp: {exc}"})
        return False
    try:
        own_net = cfg.get("landlock") is None or cfg.get("netns_made")  # bwrap asks only with its own
        listening = _listen(cfg.get("listen") or [] if own_net else [])
    except OSError as exc:
        send_frame(sock, {"error": f"loopback port: {exc}"})
        return False
    ns = _ns_fds() if cfg.get("netns_made") else []
    send_frame(sock, {"ready": True, "pid": os.getpid(), "listening": [p for p, _ in listening],
                      "netns": bool(cfg.get("netns_made")), "blocked": bool(cfg.get("netns_made")),
                      "pidns": bool(cfg.get("pidns_made"))},
               [*(s.fileno() for _, s in listening), *ns])
    for _, listener in listening:
        listener.close()  # hermes holds them now; no command inherits them
    for fd in ns:
        os.close(fd)
    return True


def _ns_fds() -> list[int]:
    """The network namespace this process made, the user namespace owning it, its counters (netns.NetNS)."""
    return [os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC),
            _OUTER.pop() if _OUTER else os.open("/proc/self/ns/user", os.O_RDONLY | os.O_CLOEXEC),
            os.open("/proc/self/net/dev", os.O_RDONLY | os.O_CLOEXEC)]


def _listen(ports: list) -> list[tuple[int, socket.socket]]:
    """The granted loopback ports, listened on inside the sandbox's own network namespace before any command
    runs; hermes relays what they accept to the host's 127.0.0.1 (netns.Relay)."""
    found = []
    for port in ports:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(64)
        found.append((int(port), listener))
    return found


_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER, _PR_CAPBSET_DROP = 1, 4, 36, 24
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4


def _confine(cfg: dict, split) -> None:  # type: ignore[no-untyped-def]
    """The Landlock path: `split` (the keeper stays behind, in no domain: it answers the metadata calls),
    with `pidns` a pid namespace and a /proc of the commands' own (root: made here; a normal user: in a user
    namespace of its own, nsmount.user_pidns), then, in the process that goes on,
    the Landlock domain and an inner one (commands cannot signal what serves them), no capabilities and
    (unless a socket is granted) no unix sockets."""
    from hermes_agent.terminal.sandbox import landlock

    rules = [(str(p), int(r)) for p, r in cfg["landlock"]]
    bound = [(str(p), int(r)) for p, r in cfg["landlock_bound"]] if cfg.get("landlock_bound") else None
    policy = cfg.get("seccomp") or {}
    pair = socket.socketpair() if policy.get("metadata") and policy.get("notify") else None
    writable = None
    if pair is not None:  # taken before any command runs: the tree the sandbox may create files in
        from hermes_agent.terminal.sandbox import metaguard

        writable = metaguard.writable_ids(bound or rules, landlock.MAKE_REG, landlock.WRITE_FILE)
    if pair is not None:  # a thread of the keeper-to-be: after unshare(CLONE_NEWPID) no thread can start
        _supervise(pair[0], writable or frozenset())
    remember_host()  # the host's addresses, unreachable from the namespace made below (nsmount.reject_routes)
    pidns = bool(cfg.get("pidns")) and _unshare(_CLONE_NEWPID)  # the next child is pid 1 of its own namespace
    split(pair[0] if pair else None)  # the keeper stays outside every Landlock domain
    resolv = str(cfg.get("resolv") or "")  # the namespace's resolv.conf (the host's names a loopback resolver)
    if cfg.get("join_fds"):  # a re-planned launcher without privileges: its predecessor's network namespace
        _join_user_netns(*cfg.pop("join_fds"), resolv=resolv)
        cfg["joined_user"] = True
    elif cfg.get("netns"):  # a network namespace for slirp4netns (netns.py): as root, else in user namespaces
        if _unshare(_CLONE_NEWNET):
            _loopback_up()
            reject_routes()
            cfg["netns_made"] = True
            if resolv:
                bind_resolv(resolv)
        else:
            cfg["netns_made"] = _own_user_netns(resolv)
    elif cfg.get("joined") and resolv:  # as root, started inside its predecessor's namespace
        bind_resolv(resolv)
    binds, copies = cfg.get("binds") or [], cfg.get("copies") or []
    if pidns:
        mounted = _own_proc(binds, copies)
    elif os.geteuid() != 0:  # a normal user: a pid namespace, /proc and read-only carve-outs all the same, in a
        # user namespace of its own (nsmount.user_pidns); without a pid namespace the carve-outs alone (user_binds)
        in_userns = bool(cfg.get("netns_made") or cfg.get("joined_user")) or own_user()
        got = user_pidns(binds, copies) if in_userns and cfg.get("pidns") else None
        mounted, pidns = got if got is not None else in_userns and user_binds(binds, copies), got is not None
    else:
        mounted = False
    cfg["pidns_made"] = pidns  # told to hermes in the ready frame (one line at session start when there is none)
    if not pidns and cfg.get("seccomp") is not None:  # the host's processes are in reach: seccomp `others`
        cfg["seccomp"]["others"] = True
    if mounted and bound is not None:
        rules = bound  # every carve-out is a read-only mount (made before Landlock: a domain may not mount), so
        # no dot-link target needs Landlock's seal and the credential-free git config covers its original
    landlock.apply(rules, network=bool(cfg.get("network", True)))
    landlock.fence()  # an inner domain: commands can reach neither the keeper nor the launcher's init
    _drop_capabilities()  # as root: no CAP_SYS_PTRACE into hermes (non-dumpable), as bwrap --cap-drop ALL
    listener = _install_seccomp(cfg)
    if pair is not None:  # the keeper answers chmod/chown/utime of every command (metaguard.py)
        pair[0].close()
        socket.send_fds(pair[1], [b"L"], [int(listener)])
        os.close(int(listener))
        pair[1].close()


def _install_seccomp(cfg: dict) -> bool | int:
    """The config's seccomp policy (keyring always; on the Landlock path also IPC, sockets, chmod bits);
    with `notify`, the listener fd."""
    if cfg.get("seccomp") is not None:
        from hermes_agent.terminal.sandbox import seccomp

        return seccomp.install(seccomp.Policy.from_config(cfg["seccomp"]))
    return False


def _supervise(channel: socket.socket, writable: frozenset) -> None:
    """The keeper's side: receive the seccomp listener from the serving child and answer it (metaguard.py)."""
    from hermes_agent.terminal.sandbox import metaguard

    def run() -> None:
        try:
            _, fds, _, _ = socket.recv_fds(channel, 1, 1)
        except OSError:
            return
        finally:
            channel.close()
        if fds:
            metaguard.Supervisor(fds[0], writable).serve()

    threading.Thread(target=run, name="hermes-metaguard", daemon=True).start()


def _drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets (a no-op for a normal user)."""
    import ctypes
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last
            break
    header = ctypes.create_string_buffer(struct.pack("Ii", 0x20080522, 0), 8)  # _LINUX_CAPABILITY_VERSION_3
    data = ctypes.create_string_buffer(bytes(24), 24)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _split_keeper(sock: socket.socket | None, channel: socket.socket | None = None) -> None:
    """Become a subreaper and fork: the child returns and serves; this process becomes the keeper and
    never returns. Orphans (setsid + double fork, `env -i`) are re-parented to the keeper, not to init.
    Without `sock` (one wrapped program, `exec_main`) the keeper lets go of every fd it inherited: the
    program's readers must see EOF when the program ends. `channel`: where the child sends the seccomp
    listener the keeper answers (metadata calls decided by path; its thread is already running)."""
    import signal

    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    parent = os.getppid()
    child = os.fork()
    if child == 0:
        return
    if sock is not None:
        sock.close()
    else:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        keep = channel.fileno() if channel is not None else os.sysconf("SC_OPEN_MAX")
        os.closerange(3, keep)  # the program's extra channels too (a browser's pipes)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
    signal.signal(signal.SIGTERM, lambda *_: _end(0))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)  # hermes died: take everything down
    if os.getppid() != parent:
        _end(0)
    _keep(child)


def _keep(server: int) -> None:
    """Reap whatever is re-parented here; when the serving child ends, kill every descendant and exit."""
    _end(_reap_until(server))


def _end(code: int) -> None:
    kill_descendants(os.getpid())
    os._exit(code)


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def kill_descendants(root: int, rounds: int = 50) -> int:
    """SIGKILL every descendant of `root` (repeated until none is left: a forking process may add
    some while we walk); reaps what becomes our child. Returns how many were signalled."""
    total = 0
    for _ in range(rounds):
        kids = _children_map()
        todo, found = list(kids.get(root, ())), []
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += kids.get(pid, ())
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, 9)
                total += 1
            except OSError:
                pass
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.005)
            except ChildProcessError:
                break
    return total


def main() -> None:
    # First thing, before any command exists: not dumpable, so a command (same uid, no CAP_SYS_PTRACE) cannot
    # ptrace it, pidfd_getfd its socket to hermes or read /proc/<launcher>/fd|environ. A command gets its own
    # dumpable flag back at execve; it never shares the launcher's.
    _prctl(_PR_SET_DUMPABLE, 0)
    received = int(sys.argv[2])  # argv[1] is the launcher's tag (launcher.CONFINED_TAG or UNCONFINED_TAG)
    sock = socket.socket(fileno=fcntl_dup_high(received))  # fds 3, 4... are the commands' channels
    os.close(received)
    if _setup(sock):
        _Server(sock, fence_spawns=_CONFINED[0]).serve()


def relay_main() -> None:
    """The relay of granted loopback ports (netns.relay_serve): argv[1] is the tag, argv[2] the ports and
    their listening sockets' fds (JSON); it dies with hermes."""
    import signal

    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    from hermes_agent.terminal.sandbox.netns import relay_serve

    relay_serve(json.loads(sys.argv[2]))


def netcfg_main() -> None:
    """The network namespace's configurator (netns.NetNS.start), run before slirp4netns gives the namespace a
    way out: argv[2] is {"user": fd, "net": fd}; it enters them and adds the unreachable routes
    (nsmount.BLOCKED_ROUTES). Exit 1 with one line on stderr when it cannot."""
    from hermes_agent.terminal.sandbox.nsmount import enter, reject_routes, remember_host

    plan = json.loads(sys.argv[2])
    try:
        remember_host()
        enter(int(plan["user"]), int(plan["net"]))
        reject_routes()
    except OSError as exc:
        sys.stderr.write(f"{exc.strerror or exc}\n")
        os._exit(1)


def join_main() -> None:
    """netns.NetNS.join_argv: argv[2] {"user": fd, "net": fd}; enter them, close them, exec argv[3:]."""
    from hermes_agent.terminal.sandbox.nsmount import enter

    plan = json.loads(sys.argv[2])
    try:
        enter(int(plan["user"]), int(plan["net"]))
        os.close(int(plan["user"]))
        os.close(int(plan["net"]))
        os.execvp(sys.argv[3], sys.argv[3:])
    except OSError as exc:
        sys.stderr.write(f"hermes sandbox: cannot join the sandbox's network namespace: {exc}\n")
        os._exit(126)


def netwrap_main() -> None:
    """A wrapped program's own network namespace (netwrap.py): argv[1] the tag, argv[2] the plan, the rest
    the sandbox's command line."""
    from hermes_agent.terminal.sandbox import netwrap

    netwrap.main(json.loads(sys.argv[2]), sys.argv[3:])


def unpack_config(raw: str):  # type: ignore[no-untyped-def]
    """launcher.pack_config's text back (JSON, or zlib + base64 behind "z:")."""
    if raw.startswith("z:"):
        import base64
        import zlib

        raw = zlib.decompress(base64.b64decode(raw[2:])).decode()
    return json.loads(raw)


def exec_main() -> None:
    """`sandbox_launch` for Landlock: argv[1] is the tag, argv[2] the config (JSON; "env": in HERMES_SANDBOX_PLAN,
    the way sandbox_launch passes it), argv[3:] the program.
    As the launcher: a keeper stays in the outer domain and kills every descendant when the program ends (or hermes
    dies, or it gets SIGTERM); the program runs in the inner domain, with `pidns` as pid 2 of its own namespace."""
    _prctl(_PR_SET_DUMPABLE, 0)  # the keeper; the program is dumpable again after its execve
    raw = sys.argv[2]
    if raw == "env":  # wrapped.sandbox_launch: the plan came in the environment, not on the command line
        raw = os.environ.pop("HERMES_SANDBOX_PLAN", "")
    cfg = unpack_config(raw)
    from hermes_agent.terminal.sandbox import argscrub

    argscrub.scrub(6)  # `python -I -S -c BOOT TAG`: not the plan (hidden paths' names) nor the program's words
    try:
        if cfg.get("landlock") is not None:
            # The unix-socket filter only when asked (an MCP server, issue 19 class 2): Chromium breaks under it.
            if not cfg.get("unix_filter"):
                cfg["seccomp"] = {**(cfg.get("seccomp") or {}), "unix": False}
            _confine(cfg, lambda channel: _split_keeper(None, channel))
        else:  # bwrap: its pid namespace is the keeper
            _install_seccomp(cfg)
    except OSError as exc:
        sys.stderr.write(f"hermes sandbox: landlock/seccomp: {exc}\n")
        os._exit(126)
    from hermes_agent.terminal.sandbox.netwrap import handshake

    try:
        handshake(cfg)  # behind netwrap: its network namespace is set up before the program runs
    except OSError as exc:
        sys.stderr.write(f"hermes sandbox: network namespace: {exc}\n")
        os._exit(125)
    try:
        os.execvp(sys.argv[3], sys.argv[3:])
    except OSError as exc:
        sys.stderr.write(f"hermes sandbox: cannot run {sys.argv[3]}: {exc}\n")
        os._exit(127)
