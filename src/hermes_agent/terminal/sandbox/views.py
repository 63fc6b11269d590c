"""What confined work may see and change, resolved on disk at planning time (re-planned per command when
the inputs moved, see `watch_stamp`):

- `hidden_paths`: default-deny. The Hermes home roots and other users' homes are hidden whole, except the
  readable locations of the policy (tools and settings, not credentials), planned as a list of concrete paths:
  a location partly readable (e.g. ~/.config, readable only for git/config) is expanded into its non-readable
  children. Symlinks are left alone: their target has its own rule. HOME itself, when closed (not a
  workspace), is not expanded: bwrap mounts an empty tmpfs on it and binds the allowlist back, Landlock grants
  only the allowlist (`home_view`), so the plan does not grow with HOME and a file made later stays unseen.
  When the workspace is HOME, HOME's dot-entries are hidden but the readable ones.
- `git_paths`: whatever `.git` of a workspace resolves to — a directory, a `gitdir:` file (a moved or
  renamed git dir, a worktree's commondir), `core.hooksPath`, `$GIT_DIR` — gives hooks, config and the
  `.git` entry itself to keep read-only (and the `.git` directory to pin, so it cannot be renamed away).
- `home_children`: when the workspace is HOME (or contains it), HOME itself stays read-only and only its
  existing non-dot entries are writable: no new start-up file, no `.pth` in ~/.local, no user unit; nor
  what the start-up files source or put on PATH (shellrc.py), nor code the user runs later from HOME: what the
  start-up files or the environment name, toolchain code (homecode.py), with the directories on the way.
Stdlib only."""

from __future__ import annotations

import os
import re
import stat as stat_mod
from collections.abc import Iterable

from hermes_agent import paths
from hermes_agent.paths import GENERATED_DIRS
from hermes_agent.paths import is_under as under
from hermes_agent.terminal.sandbox.publicwalk import complement

_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.I | re.M)
_SECTION = re.compile(r"^\s*\[([^\]]+)\]", re.M)


def hidden_paths(home: str, hermes_roots: Iterable[str], readable: Iterable[str],
                 foreign_homes: Iterable[str] = ()) -> list[str]:
    """Concrete paths to hide: every Hermes root and other user's home (minus readable parts, and
    minus the way down to HOME when HOME lies in one), and HOME's dot-entries when HOME is open (a
    workspace). A closed HOME (one of `foreign_homes`) is not listed: see `home_view`; nor what lies in it."""
    allow = [os.path.realpath(a) for a in readable]
    out: list[str] = []
    foreign = [os.path.realpath(f) for f in foreign_homes]
    closed = bool(home) and home in foreign
    if home:
        allow += [home] if any(under(home, f) for f in foreign) else []
    for root in dict.fromkeys((*(os.path.realpath(r) for r in hermes_roots), *foreign)):
        if not os.path.isdir(root) or (closed and under(root, home) and not any(
                a != home and under(root, a) for a in allow)):
            continue
        inner = [a for a in allow if a != root and under(a, root)]
        out += complement(root, inner) if inner else [root]  # set lookups: the allowlist holds hundreds
    if home and os.path.isdir(home) and not closed:
        dots = complement(home, [a for a in allow if a != home and under(a, home)])
        out += [p for p in dots if _hidden_in_open_home(p[len(home.rstrip("/")) + 1:])]  # an open HOME
    return list(dict.fromkeys(out))


def _hidden_in_open_home(rel: str) -> bool:
    """An entry of a HOME that is (in) the workspace hidden by default: a dot-entry, or a copy of the Hermes
    home (keys included) that Hermes 0.19 left there."""
    first = rel.split("/", 1)[0]
    return first.startswith(".") or paths.hermes_secret_copy(first)


def home_view(home: str, readable: Iterable[str], writable: Iterable[str]) -> tuple[str, ...]:
    """What stays readable in a closed HOME: the allowlist's paths inside it that exist (resolved), minus
    those inside another one and the writable roots (bound by their own rule)."""
    rw = [w for w in writable if w and w != home and under(w, home)]  # a writable /tmp holding HOME: not these
    paths = {os.path.realpath(a) for a in readable if a}
    keep = [p for p in paths if p != home and under(p, home) and os.path.lexists(p)
            and not any(under(p, w) for w in rw)]
    return tuple(sorted(p for p in keep if not any(q != p and under(p, q) for q in keep)))


