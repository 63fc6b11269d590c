"""Run-later files reached through symlinks (issue 19, the dotfiles layout): ~/.gitconfig, ~/.ssh/config,
~/.vimrc, ~/.config/nvim, ~/bin... that are symlinks into a directory the sandbox may write (the usual
stow/dotfiles repository as the workspace). A confined command that edits the link's *target* changes what
the user's next git, ssh, vim or shell runs outside the sandbox. `kept_paths` finds those targets; the spec
keeps them read-only (spec.py `_dot_link_plan`).

Where it looks: every entry at HOME's top whose name starts with a dot (a symlink there, and the entries of a
dot directory one level down), the top-level non-dot symlinks that are login-PATH directories (`~/bin`, a
name on PATH), and bounded walks of the places editors, shells and tools read settings and code from
(`WALKS`: ~/.config, ~/.ssh, ~/.local/bin, ~/.local/share, ~/.gnupg, ~/.vim, ~/.emacs.d, ...). Symlinked
directories are not descended (their target is checked instead), nor directories the sandbox can write
(their content is the sandbox's, not the user's links), nor caches (`SKIP`). Each walk stops at its depth;
past `BUDGET` directory entries in all the result is incomplete and the caller fails closed.

A link is resolved hop by hop: besides its final target, every symlink passed on the way that lies where the
sandbox can write is kept too (its directory must not change it). lstat/readlink only: nothing is opened
here; the files the dot-files include or source (dotincludes.py) are kept the same way.
Stdlib only."""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Callable, Iterable

from hermes_agent import paths

# (directory under HOME, levels walked below it)
WALKS: tuple[tuple[str, int], ...] = (
    (".config", 4), (".ssh", 2), (".local/bin", 2), (".local/share", 3), (".gnupg", 2), (".vim", 4),
    (".emacs.d", 4), (".doom.d", 3), (".zsh", 3), (".zsh.d", 3), (".zshrc.d", 2), (".bashrc.d", 2),
    (".oh-my-zsh/custom", 3), (".tmux", 3), (".ipython", 4), (".jupyter", 3), (".mutt", 3), (".vscode", 2),
    (".gradle", 2), (".m2", 2), (".cargo", 2), (".docker", 2), (".kube", 2), (".aws", 2),
)
TOP_DEPTH = 1  # any other dot directory at HOME's top: its own entries
BUDGET = 20000  # directory entries looked at, in all
# Never entered: caches, package stores, container/VM images, browser profiles and editors' per-project
# storage (data, not settings a dotfiles repository links; big enough to spend the budget on their own).
SKIP = frozenset({".git", "node_modules", "__pycache__", ".cache", "Cache", "Code Cache", "GPUCache",
                  "CachedData", "CacheStorage", "Service Worker", "IndexedDB", "Trash", "site-packages",
                  "logs", "registry", "caches", "repository", "wrapper", "containers", "flatpak", "Steam",
                  "pnpm", "docker", "virtualenvs", "JetBrains", "google-chrome", "chromium", "BraveSoftware",
                  "workspaceStorage", "globalStorage", "Extensions", "Local Storage", "Session Storage",
                  "Crashpad", "blob_storage", "Partitions"})
MAX_HOPS = 40


def kept_paths(home: str, writable: Callable[[str], bool], search_path: str | None = None,
               budget: int = BUDGET) -> tuple[list[str], bool]:
    """(paths to keep read-only, complete): the final target, and each intermediate symlink, of every link
    found in HOME's dot namespace that lies where `writable(path)` says the sandbox can write. `complete` is
    False when the walk ran over `budget` entries (some links were not looked at)."""
    if not home or not os.path.isdir(home):
        return [], True
    left = [budget]
    kept: list[str] = []
    real: set[str] = set()  # directories seen to be no symlink while resolving: not looked at again
    for link in _links(home, writable, search_path, left):
        kept += _kept_of(link, writable, real)
    from hermes_agent.terminal.sandbox.dotincludes import included

    for path in included(home):  # what the dot-files include or source (rt5 a03), resolved the same way
        kept += _kept_of(path, writable, real, real_parent=False)
    return list(dict.fromkeys(kept)), left[0] >= 0


