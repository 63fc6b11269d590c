"""bubblewrap argv for a SandboxSpec: the host's root read-only, a private /tmp, writable roots bound back,
protected paths inside them re-bound read-only, secrets hidden, the user's unix sockets (agents, tmux,
docker, D-Bus, X11) and /run/user/UID hidden, own pid namespace, all capabilities dropped."""

from __future__ import annotations

import functools
import os
import stat
import subprocess
import sys

from hermes_agent import paths
from hermes_agent.paths import is_under as _under
from hermes_agent.terminal.sandbox.spec import SandboxSpec


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def _bind(flag: str, path: str, dest: str, fds: list[int] | None) -> list[str]:
    """One bind. With `fds` (the launcher passes them to bwrap), the source is an O_PATH fd opened with no
    symlink followed (landlock.open_rule_path) and bound by fd (`--bind-fd`): a place the confined side can
    write, swapped for a link between the plan and bwrap's start (red-team round 6 a10), is not followed;
    it is not bound at all (fail closed)."""
    if fds is None:
        return [flag, path, dest]
    from hermes_agent.terminal.sandbox.landlock import open_rule_path

    fd = open_rule_path(path)
    if fd is None:
        return []
    fds.append(fd)
    return [f"{flag}-fd", str(fd), dest]


def bwrap_argv(spec: SandboxSpec, binary: str = "", own_net: bool = False,
               fds: list[int] | None = None) -> list[str]:
    """The bwrap prefix (ends with `--`). Later mounts cover earlier ones, hence the order: root
    read-only, /dev and /proc, the private /tmp (with HOME and hermes re-bound read-only when they live
    there), then writable roots, pinned dirs and read-only carve-outs by depth (at one depth the read-only
    one last), then hidden sockets and hidden secrets. `fds`: bind those by fd (`_bind`); the caller passes
    the fds added to it to bwrap and closes them."""
    argv = [binary or bwrap_binary(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if spec.private_tmp:
        argv += [*_bind("--bind", spec.private_tmp, "/tmp", fds), "--tmpfs", "/var/tmp"]
        for path in visible_under_tmp():  # HOME, HERMES_HOME or hermes itself in /tmp (CI, containers)
            argv += ["--ro-bind", path, path]
    # the private /tmp at its own path too when it lies in the closed HOME (an MCP server's state dir: its TMPDIR)
    mounts = [(_depth(p), 0, "--bind", p) for p in (*spec.writable, *spec.pinned)
              if os.path.exists(p) and (p != spec.private_tmp or (spec.home_closed and _under(p, spec.home_closed)))]
    mounts += [(_depth(p), 1, "--ro-bind", p) for p in (*spec.readonly, *spec.home_readable)
               if os.path.lexists(p) and not os.path.islink(p) and not spec.unseen(p)]
    if spec.home_closed and os.path.isdir(spec.home_closed):  # after HOME's own binds, before what lies in it
        mounts.append((_depth(spec.home_closed), 2, "--tmpfs", spec.home_closed))
    closed = _closed_dirs(spec)
    mounts += [(_depth(p), 2, "--close", p) for p in closed]
    for *_, flag, path in sorted(dict.fromkeys(mounts)):  # deeper mounts cover shallower ones
        if flag == "--tmpfs":
            argv += ["--tmpfs", path, *_home_links(spec)]
        elif flag == "--close":
            argv += ["--tmpfs", path, *(a for back in closed[path].values() for a in back)]
        else:
            argv += _bind(flag, path, path, fds)
    argv += _hidden_sockets(spec, closed)  # after the writable binds, which would uncover them
    for path in sorted(spec.secrets, key=_depth):
        if os.path.dirname(path) in closed:
            continue  # not in its closed parent: nothing to hide, nothing that can vanish before bwrap mounts
        if os.path.isdir(path) and not os.path.islink(path):
            # a writable root inside a hidden directory (an MCP server's state dir in ~/.cache/hermes) is
            # bound again on the empty tmpfs before that is made read-only
            inner = [w for w in spec.writable if w != path and _under(w, path) and os.path.isdir(w)]
            argv += ["--tmpfs", path, *(a for w in sorted(inner, key=_depth) for a in ("--bind", w, w)),
                     "--remount-ro", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]  # nodev mount: opening it is "Permission denied"
    for original, copy in spec.git_globals:  # the credential-free global git config over its original
        if original and os.path.isfile(original) and os.path.isfile(copy) and not _in_hidden_dir(spec, original):
            argv += ["--ro-bind", copy, original]
    for path in closed:
        argv += ["--remount-ro", path]
    if spec.home_closed and os.path.isdir(spec.home_closed):
        argv += ["--remount-ro", spec.home_closed]  # the tmpfs only: what is bound in keeps its own flags
    if not spec.network or own_net:
        argv.append("--unshare-net")
    # Own pid namespace: when the launcher ends, every process of the session ends (setsid, double fork).
    # Namespaces, each decided (README table): pid, ipc, uts, cgroup unshared; net when off; user and mount
    # as bwrap needs them (mount: always; user: only where bwrap is not setuid/root).
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL", "--new-session", "--die-with-parent", "--chdir", "/", "--"]
    return argv


def _closed_dirs(spec: SandboxSpec) -> dict[str, dict[str, list[str]]]:
    """Directories whose entries are mostly hidden (the allowlist's "above" directories outside HOME: /var, /run,
    /home, HOME's parent), each made an empty tmpfs with the rest put back: links recreated, entries bound with
    `--ro-bind-try`. Hiding entry by entry named each one as a mount point, and one removed between the plan and
    bwrap's mounts ("Can't mkdir": another user's temp dir, a session file in /run) failed the start; here a
    hidden entry is simply absent and a vanished one skipped. Only directories no bind of the plan holds."""
    held = [p for p in (*spec.writable, *spec.pinned, *spec.readonly, *spec.home_readable, spec.home_closed,
                        spec.private_tmp, "/tmp" if spec.private_tmp else "") if p]
    hidden = set(spec.secrets)
    parents = {os.path.dirname(p) for p in hidden}
    out: dict[str, dict[str, list[str]]] = {}
    for parent in sorted(parents, key=_depth):
        if parent in ("/", "") or any(_under(parent, h) for h in held) or _in_hidden_dir(spec, parent):
            continue
        if not _put_back(parent, out):
            continue  # inside a closed directory but not put back: absent already
        try:
            if os.path.islink(parent) or not os.path.isdir(parent):
                continue
            entries = list(os.scandir(parent))
        except OSError:
            continue
        solid = [e for e in entries if not e.is_symlink()]
        if 2 * sum(e.path in hidden for e in solid) < len(solid):
            continue  # mostly readable (/etc with its shadow): hidden entry by entry
        back: dict[str, list[str]] = {}  # name: the mounts that put it back
        for entry in entries:
            if entry.path in hidden:
                continue
            if entry.path == "/var/tmp" and spec.private_tmp:
                back[entry.name] = ["--tmpfs", "/var/tmp"]  # still the session's own, as above
            elif entry.is_symlink():
                try:
                    back[entry.name] = ["--symlink", os.readlink(entry.path), entry.path]
                except OSError:
                    continue
            else:
                back[entry.name] = ["--ro-bind-try", entry.path, entry.path]
        out[parent] = back
    return out


def _home_links(spec: SandboxSpec) -> list[str]:
    """The allowlist's names in the closed HOME that lead elsewhere (~/.gitconfig -> dotfiles/gitconfig, ~/.pyenv
    -> /opt/pyenv, or through a linked ~/.config), made on its tmpfs as links to the resolved target, which is
    bound (or hidden) by its own rule."""
    out: list[str] = []
    for name, target in spec.home_links:
        if _under(name, spec.home_closed) and name != spec.home_closed and name != target:
            out += ["--symlink", target, name]
    return out


def _in_hidden_dir(spec: SandboxSpec, path: str) -> bool:
    """Below a hidden directory (an empty read-only tmpfs inside: nothing can be bound there)."""
    return any(s != path and _under(path, s) and os.path.isdir(s) for s in spec.secrets)


def visible_under_tmp() -> list[str]:
    """Read-only paths a private /tmp must not hide: HOME, HERMES_HOME, this program and its Python."""
    from hermes_agent import paths

    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    found = []
    for path in (os.path.expanduser("~"), str(paths.hermes_home()), here, sys.prefix, sys.base_prefix):
        real = os.path.realpath(path)
        if _under(real, "/tmp") and real != "/tmp" and os.path.isdir(real) and real not in found:
            found.append(real)
    return sorted(found, key=_depth)


def tmp_path_on_host(spec: SandboxSpec, path: str) -> str:
    """The host path of `path` as commands see it: /tmp/x is `spec.private_tmp`/x unless bound from the host."""
    path = os.path.normpath(path)
    if not spec.private_tmp or not _under(path, "/tmp"):
        return path
    bound = [r for r in spec.writable if r != spec.private_tmp] + visible_under_tmp()
    if any(_under(path, root) for root in bound):
        return path
    return spec.private_tmp + path[len("/tmp"):]


def _listening_sockets() -> list[str]:
    """Pathname unix sockets bound on this host (network namespace), from /proc/net/unix."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()[1:]
    except OSError:
        return []
    return sorted({parts[7] for parts in (line.split(None, 7) for line in lines)
                   if len(parts) == 8 and parts[7].startswith("/")})


def _hidden_sockets(spec: SandboxSpec, closed: dict[str, dict[str, list[str]]]) -> list[str]:
    """Mounts that make the user's sockets unreachable: /run/user/UID (agents, D-Bus, Wayland, pulse)
    becomes an empty tmpfs, and every other socket bound when the sandbox starts (outside the private /tmp)
    is covered by /dev/null: connect() needs a socket, and a read-only mount does not stop it. What a closed
    directory (`_closed_dirs`) or a hidden one leaves out is not there to cover."""
    argv: list[str] = []
    runtime = f"/run/user/{os.getuid()}"
    granted = set(spec.sockets)
    if os.path.isdir(runtime) and not any(_under(g, runtime) for g in granted) and _present(runtime, closed, spec):
        argv += ["--tmpfs", runtime, "--remount-ro", runtime]
    for path in _listening_sockets():
        if path in granted or _under(path, runtime) or (spec.private_tmp and _under(path, "/tmp")):
            continue
        if not _present(path, closed, spec):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        argv += ["--ro-bind", "/dev/null", path]
    return argv


def _present(path: str, closed: dict[str, dict[str, list[str]]], spec: SandboxSpec) -> bool:
    """Whether `path` is in the sandbox's view at all: not below a hidden directory, and for each closed
    directory above it, the entry on the way put back."""
    return path not in spec.secrets and not _in_hidden_dir(spec, path) and _put_back(path, closed)


def _put_back(path: str, closed: dict[str, dict[str, list[str]]]) -> bool:
    """For each closed directory above `path`, the entry on the way to it is put back."""
    return all(os.path.relpath(path, parent).split("/", 1)[0] in back
               for parent, back in closed.items() if _under(path, parent) and path != parent)


@functools.cache
def bwrap_binary() -> str:
    """bwrap from a PATH directory the sandbox cannot write (paths.trusted_which), or "" when there is none."""
    return paths.trusted_which("bwrap") or ""


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap is installed and can build a sandbox here (probed once)."""
    binary = bwrap_binary()
    if not binary:
        return "bubblewrap (bwrap) is not installed"
    probe = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-ipc",
             "--unshare-uts", "--cap-drop", "ALL", "--die-with-parent", "--", "true"]
    try:
        res = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run: {exc}"
    if res.returncode != 0:
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create a sandbox here: {err[-1] if err else 'exit ' + str(res.returncode)}"
    return None