def describe_home(policy: object) -> str:
    """One line for `hermes doctor`: what commands and the file tools may read in HOME."""
    home = os.path.realpath(str(getattr(policy, "home", "") or os.path.expanduser("~")))
    if not getattr(policy, "home_closed", False):
        return (f"HOME ({home}) is (in) the workspace: readable, but its dot-entries other than the tool locations "
                "and git's settings")
    shown = ["~" + p[len(home):] for p in home_view(home, (*getattr(policy, "readable", ()),
                                                            *getattr(policy, "readable_grants", ())), ())]
    more = f" (+{len(shown) - 12} more)" if len(shown) > 12 else ""
    return (f"in HOME ({home}) commands and file tools may read only {len(shown)} locations: "
            f"{', '.join(shown[:12]) or 'none'}{more}; everything else there is hidden, also what is made there "
            "later; add a path to sandbox.readable_paths when a tool needs one more")


_LOGIN_PATH_DIRS = ("bin",)


def home_children(home: str, search_path: str | None = None, keep: Iterable[str] = ()) -> list[str]:
    """The existing non-dot entries of HOME (the writable part of a workspace that is HOME), except
    those on (or holding a directory on) PATH, and ~/bin, which a login shell's stock ~/.profile puts on
    PATH when it exists: a program dropped there would run in the user's next shell. An entry holding a
    `keep` path (what the start-up files source or put on PATH, shellrc.py) is split into its own entries
    down to it: the kept path and the directories on the way stay read-only."""
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    path = paths.user_path() if search_path is None else search_path
    on_path = [os.path.realpath(os.path.expanduser(p)) for p in path.split(os.pathsep) if p]
    on_path += [os.path.join(home, d) for d in _LOGIN_PATH_DIRS]
    kept = [k for k in keep if k != home and under(k, home)]
    out: list[str] = []
    for n in names:
        child = os.path.join(home, n)
        if n.startswith(".") or os.path.islink(child) or any(under(p, child) for p in on_path):
            continue
        out += _writable_below(child, kept, [_SPLIT_BUDGET])
    return out


_SPLIT_BUDGET, _SPLIT_DEPTH = 256, 6


def _writable_below(path: str, kept: list[str], budget: list[int], depth: int = 0) -> list[str]:
    """`path` itself when no kept path lies in it, else its entries (recursively) minus the kept ones;
    symlinks are never writable roots. Over the budget or depth: nothing (read-only whole, fail closed)."""
    if any(under(path, k) for k in kept):
        return []
    inner = [k for k in kept if under(k, path)]
    if not inner:
        return [path]
    if depth >= _SPLIT_DEPTH or not os.path.isdir(path) or os.path.islink(path):
        return []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    budget[0] -= len(names)
    if budget[0] < 0:
        return []
    out: list[str] = []
    for n in names:
        child = os.path.join(path, n)
        if not os.path.islink(child):
            out += _writable_below(child, inner, budget, depth + 1)
    return out


# -- git ----------------------------------------------------------------------------------------------

def _read_small(path: str, limit: int = 65536) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _gitdir_of(dot: str) -> str | None:
    """The git directory a `.git` entry stands for: itself, or the target of its `gitdir:` line."""
    if os.path.isdir(dot):
        return os.path.realpath(dot)
    text = _read_small(dot, 4096).strip()
    if not text.lower().startswith("gitdir:"):
        return None
    target = os.path.expanduser(text.split(":", 1)[1].strip())
    return os.path.realpath(os.path.join(os.path.dirname(dot), target))


def _hooks_paths(config: str) -> list[str]:
    """core.hooksPath values of a git config file (last one wins in git; all are protected here)."""
    text = _read_small(config)
    found = []
    sections = list(_SECTION.finditer(text))
    for i, sec in enumerate(sections):
        if sec.group(1).strip().lower() != "core":
            continue
        body = text[sec.end():sections[i + 1].start() if i + 1 < len(sections) else len(text)]
        found += [m.group(1).strip().strip('"') for m in _HOOKS_PATH.finditer(body)]
    return found