def _links(home: str, writable: Callable[[str], bool], search_path: str | None, left: list[int]) -> list[str]:
    """Symlinks of HOME's dot namespace (see the module text), in the order found."""
    try:
        top = list(os.scandir(home))
    except OSError:
        return []
    left[0] -= len(top)
    path = paths.user_path() if search_path is None else search_path
    on_path = {os.path.normpath(os.path.expanduser(p)) for p in path.split(os.pathsep) if p}
    found: list[str] = []
    deep = {os.path.join(home, rel): depth for rel, depth in WALKS}
    for entry in top:
        link = _is_link(entry)
        if not entry.name.startswith("."):
            if link and (entry.name == "bin" or entry.path in on_path):
                found.append(entry.path)
            continue
        if link:
            found.append(entry.path)
        elif entry.path not in deep and entry.name not in SKIP and _is_dir(entry):
            found += _walk(entry.path, TOP_DEPTH, writable, left)
    for root, depth in deep.items():
        if left[0] < 0:
            break
        if os.path.realpath(root) == root:  # not a symlinked directory, nor one under a link
            found += _walk(root, depth, writable, left)
    return found


def _walk(root: str, depth: int, writable: Callable[[str], bool], left: list[int]) -> list[str]:
    """Symlinks at most `depth` levels below real directory `root` (breadth first, no link followed)."""
    found: list[str] = []
    level = [root]
    for _ in range(depth):
        nxt: list[str] = []
        for d in level:
            if left[0] < 0 or writable(d):
                continue
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            left[0] -= len(entries)
            for e in entries:
                if _is_link(e):
                    found.append(e.path)
                elif e.name not in SKIP and _is_dir(e):
                    nxt.append(e.path)
        level = nxt
    return found


def _is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _kept_of(link: str, writable: Callable[[str], bool], real: set[str], *, real_parent: bool = True) -> list[str]:
    """What of `link`'s resolution the sandbox must not change: the final target when writable, and the
    writable symlinks passed on the way. A loop (too many hops) keeps nothing: the link leads nowhere."""
    resolved = resolve_chain(link, real_parent=real_parent, real=real)
    if resolved is None:
        return []
    final, hops = resolved
    out = [h for h in (hops[1:] if real_parent else hops) if writable(h)]
    if writable(final):
        out.append(final)
    return out


def resolve_chain(path: str, max_hops: int = MAX_HOPS, *, real_parent: bool = False,
                  real: set[str] | None = None) -> tuple[str, list[str]] | None:
    """(the path `path` resolves to, the symlinks passed on the way, `path` first when it is one), like
    realpath: a missing component ends the walk with the rest appended. None after `max_hops` links.
    `real_parent`: `path`'s directory is known to hold no symlink (found by the walk): not looked at.
    `real`: directories already seen to be none (filled as it goes; one planning pass shares it)."""
    real = set() if real is None else real
    path = os.path.abspath(path)
    if real_parent:
        cur, todo = os.path.dirname(path), [os.path.basename(path)]
    else:
        cur, todo = "/", [p for p in reversed(path.split("/")) if p]
    hops: list[str] = []
    while todo:
        name = todo.pop()
        if name in (".", ""):
            continue
        if name == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, name)
        if nxt in real and todo:
            cur = nxt
            continue
        try:
            st = os.lstat(nxt)
        except OSError:
            return os.path.normpath(os.path.join(nxt, *reversed(todo))), hops
        if not stat_mod.S_ISLNK(st.st_mode):
            if stat_mod.S_ISDIR(st.st_mode):
                real.add(nxt)
            cur = nxt
            continue
        hops.append(nxt)
        if len(hops) > max_hops:
            return None
        try:
            target = os.readlink(nxt)
        except OSError:
            return None
        if target.startswith("/"):
            cur = "/"
        todo += [p for p in reversed(target.split("/")) if p]
    return cur, hops


def nearest_existing(path: str, stop: Iterable[str] = ()) -> str:
    """`path` or its closest existing ancestor (not above any of `stop`)."""
    stops = set(stop)
    while not os.path.lexists(path) and path not in stops and path != "/":
        path = os.path.dirname(path)
    return path


SPLIT_MAX = 256


def other_entries(parent: str, path: str) -> list[str]:
    """The entries of directory `parent` except the one on the way to `path` and symlinks: what stays
    writable around a name bwrap cannot bind. More than SPLIT_MAX: none (the whole directory stays read-only)."""
    first = os.path.relpath(path, parent).split("/", 1)[0]
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    if len(entries) > SPLIT_MAX:
        return []
    return sorted(e.path for e in entries if e.name != first and not _is_link(e))
