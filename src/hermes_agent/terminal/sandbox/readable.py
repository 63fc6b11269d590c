"""What a confined command may read outside HOME: an allowlist (issue 19, rt4 a01: a root session's command
read an SSH key in /work/ci/sshd and used it on a loopback sshd). Everything not listed is hidden, planned as
concrete paths (the complement of the allowlist, expanded where an allowed path lies deeper), so bwrap
(`--tmpfs` / `/dev/null`) and Landlock (no read rule) enforce the same list through `SandboxSpec.secrets`.

Readable:
- the system: `SYSTEM_READABLE` (programs, libraries, /etc, /opt, /nix, /snap; /proc, /dev, /sys and the temp
  dirs as the rest of the sandbox arranges them; of /var only the package managers' databases and caches, of
  /run only the resolver's files: /var and /run hold the machine's state — databases, mail, backups, logs,
  container and service secrets);
- inside /etc, /usr/local/etc and /opt (`PUBLIC_ONLY`) only what everyone on this machine may read: a file without the
  other-read bit, or a directory without other-read-and-search (shadow, gshadow, sudoers*, ssh host keys,
  ssl/private, docker's key.json, a deploy key of mode 0600) is hidden, whoever owns it;
- the targets of /etc's own symlinks (resolv.conf -> /run/systemd/resolve/...) when they are files;
- HOME (its dot-entries by their own rule, views.hidden_paths), the workspaces, the writable roots, the readable
  locations of the policy (sandbox.readable_paths, hermes's code, other homes' tool directories);
- each PATH directory (resolved), and for a PATH directory named bin/sbin outside every home its prefix's
  lib*, libexec, share, include and pyvenv.cfg; the same for the directory an executable symlink in a PATH
  directory outside the system roots points to (a venv's python -> /root/.pyenv/versions/X/bin/python3).
Stdlib only."""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Iterable

SYSTEM_READABLE: tuple[str, ...] = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap",
    "/proc", "/dev", "/sys", "/tmp", "/var/tmp",
    "/var/lib/dpkg", "/var/lib/apt", "/var/lib/rpm", "/var/lib/pacman", "/var/lib/dnf",
    "/var/cache/apt", "/var/cache/fontconfig", "/var/cache/man",
    "/run/systemd/resolve", "/run/resolvconf",
)
# Inside these only what everyone may read, this many levels down (/opt holds whole software trees: a conda
# in /opt is 50,000 files; its top three levels hold an application's keys and config).
PUBLIC_ONLY: dict[str, int] = {"/etc": 12, "/usr/local/etc": 12, "/opt": 3}
PREFIX_PARTS: tuple[str, ...] = ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "share", "include", "pyvenv.cfg")
_WALK_BUDGET = 20_000  # entries looked at per PUBLIC_ONLY root; past it the rest is not filtered (doctor says so)
_LINK_BUDGET = 4000  # entries of a non-system PATH directory looked at for interpreter symlinks


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def allowed_roots(home: str, allow: Iterable[str], homes: Iterable[str] = (),
                  search_path: str | None = None, writable: Iterable[str] = ()) -> list[str]:
    """Every path readable outside the hidden dot-entries: system roots, HOME, `allow` (workspaces, writable
    roots, the policy's readable locations), PATH directories and interpreter prefixes (resolved)."""
    homes = [h for h in (home, *homes) if h]
    system = [os.path.realpath(p) for p in SYSTEM_READABLE if os.path.lexists(p)]
    out = list(system)
    out += [home] if home else []
    out += [os.path.normpath(a) for a in allow if a]  # resolved by the policy
    out += _etc_link_targets()
    out += path_dirs(search_path, homes, system, [os.path.normpath(w) for w in writable if w])
    return list(dict.fromkeys(p for p in out if p and p != "/"))


def path_dirs(search_path: str | None, homes: list[str], system: list[str],
              writable: Iterable[str] = ()) -> list[str]:
    """PATH's directories (resolved) with the prefixes of those named bin/sbin outside every home, and of
    the interpreters their symlinks point to (a PATH directory outside `system` only). A PATH entry in a
    `writable` root (named or resolved) is skipped: readable anyway, and the sandbox could make it a
    symlink to anywhere before the next plan."""
    raw = os.environ.get("PATH", "") if search_path is None else search_path
    out: list[str] = []
    for entry in raw.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = _trusted_real(entry, writable)
        if not real:
            continue
        out += [real, *_prefix_parts(real, homes)]
        if not any(under(real, s) for s in system):
            out += _link_targets(real, homes, writable)
    return out


