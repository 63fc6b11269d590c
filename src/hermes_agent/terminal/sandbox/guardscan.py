"""What the run-later guard (guard.py) watches, read through directory fds that follow no symlink.

A `Scan` maps each watched slot (directory, name) to the entry found there (None: absent) and a class:
"hook" (an entry of hooks/ or of a core.hooksPath directory), "info", "config" (also a file a config
includes), "redirect" (commondir, config.worktree), "dir" (a hooks/ or info/ directory entry itself, a
hooksPath directory and the directories leading to it or to an included config), "wt" (a file of
.git/worktrees/*), "dotgit" (a `.git` entry), "later" (`.envrc`, `.pdbrc`...: runlater.RC_FILES), "tasks" (`.vscode/tasks.json`), "tool" (a
project tool config of guardtools.TABLE; "value": any by shape, byvalue.py), "start" (python start-up code of a workspace venv: `.pth`,
sitecustomize, the modules they import; guardpy.py; and every entry of its bin/: runlater.py), "pyc" (a
compiled copy of such a module), "pkg" (a package.json whose scripts a hook runs: runlater.py), "byhand" (a
run-by-hand file: byhand.py), "byhandinc" (what it includes, and the directories on the way: byhandinc.py), "cfgcode" (a code file a
tool's config names: cfgcode.py) and
"exec" (a script the user runs by hand, `./run.sh`, `bin/tool`: an existing one changed in a tainted turn goes
back; guarditem.executables).
A `.husky/<hook>` is a "hook" whenever package.json names husky, installed or not (`npm install` installs it).
`fresh`: slots of git directories not in the baseline (made by the confined work). Stdlib only."""

from __future__ import annotations

import collections
import os
import re
import stat as st
from collections.abc import Iterable
from dataclasses import dataclass, field

from hermes_agent.terminal.sandbox import byvalue, depcode, pathbins
from hermes_agent.terminal.sandbox.byhand import GUARDED as BYHAND_NAMES
from hermes_agent.terminal.sandbox.byhandinc import follow as follow_includes
from hermes_agent.terminal.sandbox.cfgcode import follow as follow_code
from hermes_agent.terminal.sandbox.guarditem import Fds, Item, Slot, _exists, _sig, executables, item_at
from hermes_agent.terminal.sandbox.guardtools import PATHS as TOOL_PATHS
from hermes_agent.terminal.sandbox.runlater import RC_FILES
from hermes_agent.terminal.sandbox.views import GIT_DIRS, GIT_REDIRECTS, SKIP_DIRS

BYHAND = frozenset(BYHAND_NAMES)

GIT_FILES = ("config", *GIT_REDIRECTS)
WT_FILES = ("commondir", "config.worktree", "gitdir")
DEPTH, BUDGET = 4, 200  # the per-command watch for new entries (nested repositories: views.nested_scan)
TOP_BUDGET = 2000  # a workspace's own children are watched past BUDGET: filler directories cannot hide `lib/`
# Hook managers whose installed hooks run files of the work tree: those files are hook code too. husky 9 sets
# core.hooksPath=.husky/_ whose stubs run .husky/<hook>; pre-commit's and lefthook's hooks read their config.
_HUSKY_STUBS = ".husky/_"
HOOK_NAMES = ("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
              "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
              "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
              "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
              "fsmonitor-watchman", "post-index-change")
