"""HOME below its top level, outside the workspaces (red-team round 6 a07: a session in ~/ws read
~/projects/app/.env, a token in that repository's .git/config, its credentials.json and terraform state).

The rule, the same one `approval.policy.PathPolicy.default_denied` applies to the file tools path by path:
- another project's repository (a directory holding `.git`) is private whole: its ignored files, local
  settings and git remotes are where credentials live;
- a dot-entry at any depth is private, as HOME's own dot-entries are;
unless the path is a workspace, lies on the way to one (or to a readable location or a PATH directory), or
lies inside one. `sandbox.readable_paths` grants a project or a file.

Planned as concrete paths (bwrap hides each one, Landlock reads around them) by a bounded walk: a directory
the walk could not finish (more than `_BUDGET` entries in all, or deeper than `_DEPTH`) is hidden whole,
so the walk fails closed. Stdlib only."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

_BUDGET, _DEPTH = 20000, 8


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


_CACHE: dict[tuple, tuple[float, list[str]]] = {}
_CACHE_S = 30.0


def private_below(home: str, keep: Iterable[str], search_path: str | None = None) -> list[str]:
    """Paths under HOME's non-dot entries to hide: other repositories, dot-entries, what the walk left.
    Kept for `_CACHE_S` in the process (the terminal, the file tools and the browser each plan)."""
    path = os.environ.get("PATH", "") if search_path is None else search_path
    key = (home, tuple(keep), path)
    hit = _CACHE.get(key)
    if hit and time.monotonic() - hit[0] < _CACHE_S:
        return list(hit[1])
    out = _private_below(home, key[1], path)
    _CACHE[key] = (time.monotonic(), out)
    return list(out)


def _private_below(home: str, keep: Iterable[str], path: str) -> list[str]:
    kept = [os.path.realpath(k) for k in keep if k]
    if not home or any(_under(home, k) for k in kept):
        return []  # HOME is (inside) a workspace or readable as a whole
    kept += [os.path.realpath(os.path.expanduser(p)) for p in path.split(os.pathsep) if os.path.isabs(os.path.expanduser(p))]
    kept_set = {k for k in kept if k != home and _under(k, home)}
    holding: set[str] = set()
    for k in kept_set:  # every directory on the way down to a kept path
        d = os.path.dirname(k)
        while d != home and _under(d, home) and d not in holding:
            holding.add(d)
            d = os.path.dirname(d)
    out: list[str] = []
    budget = [_BUDGET]
    try:
        tops = [e for e in os.scandir(home) if not e.name.startswith(".") and e.path not in kept_set]
    except OSError:
        return []
    per_top = {top.path: _walk_top(top.path, kept_set, holding, budget)
               for top in sorted(tops, key=lambda e: e.name) if top.path in holding or _walkable(top)}
    if sum(map(len, per_top.values())) > _MAX_TOTAL:  # too many for one plan: whole entries of HOME instead
        per_top = {t: v if t in holding or len(v) < 2 else [t] for t, v in per_top.items()}
    for items in per_top.values():
        out += items
    return out


_MAX_TOTAL = 256
_MAX_HIDDEN = 32  # per entry of HOME: more than that to hide one by one (mounts, Landlock rules): hide it whole


def _walk_top(top: str, kept_set: set[str], holding: set[str], budget: list[int]) -> list[str]:
    out: list[str] = []
    queue = [(top, 1)]
    while queue:
        directory, depth = queue.pop()
        holds = directory in holding
        if not holds and (os.path.lexists(os.path.join(directory, ".git")) or depth > _DEPTH or budget[0] <= 0):
            out.append(directory)  # another project, or not walked (fail closed)
            continue
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        budget[0] -= len(entries)
        for entry in entries:
            p = entry.path
            if p in kept_set:
                continue
            if entry.name.startswith("."):
                if p not in holding and not (holds and entry.name == ".git"):
                    out.append(p)
            elif p in holding or _walkable(entry):
                queue.append((p, depth + 1))
        if len(out) > _MAX_HIDDEN and top not in holding:
            return [top]
    return out


def _walkable(entry: os.DirEntry) -> bool:
    """A real directory (a symlink is left alone: its target has its own rule)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def private_reason(real: str, home: str, keep: Iterable[str]) -> str | None:
    """Path-by-path form of the rule for the file tools: the private root that covers resolved `real`
    (another repository or a dot-entry below HOME's top level), or None."""
    if real == home or not _under(real, home):
        return None
    kept = [k for k in keep if k]
    if any(_under(real, k) for k in kept):
        return None
    parts = real[len(home.rstrip("/")) + 1:].split("/")
    for i in range(1, len(parts)):
        here = os.path.join(home, *parts[:i])
        if any(_under(k, here) for k in kept):
            continue
        if parts[i - 1].startswith("."):
            return here
        if os.path.lexists(os.path.join(here, ".git")):
            return here
    if len(parts) > 1 and parts[-1].startswith(".") and not any(_under(k, real) for k in kept):
        return real
    return None