def _prefix_parts(bin_dir: str, homes: list[str]) -> list[str]:
    """bin_dir's prefix's library and data parts, when bin_dir is a bin/sbin outside every home (the prefix
    of ~/.local/bin holds ~/.local/share: keyrings, histories)."""
    if os.path.basename(bin_dir) not in ("bin", "sbin") or any(under(bin_dir, h) for h in homes):
        return []
    prefix = os.path.dirname(bin_dir)
    if prefix == "/":
        return []
    return [os.path.join(prefix, p) for p in PREFIX_PARTS if os.path.lexists(os.path.join(prefix, p))]


def _trusted_real(path: str, writable: Iterable[str], hops: int = 8) -> str:
    """realpath(path), or "" when the path or a symlink on its way lies in a writable root (the sandbox
    could point it anywhere before the next plan), or the chain is longer than `hops`."""
    current = os.path.normpath(path)
    for _ in range(hops):
        folder = os.path.realpath(os.path.dirname(current))
        if any(under(p, w) for p in (current, folder) for w in writable):
            return ""
        here = os.path.join(folder, os.path.basename(current))
        if not os.path.islink(here):
            return "" if any(under(here, w) for w in writable) else here
        current = os.path.normpath(os.path.join(folder, os.readlink(here)))
    return ""


def _link_targets(directory: str, homes: list[str], writable: Iterable[str] = ()) -> list[str]:
    """Directories (and their prefixes' parts) that symlinked executables of `directory` point to."""
    out: list[str] = []
    try:
        with os.scandir(directory) as it:
            for n, entry in enumerate(it):
                if n >= _LINK_BUDGET:
                    break
                if not entry.is_symlink():
                    continue
                target = _trusted_real(entry.path, writable)
                parent = os.path.dirname(target)
                if target and parent != directory and os.path.isfile(target) and parent not in out:
                    out += [parent, *_prefix_parts(parent, homes)]
    except OSError:
        pass
    return out


def program_paths(words: Iterable[str], writable: Iterable[str] = ()) -> list[str]:
    """What a configured program (an MCP server's command and arguments) needs to read: for each word that
    is an existing absolute path, or the command found on PATH, the directory holding it (a file) or itself
    (a directory), named and resolved, and the outermost `node_modules` above either (its dependencies).
    Paths through a writable root are left out (readable anyway, and they could be redirected)."""
    import shutil

    words = [str(w) for w in words if w]
    if words and not os.path.isabs(words[0]):
        words[0] = shutil.which(words[0]) or ""
    out: list[str] = []
    for word in words:
        if not os.path.isabs(word) or not os.path.exists(word):
            continue
        real = _trusted_real(word, writable)
        if not real:
            continue
        for path in dict.fromkeys((os.path.normpath(word), real)):
            folder = path if os.path.isdir(path) else os.path.dirname(path)
            parts = folder.split("/")
            top = parts.index("node_modules") if "node_modules" in parts else -1
            out.append("/".join(parts[:top + 1]) if top > 0 else folder)
    return [p for p in dict.fromkeys(out) if p and p != "/"]


def _etc_link_targets() -> list[str]:
    """Files that /etc's top-level symlinks name (/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf)."""
    out: list[str] = []
    try:
        with os.scandir("/etc") as it:
            links = [e.path for e in it if e.is_symlink()]
    except OSError:
        return out
    for link in links:
        target = os.path.realpath(link)
        if os.path.isfile(target) and not under(target, "/etc"):
            out.append(target)
    return out