# Directories git reads hooks and settings from: created (empty, as `git init` would) when missing, so they
# can be bound read-only; a missing one would be created from inside and filled with hooks.
GIT_DIRS = ("hooks", "info")
# Single files that redirect git elsewhere; bound read-only when present, removed after a command when
# they appear (guard.py): a directory entry that does not exist cannot be bound.
GIT_REDIRECTS = ("commondir", "config.worktree")
# Directories the per-command watch (guardscan.Tree) does not descend (dependencies, environments, build
# output); the nested-repository scan below skips only version-control internals.
SKIP_DIRS = GENERATED_DIRS  # (hermes_agent/paths.py: the dirty guard skips the same ones)
_VCS = frozenset({".git", ".hg", ".svn"})
_VENV_INSIDE = frozenset({"lib", "lib64", "include", "share"})  # a venv's installed files (its bin/ is watched)
NESTED_DEPTH, NESTED_BUDGET, NESTED_BOUND = 16, 5000, 256
NESTED_REPOS = 256  # nested repositories bound one by one (~4 mounts each); past it: `collapsed_repos`
_NESTED: dict[tuple, tuple[float, list[str], list[str]]] = {}


def nested_scan(workspace: str, within: Iterable[str] = (), depth: int = NESTED_DEPTH,
                budget: int = NESTED_BUDGET) -> tuple[list[str], list[str]]:
    """(`.git` entries of repositories below `workspace`, directories the scan did not look into). Breadth
    first through every directory — node_modules, build output, dot directories included; only version-control
    internals, symlinks and a venv's installed files are not entered — at most `depth` levels and `budget`
    directories. What the bounds left unscanned is returned so the caller fails closed (bound read-only):
    collapsed to their parents while more than NESTED_BOUND, never above the workspace's children. `within`:
    the sandbox's writable roots (a directory it cannot write, HOME's dot-directories when HOME is the
    workspace, holds nothing it could plant: not entered). Kept 30 s."""
    import time

    within = tuple(within)
    now = time.monotonic()
    key = (workspace, within)
    hit = _NESTED.get(key)
    if hit is not None and now - hit[0] < 30:
        return hit[1], hit[2]
    found: list[str] = []
    unscanned: list[str] = []
    level, seen = [workspace], 0
    for _ in range(depth):
        nxt: list[str] = []
        for i, d in enumerate(level):
            if seen >= budget:
                unscanned += level[i:]
                break
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            venv = any(e.name == "pyvenv.cfg" for e in entries)
            for e in entries:
                if e.name in _VCS or (venv and e.name in _VENV_INSIDE) or not e.is_dir(follow_symlinks=False) \
                        or (within and not any(under(e.path, r) or under(r, e.path) for r in within)):
                    continue
                seen += 1
                if os.path.lexists(os.path.join(e.path, ".git")):
                    found.append(os.path.join(e.path, ".git"))
                nxt.append(e.path)
        level = nxt
        if unscanned:
            unscanned += level
            break
    else:
        unscanned += level
    unscanned = _collapse(workspace, unscanned)
    _NESTED[key] = (now, found, unscanned)
    return found, unscanned


def _collapse(workspace: str, dirs: list[str]) -> list[str]:
    out = sorted(set(dirs))
    while len(out) > NESTED_BOUND:
        up = sorted({d if os.path.dirname(d) == workspace else os.path.dirname(d) for d in out})
        if up == out:
            break
        out = up
    return [d for d in out if not any(d.startswith(o + "/") for o in out if o != d)]


PLAN_LARGE = 600


def plan_size_note(bound: Iterable[str]) -> str:
    """For a start that failed: the directory holding most of a large plan's paths (rt15 d06), or ""."""
    bound = list(bound)
    if len(bound) < PLAN_LARGE:
        return ""
    counts: dict[str, int] = {}
    for p in bound:
        d = os.path.dirname(p)
        while d not in ("/", ""):
            counts[d] = counts.get(d, 0) + 1
            d = os.path.dirname(d)
    top = max((d for d, n in counts.items() if n * 2 >= len(bound)), key=len, default="/")
    return (f"; the plan binds {len(bound)} paths, {counts.get(top, len(bound))} of them in {top} (remove what "
            "made them there, e.g. nested git repositories, or work in a smaller workspace)")


def nested_dot_gits(workspace: str) -> list[str]:
    """`.git` entries of repositories below `workspace` (not its own), as `nested_scan` finds them."""
    return nested_scan(workspace)[0]


