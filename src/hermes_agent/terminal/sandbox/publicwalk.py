"""The public-only rule of readable.py: inside a tree that packages do not own (/etc, /usr/local, /opt, a PATH
directory in /srv and the interpreter prefix it leads to) a file is visible only when everyone may read it
(other-read), a directory only when everyone may list and enter it (other-read-and-search), and only when
every directory above it in the tree is too: at any depth (rt5 a05: a 0600 deploy key four levels down in
/opt; a13: a 0700 directory in /usr/local/lib).

The walk is bounded: at most `WALK_BUDGET` entries per tree. What it did not reach is hidden (fail closed),
and `truncated()` names those trees for `hermes doctor`. A directory holding more than `DIR_HIDDEN_MAX`
private entries is hidden whole (one mount instead of thousands). A walk is kept in the process for a minute
and in the Hermes home's cache/sandbox (the sandbox cannot write there) for as long as no directory it
walked changed (an entry added, removed or renamed moves its mtime; a chmod that makes a public file
private is not seen until then: that file was readable by everyone before). Stdlib only."""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import time

from hermes_agent.paths import is_under as under

WALK_BUDGET = 100_000  # entries looked at per tree; past it the rest is hidden
DIR_HIDDEN_MAX = 256  # private entries of one directory before the directory is hidden whole
_CACHE_S = 60.0
_FORMAT = 2
_MEMO: dict[tuple[str, tuple[str, ...]], tuple[float, list[str]]] = {}
_TRUNCATED: set[str] = set()


def truncated() -> list[str]:
    """Trees whose walk ran out of budget in this process (their unchecked parts are hidden)."""
    return sorted(_TRUNCATED)


def public_mode(mode: int) -> bool:
    """Everyone may read it: a file with other-read, a directory with other-read-and-search."""
    if stat_mod.S_ISDIR(mode):
        return mode & 0o005 == 0o005
    return bool(mode & 0o004)


def reachable(path: str, stop: str = "/") -> bool:
    """`path` is public and everyone may pass every directory above it below `stop` (other-search)."""
    try:
        if not public_mode(os.stat(path).st_mode):
            return False
        parent = os.path.dirname(path)
        while parent not in ("/", "") and under(parent, stop) and parent != stop:
            if not os.stat(parent).st_mode & 0o001:
                return False
            parent = os.path.dirname(parent)
    except OSError:
        return False
    return True


def not_public(base: str, exempt: list[str], cache_dir: str = "", reach: list[str] = ()) -> list[str]:
    """Paths under directory `base` that not everyone may read (not descended into), except the `exempt`
    ones (the user's grants) and the way down to them, plus what the walk could not check. `reach`: paths
    (a PATH directory) that everyone may reach by name through a directory they may not list (0711): kept
    with the way to them, and walked by the same rule."""
    key = (base, tuple(sorted(exempt)), tuple(sorted(reach)))
    cached = _MEMO.get(key)
    if cached and time.monotonic() - cached[0] < _CACHE_S:
        return list(cached[1])
    out = _from_disk(cache_dir, base, key[1], key[2])
    if out is None:
        dirs: list[tuple[str, int]] = []
        out, cut = walk(base, list(key[1]), dirs, reach=list(key[2]))
        if cut:
            _TRUNCATED.add(base)
        _to_disk(cache_dir, base, {"format": _FORMAT, "exempt": list(key[1]), "reach": list(key[2]), "dirs": dirs,
                                   "hidden": out, "truncated": cut})
    _MEMO[key] = (time.monotonic(), out)
    return list(out)


def walk(base: str, exempt: list[str], dirs: list[tuple[str, int]],
         budget: int | None = None, reach: list[str] = ()) -> tuple[list[str], bool]:
    """(hidden paths, whether the budget ran out) for the tree at `base`; `dirs` gets each walked directory
    with its mtime."""
    out: list[str] = []
    stack, left = [base], WALK_BUDGET if budget is None else budget
    while stack and left > 0:
        current = stack.pop()
        dirs.append((current, _mtime(current)))
        try:
            entries = list(os.scandir(current))
        except OSError:
            out.append(current)  # not listable here: not checked, hidden
            continue
        left -= len(entries)
        hidden, deeper = _sort_entries(entries, exempt, reach)
        if len(hidden) > DIR_HIDDEN_MAX and not any(under(a, current) for a in (*exempt, *reach)):
            out.append(current)
            continue
        out += hidden
        stack += deeper
    for rest in stack:  # not reached within the budget: hidden, but for the grants below
        inner = [a for a in exempt if under(a, rest)]
        out += complement(rest, inner) if inner else [rest]
    return out, bool(stack)


def _sort_entries(entries: list[os.DirEntry], exempt: list[str],
                  reach: list[str] = ()) -> tuple[list[str], list[str]]:
    """(private entries to hide, public directories to walk) of one directory."""
    hidden: list[str] = []
    deeper: list[str] = []
    for entry in entries:
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat_mod.S_ISLNK(mode) or any(under(entry.path, a) for a in exempt):
            continue  # a symlink: its target has its own rule
        inner = [a for a in exempt if under(a, entry.path)]
        if not public_mode(mode):
            passing = [r for r in reach if r != entry.path and under(r, entry.path)
                       and reachable(r, os.path.dirname(entry.path))]
            hidden += complement(entry.path, inner + passing) if inner or passing else [entry.path]
            deeper += [r for r in passing if os.path.isdir(r) and not os.path.islink(r)]
        elif stat_mod.S_ISDIR(mode):
            deeper.append(entry.path)
    return hidden, deeper


def complement(root: str, allowed: list[str]) -> list[str]:
    """Children of `root` (recursively where an allowed path lies deeper) that are not allowed. Symlinks are
    left alone: their target has its own rule. Set lookups: the allowlist holds a few hundred paths."""
    exact = set(allowed)
    above = {p for a in allowed for p in ancestors(a)[1:]}
    return _complement_in(root, exact, above) if not any(p in exact for p in ancestors(root)) else []


def ancestors(path: str) -> list[str]:
    """`path` and every directory above it, up to /."""
    out = [path]
    while path not in ("/", ""):
        path = os.path.dirname(path)
        out.append(path)
    return out


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


def _disk_path(cache_dir: str, base: str) -> str:
    name = base.strip("/").replace("/", "-")
    if len(name) > 80:
        name = name[:60] + "-" + hashlib.sha256(os.fsencode(base)).hexdigest()[:16]
    return os.path.join(cache_dir, f"public-{name}.json")


def _from_disk(cache_dir: str, base: str, exempt: tuple[str, ...], reach: tuple[str, ...] = ()) -> list[str] | None:
    """The stored walk of `base` when it was made for the same grants and no walked directory changed."""
    if not cache_dir:
        return None
    from pathlib import Path

    from hermes_agent.atomicfile import read_json_dict

    data = read_json_dict(Path(_disk_path(cache_dir, base)))
    dirs, hidden = data.get("dirs"), data.get("hidden")
    if data.get("format") != _FORMAT or data.get("exempt") != list(exempt) or data.get("reach") != list(reach) \
            or not isinstance(dirs, list) \
            or not isinstance(hidden, list) or not dirs or dirs[0][0] != base:
        return None
    try:
        if any(_mtime(str(d)) != int(m) for d, m in dirs):
            return None
    except (TypeError, ValueError, IndexError):
        return None
    if data.get("truncated"):
        _TRUNCATED.add(base)
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