def hidden_outside(home: str, allow: Iterable[str], homes: Iterable[str] = (), search_path: str | None = None,
                   cache_dir: str = "", writable: Iterable[str] = ()) -> list[str]:
    """Concrete paths to hide so that only the allowlist is readable: the complement of `allowed_roots`
    under / and, inside the PUBLIC_ONLY roots, what not everyone may read (minus what is allowed below)."""
    allow = list(allow)
    if any(os.path.normpath(a) == "/" for a in allow if a):
        return []  # a workspace or grant of / itself: nothing outside it
    roots = allowed_roots(home, allow, homes, search_path, writable)
    out = _complement("/", roots)
    for base in PUBLIC_ONLY:
        if os.path.isdir(base) and not os.path.islink(base) and any(under(base, r) for r in roots):
            out += _not_public(base, [r for r in roots if r != base and under(r, base)], cache_dir)
    return list(dict.fromkeys(out))


def _complement(root: str, allowed: list[str]) -> list[str]:
    """Children of `root` (recursively where an allowed path lies deeper) that are not allowed. Symlinks are
    left alone: their target has its own rule. Set lookups: the allowlist holds a few hundred paths."""
    exact = set(allowed)
    above = {p for a in allowed for p in _ancestors(a)[1:]}
    return _complement_in(root, exact, above) if not _covered(root, exact) else []


def _ancestors(path: str) -> list[str]:
    out = [path]
    while path not in ("/", ""):
        path = os.path.dirname(path)
        out.append(path)
    return out


def _covered(path: str, exact: set[str]) -> bool:
    return any(p in exact for p in _ancestors(path))


def _complement_in(root: str, exact: set[str], above: set[str]) -> list[str]:
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out: list[str] = []
    for name in names:
        path = os.path.join(root, name)
        if path in exact or os.path.islink(path):
            continue
        if path in above and os.path.isdir(path):
            out += _complement_in(path, exact, above)
        else:
            out.append(path)
    return out


_PUBLIC_CACHE: dict[tuple[str, tuple[str, ...]], tuple[float, list[str]]] = {}
_CACHE_S = 60.0


def _not_public(base: str, allowed: list[str], cache_dir: str = "") -> list[str]:
    """Entries under `base` not readable by everyone (not descended into), except `allowed` ones and the
    way down to them, at most PUBLIC_ONLY[base] levels down. A walk of /etc and /opt costs 20-300 ms on a
    busy machine, so it is kept: in the process for a minute, and in `cache_dir` (the Hermes home's
    cache/sandbox: the sandbox cannot write it) for as long as no directory it walked changed (an entry
    added, removed or renamed moves the directory's mtime; a chmod that makes a public file private is
    not seen until then: that file was readable by everyone before)."""
    import time

    key = (base, tuple(sorted(allowed)))
    cached = _PUBLIC_CACHE.get(key)
    if cached and time.monotonic() - cached[0] < _CACHE_S:
        return list(cached[1])
    depth = PUBLIC_ONLY.get(base, 1)
    out = _from_disk(cache_dir, base, key[1], depth)
    if out is None:
        dirs: list[tuple[str, int]] = []
        out = _walk_not_public(base, allowed, depth, dirs)
        _to_disk(cache_dir, base, {"allowed": list(key[1]), "depth": depth, "dirs": dirs, "hidden": out,
                                   "truncated": base in _TRUNCATED})
    _PUBLIC_CACHE[key] = (time.monotonic(), out)
    return list(out)


def _disk_path(cache_dir: str, base: str) -> str:
    return os.path.join(cache_dir, "public" + base.replace("/", "-") + ".json")


def _from_disk(cache_dir: str, base: str, allowed: tuple[str, ...], depth: int) -> list[str] | None:
    """The stored walk of `base` when it was made for the same allowlist and no walked directory changed."""
    if not cache_dir:
        return None
    from pathlib import Path

    from hermes_agent.atomicfile import read_json_dict

    data = read_json_dict(Path(_disk_path(cache_dir, base)))
    dirs, hidden = data.get("dirs"), data.get("hidden")
    if data.get("allowed") != list(allowed) or data.get("depth") != depth or not isinstance(dirs, list) \
            or not isinstance(hidden, list) or data.get("truncated"):
        return None
    try:
        if any(_mtime(str(d)) != int(m) for d, m in dirs):
            return None
    except (TypeError, ValueError):
        return None
    return [str(h) for h in hidden]