def _ensure_dirs(gitdir: str, roots: Iterable[str]) -> None:
    """Create the missing GIT_DIRS of `gitdir` (0755), through a no-symlink fd of the git directory; only in
    a place confined work can write (one of `roots`): elsewhere it could not plant one either, and a `.git`
    file it wrote must not make hermes create directories outside (rt15 d03)."""
    from hermes_agent.nofollow import open_dir

    if not any(under(gitdir, r) for r in roots):
        return
    try:
        fd = open_dir(gitdir, create=False)
    except OSError:
        return
    try:
        for name in GIT_DIRS:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except OSError:
                pass  # exists (or cannot be made: then it is not bound, as before)
    finally:
        os.close(fd)


def _ensure_hooks_dir(hooks: str, workspace: str) -> None:
    """A core.hooksPath directory inside the workspace that does not exist yet is made (empty, with the
    directories leading to it) so it can be bound read-only: a hook planted there during the session would
    run in the user's own commit before any put-back (rt7 a13)."""
    from hermes_agent.nofollow import open_dir

    if os.path.lexists(hooks) or not under(hooks, os.path.realpath(workspace)) or hooks == os.path.realpath(workspace):
        return
    try:
        os.close(open_dir(hooks, create=True))
    except OSError:
        pass  # a link or a file on the way: not bound, the guard puts back what appears there


def _repo_gitdirs(dot: str, readonly: list[str], pinned: list[str]) -> list[str]:
    """The git directories of one `.git` entry (and its commondir); records what to pin or keep."""
    if os.path.isdir(dot) and not os.path.islink(dot):
        pinned.append(os.path.realpath(dot))
    elif os.path.isfile(dot) and not os.path.islink(dot):
        readonly.append(dot)  # the `gitdir:` file itself cannot be rewritten, renamed or removed
    gd = _gitdir_of(dot)
    if not gd or not os.path.isdir(gd):
        return []
    out = [gd]
    common = _read_small(os.path.join(gd, "commondir"), 4096).strip()
    if common:
        out.append(os.path.realpath(os.path.join(gd, common)))
    return out


def collapsed_repos(workspace: str, within: Iterable[str] = ()) -> list[str]:
    """Directories kept read-only whole because more than NESTED_REPOS repositories are nested below
    `workspace` (their worktrees and git directories, collapsed to at most NESTED_BOUND directories, never
    above the writable root holding them); empty below the bound. What confined work creates sets the size of
    the plan no further: one bind each (rt15 d06: 3,000 nested `.git` were 9,000 mounts, bwrap never started)."""
    nested = nested_scan(workspace, within)[0]
    if len(nested) <= NESTED_REPOS:
        return []
    roots = [r for r in dict.fromkeys((os.path.realpath(workspace), *within)) if r]
    dirs = [os.path.dirname(d) for d in nested]
    for dot in nested:  # a `gitdir:` file's target (and its commondir), a core.hooksPath, where confined work
        gds = _repo_gitdirs(dot, [], [])  # can write them
        hooks = [os.path.expanduser(h) for gd in gds for h in _hooks_paths(os.path.join(gd, "config"))]
        dirs += [p for p in (*gds, *(os.path.realpath(os.path.join(os.path.dirname(dot), h)) for h in hooks))
                 if any(under(p, r) for r in roots)]
    return collapse_within(roots, dirs, NESTED_BOUND)


def collapse_within(roots: list[str], dirs: list[str], bound: int) -> list[str]:
    """`dirs` replaced by their parents, level by level, until at most `bound` remain; a directory never goes
    above the innermost of `roots` holding it (those outside every root are dropped), so at worst the roots
    themselves remain."""
    def floor(d: str) -> str | None:
        held = [r for r in roots if under(d, r)]
        return max(held, key=len) if held else None

    def outermost(ds: set[str]) -> set[str]:
        return {d for d in ds if not any(a in ds for a in _ancestors(d))}

    out = outermost({d for d in dirs if floor(d)})
    while len(out) > bound:  # the deepest go up first: a shallow one is not raised for a deep one's sake
        deep = [d for d in out if d != floor(d)]
        if not deep:
            break
        depth = max(d.count("/") for d in deep)
        out = outermost({os.path.dirname(d) if d in deep and d.count("/") == depth else d for d in out})
    return sorted(out)


