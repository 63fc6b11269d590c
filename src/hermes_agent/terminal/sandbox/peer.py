"""Who is on the other end of a loopback TCP connection, and is it a confined process? (Linux; stdlib only.)

A keyless hermes service on 127.0.0.1 (`hermes api` without API_SERVER_KEY, the dashboard) shares loopback
with every command the sandbox runs (network on). It asks `confined_peer` before answering:

1. The peer's socket: NETLINK_SOCK_DIAG (inet_diag) looks the exact 4-tuple up (peer address/port as its
   local end) and gives the socket's inode; no socket found -> refused.
2. Its holder: the process whose /proc/<pid>/fd has `socket:[inode]`. A process that hides its fds
   (PR_SET_DUMPABLE 0, another uid), a socket parked in flight (SCM_RIGHTS) or in a thread's private fd
   table: no holder found -> refused. Fail closed.
   A socket another uid owns is refused first (strict: a keyless service serves only its own user).
3. Confined: the holder lives in another pid namespace than this server (bubblewrap) or has, among its
   ancestors, a hermes launcher or MCP keeper whose command line carries the confined tag (Landlock:
   orphans are re-parented to the keeper, a subreaper, so every confined process stays below one).

Nothing here trusts what the confined side can write: /proc/<pid>/status, stat and cmdline of a launcher
are the kernel's, and commands can change neither a launcher's command line nor their own ancestry."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import sys
import weakref

from hermes_agent.terminal.sandbox.launcher import CONFINED_TAG

_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, _NLMSG_ERROR = 4, 20, 1, 2
_TCP_ESTABLISHED_ETC = 0xFFF  # every TCP state
_NOCOOKIE = 0xFFFFFFFF
_LAUNCHER_CODE = "from hermes_agent.terminal.sandbox.server import "
_MAX_DEPTH = 64


def _sockid(src: str, sport: int, dst: str, dport: int) -> tuple[int, bytes]:
    """(family, packed inet_diag_sockid) for a socket whose local end is src:sport."""
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    family = socket.AF_INET6 if a.version == 6 else socket.AF_INET
    pad = 16 - len(a.packed)
    body = struct.pack("!HH", sport, dport) + a.packed + bytes(pad) + b.packed + bytes(16 - len(b.packed))
    return family, body + struct.pack("=III", 0, _NOCOOKIE, _NOCOOKIE)


def socket_inode(src: str, sport: int, dst: str, dport: int) -> tuple[int, int] | None:
    """(inode, uid) of the TCP socket whose local end is src:sport and remote end dst:dport, else None."""
    try:
        family, sockid = _sockid(src, sport, dst, dport)
    except ValueError:
        return None
    req = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, _TCP_ESTABLISHED_ETC) + sockid
    msg = struct.pack("=IHHII", 16 + len(req), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0) + req
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, _NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(2)
            nl.sendto(msg, (0, 0))
            data = nl.recv(8192)
    except OSError:
        return None
    if len(data) < 16 + 72:
        return None
    kind = struct.unpack_from("=H", data, 4)[0]
    if kind == _NLMSG_ERROR:
        return None
    uid, inode = struct.unpack_from("=II", data, 16 + 4 + 48 + 12)
    return (inode, uid) if inode else None


_recent: list[int] = []  # the last holders found: a client that connects again is usually the same process


def _holds(pid: int, target: str) -> bool:
    try:
        with os.scandir(f"/proc/{pid}/fd") as it:
            for entry in it:
                try:
                    if os.readlink(entry.path) == target:
                        return True
                except OSError:
                    continue
    except OSError:
        pass
    return False


def holder(inode: int) -> int | None:
    """A pid whose fd table holds `socket:[inode]` (recent holders first, then the newest processes),
    else None. Only an exact match counts, whatever the order."""
    target = f"socket:[{inode}]"
    me = os.getpid()
    found = next((pid for pid in list(_recent) if _holds(pid, target)), None)
    if found is None:
        pids = sorted((int(n) for n in os.listdir("/proc") if n.isdigit()), reverse=True)
        found = next((pid for pid in pids if pid != me and _holds(pid, target)), None)
    if found is not None:
        if found in _recent:
            _recent.remove(found)
        _recent.insert(0, found)
        del _recent[8:]
    return found


def _pidns_depth(pid: int | str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
        for line in fh:
            if line.startswith("NSpid:"):
                return len(line.split()) - 1
    return 1


def _stat(pid: int) -> tuple[int, int]:
    """(parent pid, start time in clock ticks): the pair names one process even after its pid is reused."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return int(fields[1]), int(fields[19])