_MANAGERS = ((b"pre-commit", (".pre-commit-config.yaml",)),
             (b"lefthook", ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook-local.yml")))
_YIELDS = ("value", "exec")  # classes by shape: a slot also watched by a stricter class takes that one
READ_BUDGET = 64 << 20  # bytes of new entries read per scan (to quarantine); past it they are removed unsaved
INCLUDE_DEPTH, INCLUDES = 10, 32  # git stops at 10 nested includes; files followed per repository
_HOOKS_PATH = re.compile(rb"^\s*hookspath\s*=\s*(.+?)\s*$", re.I | re.M)


@dataclass
class Scan:
    items: dict[Slot, Item | None] = field(default_factory=dict)
    classes: dict[Slot, str] = field(default_factory=dict)
    fresh: set[Slot] = field(default_factory=set)
    gitdirs: dict[str, str] = field(default_factory=dict)  # git directory -> the work tree it serves ("" if none)
    hookdirs: set[str] = field(default_factory=set)  # core.hooksPath directories of the baseline's configs
    pathdirs: set[tuple[str, str]] = field(default_factory=set)  # (dir, "bin"|"py") relative PATH/PYTHONPATH name
    venvs: set[str] = field(default_factory=set)  # virtual environments found in the workspace
    pkgkeys: dict[Slot, set[str]] = field(default_factory=dict)  # package.json keys hooks reach (runlater.py)
    stamps: dict[str, tuple | None] = field(default_factory=dict)  # git dirs, modules/, worktrees/: lstat sigs
    _quick: list | None = field(default=None, repr=False)  # (path, inode, ctime) for `unchanged`

    def settled(self) -> Scan:
        """This scan as the next baseline (nothing fresh any more)."""
        return Scan(self.items, self.classes, set(), self.gitdirs, self.hookdirs, self.pathdirs, self.venvs,
                    self.pkgkeys, self.stamps)

    def unchanged(self) -> bool:
        """True when every watched entry and directory still has the inode and ctime it had (lstat by path:
        a look only — any difference, a link swapped in included, sends the caller to a full scan). ctime
        moves with every write, chmod, link or rename, and a command cannot set it."""
        quick = self._quick
        if quick is None:
            sigs = [(f"{d}/{n}", i.sig if i is not None else None) for (d, n), i in self.items.items()]
            sigs += list(self.stamps.items())
            quick = self._quick = [(p, sig[1], sig[4]) if sig else (p, -1, -1) for p, sig in sigs]
        lstat = os.lstat
        for path, ino, ctime in quick:
            try:
                s = lstat(path)
            except OSError:
                if ino != -1:
                    return False
                continue
            if s.st_ctime_ns != ctime or s.st_ino != ino:
                return False
        return True



class Tree:
    """Directories of the workspaces (breadth first: DEPTH levels, BUDGET directories, dependency and dot
    directories skipped except `keep` ones, which are not descended) with their mtimes: `refresh` returns those
    new or changed (an entry was added, removed or renamed in them)."""

    def __init__(self, roots: Iterable[str], keep: tuple[str, ...] = (".vscode", ".cargo", ".mise", ".config", ".tox",
                                                              ".nox", ".direnv", ".venvs", ".virtualenvs")) -> None:
        self.dirs: dict[str, tuple[int, int]] = {r: (-1, 0) for r in roots}
        self.keep = keep

    def quiet(self) -> bool:
        """No directory changed since the last `refresh` (nothing updated)."""
        lstat = os.lstat
        try:
            return all(lstat(d).st_mtime_ns == mtime for d, (mtime, _depth) in self.dirs.items())
        except OSError:
            return False

    def refresh(self) -> list[str]:
        changed: list[str] = []
        for d, (mtime, depth) in list(self.dirs.items()):
            try:
                s = os.lstat(d)
            except OSError:
                s = None
            if s is None or not st.S_ISDIR(s.st_mode):
                if depth:
                    self.dirs.pop(d, None)
            elif s.st_mtime_ns != mtime:
                self.dirs[d] = (s.st_mtime_ns, depth)
                changed.append(d)
        queue = collections.deque(changed)  # breadth first: shallow directories before the budget runs out
        while queue:
            d = queue.popleft()
            depth = self.dirs.get(d, (0, DEPTH))[1]
            if depth >= DEPTH or os.path.basename(d) in self.keep:
                continue
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            for e in entries:
                if e.path in self.dirs or len(self.dirs) >= (TOP_BUDGET if depth == 0 else BUDGET) \
                        or (e.name in SKIP_DIRS and e.name not in self.keep) \
                        or (e.name.startswith(".") and e.name not in self.keep) or not e.is_dir(follow_symlinks=False):
                    continue
                try:
                    self.dirs[e.path] = (e.stat(follow_symlinks=False).st_mtime_ns, depth + 1)
                except OSError:
                    continue
                changed.append(e.path)
                queue.append(e.path)
        return changed



class _Walk:
    """One discovery pass (see `discover`)."""

    def __init__(self, fds: Fds, old: Scan | None, known: dict[str, str] | None, roots: tuple[str, ...]) -> None:
        self.fds, self.old, self.known, self.roots = fds, old, known, roots
        self.scan = Scan()
        self.budget = [READ_BUDGET]
        self.scriptdirs: list[str] = []

    def reachable(self, path: str) -> bool:
        """Under a root the sandbox can write (what it cannot write is not the guard's to watch or put back)."""
        return not self.roots or any(path == r or path.startswith(r + "/") for r in self.roots)

    def add(self, slot: Slot, cls: str, fresh: bool) -> Item | None:
        if slot in self.scan.items:  # a config by shape (byvalue.py) or an executable yields to a stricter class
            self.scan.classes[slot] = cls if self.scan.classes[slot] in _YIELDS else self.scan.classes[slot]
            return self.scan.items[slot]
        if not self.reachable(slot[0]):
            return None
        fd = self.fds.get(slot[0])
        prev = self.old.items.get(slot) if self.old is not None else None
        cls = self.old.classes.get(slot, cls) if cls in _YIELDS and self.old is not None else cls  # as above
        item = item_at(fd, slot[1], prev, self.budget) if fd is not None else None
        self.scan.items[slot], self.scan.classes[slot] = item, cls
        if fresh:
            self.scan.fresh.add(slot)
        return item

    def listing(self, d: str, cls: str, fresh: bool, only: frozenset[str] | None = None) -> None:
        fd = self.fds.get(d)
        for name in os.listdir(fd) if fd is not None else []:
            if only is None or name in only:
                self.add((d, name), cls, fresh)

    def spot(self, d: str) -> None:
        """Look in directory `d` for run-later files and a `.git`."""
        fd = self.fds.get(d)
        if fd is None:
            return
        if _exists(fd, ".git"):
            self.add((d, ".git"), "dotgit", False)
        if _exists(fd, ".vscode/tasks.json"):
            self.add((os.path.join(d, ".vscode"), "tasks.json"), "tasks", False)
        if _exists(fd, "HEAD") and _exists(fd, "objects") and _exists(fd, "refs"):
            self.repo(d, "")  # a bare repository by shape, no `.git` anywhere: git uses it when run inside
        try:
            names = set(os.listdir(fd))  # one listing instead of a stat per table row
        except OSError:
            return
        for rel in TOOL_PATHS:  # present, or its directory is (a file made there later is then seen)
            sub, _, name = rel.rpartition("/")
            if rel.split("/", 1)[0] in names and (not sub or _exists(fd, sub)):
                self.add((os.path.join(d, sub) if sub else d, name), "tool", False)
        for name in RC_FILES.keys() & names:
            self.add((d, name), "later", False)
        for name in BYHAND & names:  # run by hand (package.json scripts, Makefile...): judged by taint
            self.add((d, name), "byhand", False)
        for name in byvalue.names(d, names, self.roots):  # any config by its shape, judged by value (byvalue.py)
            self.add((d, name), "value", False)
        for name in executables(fd, d, self.roots):  # a script the user runs by hand (`./run.sh`): judged by taint
            self.add((d, name), "exec", False)
        held = self.scan.items  # `bin` on PATH, and what the project's tools put first on PATH: here too (a05, a56)
        self.scan.pathdirs.update(pathbins.named_in(d, names, self.roots, lambda n: _held_or_read(held, d, n)))
        self.scripts(d, names)
        if "pyvenv.cfg" in names:
            self.venv(d)
        for name in names:  # a venv is a directory holding pyvenv.cfg, whatever it is called (.tox/py311 too)
            if name not in RC_FILES and _exists(fd, f"{name}/pyvenv.cfg"):
                self.venv(os.path.join(d, name))

    def scripts(self, d: str, names: set[str]) -> None:
        """A directory of Python files the user runs (`python scripts/tool.py`) or pytest imports (its default
        prepend mode puts a test's directory first, or the first one above a package: `src/`) is first on
        sys.path like the workspace (rt13 a58): modules named like an importable one there are watched as in
        the workspace. Not a package's own directory (its modules are imported as `pkg.mod`), nor installed
        packages."""
        from hermes_agent.terminal.sandbox import guardpy

        fd = self.fds.get(d)
        if "__init__.py" in names or fd is None or (self.roots and byvalue.skipped(d, self.roots)):
            return
        mods = guardpy.shadowed(self.scan.venvs | (self.old.venvs if self.old is not None else set()))
        if any(n.endswith(".py") and n[:-3] not in mods for n in names) or any(
                "." not in n and n not in mods and _exists(fd, f"{n}/__init__.py") for n in names):
            self.scriptdirs.append(d)  # looked into after the PYTHONPATH directories (their rule is stricter)

    def venv(self, v: str) -> None:
        """A virtual environment: the start-up code of each lib/python*/site-packages (guardpy.py)."""
        if v in self.scan.venvs or not self.reachable(v):
            return
        self.scan.venvs.add(v)
        # the way to each site-packages, and the interpreters an IDE starts: a directory swapped for a link
        # (python follows it, the guard does not) or an interpreter swapped for a script is judged too
        for d, name in ((os.path.dirname(v), os.path.basename(v)), (v, "lib"), (v, "bin")):
            self.add((d, name), "start", False)
        bindir = self.fds.get(os.path.join(v, "bin"))  # interpreters, activate*, console scripts: all run later
        self.scan.stamps[os.path.join(v, "bin")] = _sig(os.path.join(v, "bin"))
        for name in os.listdir(bindir) if bindir is not None else ():
            self.add((os.path.join(v, "bin"), name), "start", False)
        for py in self._children(os.path.join(v, "lib")):
            if os.path.basename(py).startswith("python"):
                self.add(os.path.split(py), "start", False)
                self.add((py, "site-packages"), "start", False)
                self.site(os.path.join(py, "site-packages"))

    def site(self, sp: str) -> None:
        """`.pth` files, sitecustomize/usercustomize in any form, the modules `.pth` lines import (setuptools'
        editable finder, `_distutils_hack`) with their compiled copies, and sitecustomize in every writable
        directory a `.pth` puts on sys.path. Each directory is stamped: an entry made there means a full look."""
        from hermes_agent.terminal.sandbox import guardpy

        self.scan.stamps[sp] = _sig(sp)
        fd = self.fds.get(sp)
        names = os.listdir(fd) if fd is not None else []
        mods = set(guardpy.CUSTOMIZE) | {guardpy.HACK}
        imported: set[str] = set()
        for name in sorted(names, key=lambda n: not n.endswith(".pth")):  # the .pth first: they name modules
            stem = name.split(".", 1)[0]
            if name.endswith((".dist-info", ".egg-info")):  # what entry-point hosts import (depcode.py, rt14 b03)
                self.add((os.path.join(sp, name), "entry_points.txt"), "start", False)
            if not name.endswith(".pth") and stem not in mods:
                continue
            if name == stem and stem in imported:  # a package a .pth line imports: its __init__.py
                self.add((os.path.join(sp, name), "__init__.py"), "start", False)
                continue
            item = self.add((sp, name), "start", False) if name != guardpy.HACK else None
            if name.endswith(".pth") and item is not None and item.data:
                mods.update(guardpy.finders(item.data))
                imported.update(depcode.pth_imports(guardpy.pth_lines(item.data)[0]) - mods)  # `import _virtualenv`
                mods.update(imported)  # (rt14 b09)
                for line in guardpy.pth_lines(item.data)[1]:
                    self.customize(os.path.normpath(os.path.join(sp, line)))
        hack = os.path.join(sp, guardpy.HACK)
        for name in ("__init__.py", "override.py"):
            self.add((hack, name), "start", False)
        for d in (sp, hack):
            self.scan.stamps[os.path.join(d, "__pycache__")] = _sig(os.path.join(d, "__pycache__"))
            self.scan.stamps[d] = _sig(d)
            cache = self.fds.get(os.path.join(d, "__pycache__"))
            for name in os.listdir(cache) if cache is not None else ():
                if d == hack or name.split(".", 1)[0] in mods:
                    self.add((os.path.join(d, "__pycache__"), name), "pyc", False)

    def customize(self, d: str, shadow: bool = False, cls: str = "shadow", stamp: bool = True) -> None:
        """sitecustomize/usercustomize in any form in a writable directory on sys.path; with `shadow` (a
        PYTHONPATH directory) also every top-level module or package named like one python or hermes imports
        (guardpy.shadowed), and a package's `__init__.py`."""
        from hermes_agent.terminal.sandbox import guardpy

        if not self.reachable(d) or (d in self.scan.stamps and not shadow):  # also a .pth's: look (rt11 a21)
            return
        if stamp:  # a script directory is not: the tree watch and the deep watch spot a new module there
            self.scan.stamps[d] = _sig(d)
        fd = self.fds.get(d)
        venvs = self.scan.venvs | (self.old.venvs if self.old is not None else set())
        names = guardpy.shadowed(venvs) if shadow else frozenset()  # what the user's Pythons import (rt11 a21)
        for name in os.listdir(fd) if fd is not None else ():
            stem = name.split(".", 1)[0]
            if stem in guardpy.CUSTOMIZE:
                self.add((d, name), "start", False)
            elif stem in names and name != "__pycache__" and (cls == "shadow" or _importable(fd, name)):
                item = self.add((d, name), cls, False)
                if item is not None and item.kind == st.S_IFDIR and cls == "shadow":
                    self.add((os.path.join(d, name), "__init__.py"), "shadow", False)

    def dotgit(self, d: str, item: Item | None) -> None:
        """Follow a `.git` entry to its git directory (a directory, or a `gitdir:` file)."""
        if item is None:
            return
        if item.kind == st.S_IFDIR:
            self.repo(os.path.join(d, ".git"), d)
        elif item.kind == st.S_IFREG and item.data and item.data.lower().startswith(b"gitdir:"):
            target = os.fsdecode(item.data.split(b":", 1)[1].strip())
            self.repo(os.path.normpath(os.path.join(d, os.path.expanduser(target))), d)

    def repo(self, gd: str, worktree: str, depth: int = 0) -> None:
        # a linked worktree's common dir: only its objects/ and refs/ are writable (approval/linkedgit.py)
        if gd in self.scan.gitdirs or depth > 3 or not (self.reachable(gd) or self.reachable(
                os.path.join(gd, "objects"))) or self.fds.get(gd) is None:
            return
        fresh = self.known is not None and gd not in self.known
        self.scan.gitdirs[gd] = worktree
        for path in (gd, os.path.join(gd, "modules"), os.path.join(gd, "worktrees")):
            self.scan.stamps[path] = _sig(path)
        for name in GIT_FILES:
            self.add((gd, name), "config" if name == "config" else "redirect", fresh)
        for name in GIT_DIRS:
            self.add((gd, name), "dir", fresh)
            self.listing(os.path.join(gd, name), "hook" if name == "hooks" else "info", fresh)
        for path in (os.path.join(gd, "refs"), os.path.join(gd, "refs", "replace")):  # git replace (rt13 a53)
            self.scan.stamps[path] = _sig(path)
        self.listing(os.path.join(gd, "refs", "replace"), "replace", fresh)
        self._links(gd, worktree, fresh, depth)

    def _links(self, gd: str, worktree: str, fresh: bool, depth: int) -> None:
        """What a git directory points at: core.hooksPath, commondir (baseline only), modules, worktrees."""
        if self.known is None:  # only the baseline's configs name hook directories and includes (a changed
            self._configs(gd, worktree)  # config is put back; a fresh repository's loses its include and hooksPath)
        common = self.scan.items.get((gd, "commondir"))
        if common is not None and common.data and (self.known is None or not fresh):
            target = os.path.normpath(os.path.join(gd, os.fsdecode(common.data.strip())))
            if self.known is None or target in self.known:
                self.repo(target, "", depth + 1)
        for sub in self._children(os.path.join(gd, "modules")):
            self._module(sub, depth + 1)
        for wt in self._children(os.path.join(gd, "worktrees")):
            self.scan.stamps[wt] = _sig(wt)
            for name in WT_FILES:
                self.add((wt, name), "wt", fresh)

    def _configs(self, gd: str, worktree: str) -> None:
        """The config files of `gd` and all they include (include.path, includeIf.*.path: relative to the
        including file, `~` expanded, recursively, INCLUDES files at most): each included file is watched like
        `config`, with the directories leading to it; core.hooksPath in any of them names a hook directory."""
        from hermes_agent.terminal.sandbox.gitconf import include_paths

        queue = collections.deque([(gd, "config", 0), (gd, "config.worktree", 0)])
        seen = {(gd, "config"), (gd, "config.worktree")}
        while queue:
            d, name, depth = queue.popleft()
            item = self.scan.items.get((d, name))
            if item is None or item.data is None or item.kind != st.S_IFREG:
                continue
            for raw in _HOOKS_PATH.findall(item.data):
                path = os.path.expanduser(os.fsdecode(raw.strip(b'"')))
                self.scan.hookdirs.add(os.path.normpath(os.path.join(worktree or gd, path)))
            if depth >= INCLUDE_DEPTH:
                continue
            for path in include_paths(item.data.decode("utf-8", "replace")):
                slot = os.path.split(os.path.normpath(os.path.join(d, os.path.expanduser(path))))
                if slot not in seen and len(seen) < INCLUDES:
                    seen.add(slot)
                    self.path(slot, "config", worktree or gd)
                    queue.append((*slot, depth + 1))

    def managers(self) -> None:
        """The config a hook manager's installed hook reads from the work tree (pre-commit, lefthook): watched
        as a hook, present or not (a config created under an installed hook runs on the next commit)."""
        from hermes_agent.terminal.sandbox.runlater import hook_scripts

        worktrees = [w for w in self.scan.gitdirs.values() if w]
        texts: dict[str, list[bytes]] = {}
        for _ in range(2):  # the hooks, then the manager configs they read (lefthook.yml: `run: npm test`)
            for (d, name), cls in list(self.scan.classes.items()):
                item = self.scan.items.get((d, name))
                if cls != "hook" or item is None or not item.data or name.endswith(".sample"):
                    continue  # git never runs a *.sample hook
                wt = self.scan.gitdirs.get(os.path.dirname(d)) or next(
                    (w for w in worktrees if d.startswith(w + "/")), "")
                texts.setdefault(wt, []).append(item.data)
                for marker, files in _MANAGERS if wt else ():
                    if marker in item.data:
                        for f in files:
                            self.add((wt, f), "hook", False)
                            if self.scan.classes.get((wt, f)) == "byhand":  # spotted first: a hook it is
                                self.scan.classes[(wt, f)] = "hook"
        for wt in worktrees:  # husky in package.json: `npm install` (its `prepare`) makes .husky/<hook> git's hooks
            pkg = self.scan.items.get((wt, "package.json"))
            if pkg is not None and pkg.data and b'"husky"' in pkg.data:
                for name in HOOK_NAMES:
                    self.add((os.path.join(wt, ".husky"), name), "hook", False)
        for wt, found in texts.items():  # the package.json scripts a hook runs (`npm test`): run later too
            keys = hook_scripts(found) if wt else set()
            if keys:
                self.scan.pkgkeys[(wt, "package.json")] = keys
                self.add((wt, "package.json"), "pkg", False)

    def path(self, slot: Slot, cls: str, stop: str) -> None:
        """Watch `slot` as `cls` and each directory leading to it (up to `stop`, a work tree or git directory,
        a root of the sandbox or 8 levels) as "dir": a link or file put on the way is removed before git follows it, a directory that
        appears is looked into (no fd follows a link, so a link there would hide what lies behind it)."""
        self.add(slot, cls, False)
        d = slot[0]
        for _ in range(8):
            if d in (stop, "/") or d in self.roots or d in self.scan.gitdirs or d in self.scan.gitdirs.values() \
                    or not self.reachable(os.path.dirname(d)):
                break
            self.add(os.path.split(d), "dir", False)
            d = os.path.dirname(d)

    def _module(self, d: str, depth: int) -> None:
        """A submodule's git directory (it has a HEAD), or a directory of them (`modules/a/b`)."""
        fd = self.fds.get(d)
        if fd is None or depth > 3:
            return
        if _exists(fd, "HEAD"):
            self.repo(d, "", depth)
            return
        self.scan.stamps[d] = _sig(d)
        for sub in self._children(d):
            self._module(sub, depth + 1)

    def _children(self, d: str) -> list[str]:
        fd = self.fds.get(d)
        if fd is None:
            return []
        out = []
        for name in os.listdir(fd):
            try:
                if st.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    out.append(os.path.join(d, name))
            except OSError:
                continue
        return out


SPOT_SLOTS = (*((".", n) for n in RC_FILES), *((".", n) for n in BYHAND_NAMES), (".", ".git"), (".vscode", "tasks.json"), (".", "HEAD"),
              *((rel.rpartition("/")[0] or ".", rel.rpartition("/")[2]) for rel in TOOL_PATHS))


def spotted(d: str, known: dict[Slot, Item | None], roots: tuple[str, ...] = ()) -> bool:
    """Does directory `d` hold a run-later file or `.git` not in `known` yet (lstat by path: a look only)?"""
    for sub, name in SPOT_SLOTS:
        slot = (d if sub == "." else f"{d}/{sub}", name)
        if slot in known:
            continue
        try:
            os.lstat(f"{slot[0]}/{name}")
            return True
        except OSError:
            continue
    return byvalue.unknown(d, known, roots)  # a file of a config shape (one listing)



def _importable(fd: int | None, name: str) -> bool:
    """A name python imports from a sys.path directory: a module file, or a folder (a package); not `README`."""
    if name.endswith((".py", ".pyc", ".pyw", ".so", ".pyd")):
        return True
    try:
        return "." not in name and fd is not None and st.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def discover(spots: Iterable[str], fds: Fds, old: Scan | None, known: dict[str, str] | None,
             roots: tuple[str, ...] = (), cwds: Iterable[str] = ()) -> Scan:
    """Every watched slot now: those of `old` (looked at again), run-later files and `.git` entries in the
    directories `spots`, and all that the `.git` entries resolve to; modules named like an importable one in
    `cwds` (the workspaces: python run there puts them first on sys.path). `known`: the baseline's git
    directories (None: this is the baseline, nothing is fresh). `roots`: what the sandbox can write; nothing
    outside them is watched (empty: everything)."""
    walk = _Walk(fds, old, known, roots)
    for d in spots:
        walk.spot(d)
    for d in pathbins.pythonpath_dirs(roots):  # the user's next hermes (or python) starts with these on sys.path: a
        walk.customize(d, shadow=True)  # sitecustomize (rt7 a34) or a `yaml.py` there runs at its start
    for d in cwds:  # `python -m X`, `-c`, the REPL run there put it first on sys.path (rt13 a44)
        walk.customize(d, shadow=True, cls="cwdshadow")
    walk.scan.pathdirs |= old.pathdirs if old is not None else set()
    for d in sorted(d for d, kind in walk.scan.pathdirs if kind == "py"):  # `PYTHONPATH=src`: every src/ (a28)
        walk.customize(d, shadow=True)
    for d in walk.scriptdirs:  # `python scripts/x.py`, pytest: the script's or test's directory (rt13 a58)
        if d not in walk.scan.stamps:
            walk.customize(d, shadow=True, cls="cwdshadow", stamp=False)
    # the user's PATH where the sandbox writes: a new `ls` there (rt11 a04), also where a relative entry leads (a05)
    bindirs = sorted({*pathbins.dirs(roots), *pathbins.expanded(walk.scan.pathdirs, walk.scan.stamps, _sig)})
    progs = pathbins.programs() if bindirs else frozenset()
    for d in bindirs:
        walk.scan.stamps[d] = _sig(d)  # a new entry there: a full look
        walk.add(os.path.split(d), "pathbin", False)  # the directory itself: swapped for a link, judged
        walk.listing(d, "pathbin", False, progs)  # the entries that can shadow a program (pathbins.programs)
    if old is not None:
        for slot, cls in old.classes.items():
            if cls in ("later", "dotgit", "tasks", "byhand", "byhandinc"):
                walk.add(slot, cls, False)
    for (d, name), cls in list(walk.scan.classes.items()):
        if cls == "dotgit":
            walk.dotgit(d, walk.scan.items[(d, name)])
        elif cls == "byhand":  # what a run-by-hand file includes runs with it (byhandinc.py)
            follow_includes(walk, d, name)
        if cls in ("value", "tool", "byhand"):  # the code files a tool's config names (cfgcode.py)
            follow_code(walk, d, name)
    for gd, worktree in (old.gitdirs.items() if old is not None else ()):
        walk.repo(gd, worktree)
    for v in sorted(old.venvs) if old is not None else ():
        walk.venv(v)
    walk.scan.hookdirs |= old.hookdirs if old is not None else set()
    for d in sorted(walk.scan.hookdirs):  # watched whether or not it exists yet (made later: looked into)
        walk.path(os.path.split(d), "dir", "")
        walk.listing(d, "hook", False)
        if d.endswith("/" + _HUSKY_STUBS):  # present or not: one made by the command runs on the next commit
            for name in HOOK_NAMES:
                walk.add((os.path.dirname(d), name), "hook", False)
    walk.managers()
    if old is not None:  # a slot that was watched and is gone from its listing: absent now
        for slot, cls in old.classes.items():
            if slot not in walk.scan.items:
                walk.add(slot, cls, slot in old.fresh)
    return walk.scan


def _held_or_read(held: dict, d: str, name: str) -> bytes | None:
    """The bytes the guard holds of `d/name`, or for a file it does not hold (a Makefile's `include`d tools.mk,
    only parsed for the PATH it sets: pathadds.make) the file as it is now, no link followed at its name."""
    from hermes_agent.nofollow import read_regular_or_none

    item = held.get((d, name))
    return item.data if item is not None else read_regular_or_none(os.path.join(d, name), 1 << 20)