def _ancestors(path: str) -> list[str]:
    out, d = [], os.path.dirname(path)
    while d not in ("/", "") and d != os.path.dirname(d):
        out.append(d)
        d = os.path.dirname(d)
    return out


def git_paths(workspace: str, home: str, git_dir_env: str | None = None,
              within: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(read-only paths, directories to pin) for the repository of `workspace` and the repositories
    nested below it (bounded scan), resolved now; missing hooks/ and info/ directories are created (where
    confined work can write). Past NESTED_REPOS nested repositories, see `collapsed_repos`."""
    readonly: list[str] = []
    pinned: list[str] = []
    gitdirs: list[str] = []
    within = tuple(within)
    nested, unscanned = nested_scan(workspace, within)
    readonly += unscanned  # past the scan's bounds: fails closed (a repository there keeps its hooks)
    whole = collapsed_repos(workspace, within)
    for d in whole:  # a hooksPath not made yet: made empty so it is bound (at most NESTED_BOUND)
        _ensure_hooks_dir(d, workspace)
    readonly += whole
    for dot in (os.path.join(workspace, ".git"), *([] if whole else nested)):
        gitdirs += _repo_gitdirs(dot, readonly, pinned)
    if git_dir_env:
        gd = _gitdir_of(git_dir_env if os.path.isabs(git_dir_env) else os.path.join(workspace, git_dir_env))
        if gd and os.path.isdir(gd):
            gitdirs.append(gd)
    # a symlinked global config (~/.gitconfig -> ~/dotfiles/gitconfig) is read where it leads: that file is
    # kept read-only itself (dotlinks.py), and what it names only adds read-only paths
    configs = [os.path.realpath(os.path.join(home, rel)) for rel in (".gitconfig", ".config/git/config")]
    for gd in dict.fromkeys(gitdirs):
        _ensure_dirs(gd, (os.path.realpath(workspace), *within))
        readonly += [os.path.join(gd, n) for n in (*GIT_DIRS, "config", *GIT_REDIRECTS, "gitdir")]
        configs.append(os.path.join(gd, "config"))
    for cfg in configs:
        for raw in _hooks_paths(cfg):
            path = os.path.expanduser(raw)
            hooks = os.path.realpath(path if os.path.isabs(path) else os.path.join(workspace, path))
            _ensure_hooks_dir(hooks, workspace)
            readonly.append(hooks)
            if hooks.endswith("/.husky/_"):  # husky 9: its stubs run .husky/<hook>, hook code too
                from hermes_agent.terminal.sandbox.guardscan import HOOK_NAMES

                readonly += [os.path.join(os.path.dirname(hooks), n) for n in HOOK_NAMES]
    return [p for p in dict.fromkeys(readonly) if os.path.lexists(p)], pinned


def watch_stamp(workspaces: Iterable[str], home: str, dot_names: frozenset[str] | None = None) -> tuple:
    """A cheap fingerprint of what the plan depends on: each workspace's `.git` entry (and its config),
    HOME's dot-entry names (listed again only when HOME's mtime moved; only `dot_names` when given: in a closed
    HOME a new entry off the allowlist is unseen whatever the plan, so a test's or a tool's new `~/.foo` does not
    restart the launcher), the shell start-up files (what they source or put on PATH is planned from them).
    Equal stamps: same plan."""
    from hermes_agent.terminal.sandbox.shellrc import START_FILES

    out: list[object] = []
    for ws in workspaces:
        dot = os.path.join(ws, ".git")
        out.append(_sig(dot))
        out.append(_sig(os.path.join(dot, "config")))
    names = _dot_names(home)
    out.append(names if dot_names is None else names & dot_names)
    out += [_sig(os.path.join(home, name)) for name in START_FILES] if home else []
    return tuple(out)


def _sig(path: str) -> tuple | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mode, st.st_mtime_ns if not stat_mod.S_ISDIR(st.st_mode) else 0)


_DOTS: dict[str, tuple[int, frozenset[str]]] = {}


def _dot_names(home: str) -> frozenset[str]:
    try:
        mtime = os.stat(home).st_mtime_ns
    except OSError:
        return frozenset()
    cached = _DOTS.get(home)
    if cached and cached[0] == mtime:
        return cached[1]
    try:
        names = frozenset(n for n in os.listdir(home) if n.startswith("."))
    except OSError:
        names = frozenset()
    _DOTS[home] = (mtime, names)
    return names