def _is_confining_launcher(pid: int) -> bool:
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        argv = fh.read().split(b"\0")
    return (len(argv) > 5 and argv[1:4] == [b"-I", b"-S", b"-c"] and _LAUNCHER_CODE.encode() in argv[4]
            and argv[5] == CONFINED_TAG.encode())


_verdicts: dict[tuple[int, int], bool] = {}  # (pid, start time) -> confined; a process never changes sides
_own_depth: list[int] = []


def confined(pid: int) -> bool:
    """True when `pid` runs inside a hermes sandbox (or cannot be read: it vanished mid-walk)."""
    try:
        key = (pid, _stat(pid)[1])
        if key in _verdicts:
            return _verdicts[key]
        if not _own_depth:
            _own_depth.append(_pidns_depth("self"))
        verdict = _pidns_depth(pid) != _own_depth[0] or _below_launcher(pid)
    except (OSError, ValueError, IndexError):
        return True
    if len(_verdicts) > 512:
        _verdicts.clear()
    _verdicts[key] = verdict
    return verdict


def _below_launcher(pid: int) -> bool:
    """Is a confining launcher (or MCP keeper) `pid` itself or one of its ancestors?"""
    current = pid
    for _ in range(_MAX_DEPTH):
        if current <= 1 or current == os.getpid():
            return False
        if _is_confining_launcher(current):
            return True
        current = _stat(current)[0]
    return True


UNKNOWN = "cannot tell which process opened this connection"
CONFINED = "the connection comes from a process inside a hermes sandbox"
OTHER_USER = "the connection comes from another user of this machine"


def confined_peer(peer: tuple[str, int], local: tuple[str, int], *, strict: bool = True) -> str | None:
    """Why the TCP client at `peer` (connected to our `local`) must be refused, or None when it is an
    unconfined process of this machine. `strict` False: a client that cannot be identified passes (a
    service that also checks a credential: only clients identified as confined are refused)."""
    if not sys.platform.startswith("linux"):
        return None  # no OS sandbox elsewhere: nothing can be confined
    found = socket_inode(_plain(peer[0]), int(peer[1]), _plain(local[0]), int(local[1]))
    if found is None and peer[0].startswith("::ffff:"):
        found = socket_inode(peer[0], int(peer[1]), local[0], int(local[1]))
    if found is not None and strict and found[1] != os.geteuid():
        return OTHER_USER  # a keyless service acts with this user's keys, files and terminal: its user only
    pid = holder(found[0]) if found else None
    if pid is None:
        return UNKNOWN if strict else None
    return CONFINED if confined(pid) else None


class PeerGuard:
    """One verdict per connection (a transport keeps its socket, and a socket its holder), computed on a
    thread of its own so a slow /proc walk never waits behind agent turns or blocks the event loop."""

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict
        self._seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._pool = None

    async def refusal(self, transport: object) -> str | None:
        """Why the client on `transport` (an asyncio transport) is refused, or None."""
        if transport is None:
            return UNKNOWN if self.strict else None
        try:
            return self._seen[transport]
        except (KeyError, TypeError):
            pass
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")  # type: ignore[attr-defined]
        if not (isinstance(peer, tuple) and isinstance(local, tuple)):  # a unix socket: not ours to judge
            return None
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="hermes-peer")
        verdict = await asyncio.get_running_loop().run_in_executor(
            self._pool, lambda: confined_peer(peer[:2], local[:2], strict=self.strict))
        try:
            self._seen[transport] = verdict
        except TypeError:
            pass
        return verdict


def _plain(address: str) -> str:
    """An IPv4-mapped IPv6 address as its IPv4 form (the client's socket is usually AF_INET)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped) if mapped else str(ip)


def self_test() -> str | None:
    """None when peers can be identified here (sock_diag answers and /proc shows fds), else why not: then a
    keyless `hermes api` and the dashboard refuse every client (`hermes doctor` says so)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with socket.create_server(("127.0.0.1", 0)) as srv, socket.create_connection(srv.getsockname(), 5) as cli:
            conn, _ = srv.accept()
            with conn:
                found = socket_inode(*cli.getsockname(), *srv.getsockname())
                if found is None:
                    return "NETLINK_SOCK_DIAG does not answer (no inet_diag in this kernel or container?)"
                if not _holds(os.getpid(), f"socket:[{found[0]}]"):
                    return "/proc/<pid>/fd does not show sockets here"
    except OSError as exc:
        return f"cannot open a loopback socket: {exc}"
    return None