def _to_disk(cache_dir: str, base: str, record: dict) -> None:
    if not cache_dir:
        return
    from pathlib import Path

    from hermes_agent.atomicfile import write_json

    try:
        write_json(Path(_disk_path(cache_dir, base)), record)
    except OSError:
        pass  # a read-only Hermes home: the next session walks again


def _mtime(path: str) -> int:
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return -1


def _walk_not_public(base: str, allowed: list[str], max_depth: int, dirs: list[tuple[str, int]]) -> list[str]:
    out: list[str] = []
    stack, budget = [(base, 1)], _WALK_BUDGET
    while stack and budget > 0:
        current, depth = stack.pop()
        dirs.append((current, _mtime(current)))
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        budget -= len(entries)
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat_mod.S_ISLNK(mode) or any(under(entry.path, a) for a in allowed):
                continue
            if not stat_mod.S_ISDIR(mode):
                out += [] if mode & 0o004 else [entry.path]
                continue
            inner = [a for a in allowed if under(a, entry.path)]
            if mode & 0o005 != 0o005:  # not public: hidden whole, or but for the allowed paths below it
                out += _complement(entry.path, inner) if inner else [entry.path]
            elif depth < max_depth:
                stack.append((entry.path, depth + 1))
    if stack:
        _TRUNCATED.add(base)
    return out


_TRUNCATED: set[str] = set()


def policy_allow(policy: object, sockets: Iterable[str] = ()) -> tuple[str, list[str], list[str]]:
    """(home, allowed paths, other homes) of a path policy (duck-typed, spec.PolicyLike): its workspaces,
    writable roots, readable locations and grants, and the unix sockets the user granted."""
    home = os.path.realpath(getattr(policy, "home", "") or os.path.expanduser("~"))
    allow = [*getattr(policy, "workspace", ()), *getattr(policy, "writable", ()), *getattr(policy, "readable", ()),
             *getattr(policy, "readable_grants", ()), *sockets]
    return ("" if home == "/" else home), allow, list(getattr(policy, "foreign_homes", ()))


def for_policy(policy: object, sockets: Iterable[str] = ()) -> list[str]:
    """`hidden_outside` for a path policy: what its sandbox hides outside HOME."""
    home, allow, homes = policy_allow(policy, sockets)
    return hidden_outside(home, allow, homes, cache_dir=_cache_dir(policy),
                          writable=getattr(policy, "writable", ()))


def _cache_dir(policy: object) -> str:
    hermes_home = str(getattr(policy, "hermes_home", "") or "")
    return os.path.join(hermes_home, "cache", "sandbox") if hermes_home else ""


def describe(policy: object) -> str:
    """One line for `hermes doctor`: what a command may read outside HOME, and what is hidden."""
    home, allow, homes = policy_allow(policy)
    writable = getattr(policy, "writable", ())
    roots = allowed_roots(home, allow, homes, writable=writable)
    hidden = hidden_outside(home, allow, homes, cache_dir=_cache_dir(policy), writable=writable)
    system = [p for p in SYSTEM_READABLE if os.path.lexists(p)]
    homes = [h for h in homes if h]
    other = [r for r in roots if os.path.lexists(r) and not any(under(r, s) for s in system)
             and not (home and under(r, home)) and not any(under(r, h) for h in homes)]
    tools = sorted({h for h in homes for r in roots if under(r, h) and r != h and os.path.lexists(r)})
    other += [f"the tool directories of {', '.join(tools)}"] if tools else []
    top = sorted({h for h in hidden if h.count("/") == 1})
    private = [h for h in hidden if any(under(h, b) for b in PUBLIC_ONLY)]
    shown = ", ".join(other[:8]) + (f" (+{len(other) - 8} more)" if len(other) > 8 else "")
    trunc = f"; not fully checked (over {_WALK_BUDGET} entries): {', '.join(sorted(_TRUNCATED))}" if _TRUNCATED else ""
    return (f"commands may read outside HOME: the system ({', '.join(system)}; in {', '.join(PUBLIC_ONLY)} only what "
            f"everyone may read: {len(private)} entries hidden){trunc}; also {shown or 'nothing else'}; everything "
            f"else is hidden ({', '.join(top) or 'nothing at the top level'}, {len(hidden)} paths in all); "
            "add a path to sandbox.readable_paths when a tool needs one more")
