"""The run-later guard: files a tool runs when the user merely enters or opens the workspace or runs git
(git hooks, git config and the files that redirect git elsewhere, `.envrc`, a `.vscode/tasks.json` that runs
on folderOpen) stay as they were before confined work ran; project tool configs (guardtools.py) and a
workspace venv's python start-up code (guardpy.py) too, unless what changed in them is harmless.

bwrap keeps the existing ones read-only, but nothing can bind a file that does not exist yet, and Landlock
cannot carve a read-only subtree out of the writable workspace at all. So the unconfined side records each
protected file (whatever `.git` resolves to at use: hooks/, info/, config, commondir, config.worktree,
modules/*, worktrees/*, core.hooksPath even before it exists, the files the config includes; plus the
workspace's run-later files; guardscan.py) before confined
work and, after it, puts back what changed (guardfix.py): a changed or removed file gets its previous content
back, a new one is moved to the quarantine ($HERMES_HOME/quarantine, outside the sandbox's reach). A
repository created by the confined work (`git init lib`, `git clone`) keeps git's own files: hooks other
than `*.sample` are quarantined and its config keeps only the keys `git init`/`clone` write. Each action is
one line for the model (appended to the result) and the user (`notify`).

When: one `Guard` per set of workspaces in a process, shared by the terminal, background processes,
execute_code and MCP stdio servers (`guard_for`). `enter()` before confined work starts, `leave()` after it
ends (a check), `check()` after each MCP tool call. While nothing confined runs, changes are the user's:
the next `enter()` takes them as the new baseline — unless a sandbox's processes outlived their call
(`watch`: an orphan of a command), then they are theirs and put back; `settle()` when the session closes.
Stdlib only."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator

from hermes_agent.terminal.sandbox.deepwatch import DeepWatch
from hermes_agent.terminal.sandbox.guardscan import Fds, Scan, Tree, discover, spotted


class Guard:
    """See the module doc. `quarantine`: a directory only hermes can reach."""

    def __init__(self, workspaces: Iterable[str], quarantine: str,
                 notify: Callable[[str], None] | None = None, roots: Iterable[str] = ()) -> None:
        self.workspaces = tuple(os.path.realpath(w) for w in workspaces)
        self.roots = tuple(dict.fromkeys(os.path.realpath(r).rstrip("/") or "/" for r in roots))
        self.quarantine = quarantine
        self.notify = notify
        self._tree = Tree(self.workspaces)
        self._deep_spots: set[str] = set()
        self._deep = DeepWatch(self.workspaces, self.roots)  # every depth (deepwatch.py; started with the baseline)
        self._base: Scan | None = None
        from hermes_agent.terminal.sandbox.depwatch import DepWatch
        from hermes_agent.terminal.sandbox.gitobjects import ObjectWatch

        self._deps = DepWatch()  # dependency and build trees, watched once the session is tainted (rt14 b06, b13)
        self._objects = ObjectWatch(os.path.join(quarantine, ".git-verify") if quarantine else "")  # git's object store and what overrides it: immutable (rt13 a52)
        from hermes_agent.terminal.sandbox.gitrefs import RefWatch

        self._refs = RefWatch(self._objects)  # branch tips and index flags: a tainted turn's rewrite said (rt14b c21)
        self._first: dict[str, str] | None = None  # the baseline's repositories (git dir -> work tree, "" bare)
        self._active = 0
        self._held: list[str] = []
        self._lock = threading.Lock()
        # the conversation took in untrusted content (set by the terminal tool before each command): a change of
        # a file the user runs by hand (byhand.py) is then put back like a planted hook
        self.tainted = False
        from hermes_agent.terminal.sandbox import byhand

        byhand.remember(self.workspaces)  # the session report's baseline, if the CLI did not take it yet
        self._probes: list[Callable[[], bool]] = []  # are confined processes alive past their calls? (`watch`)
        self._stray = False  # they were, at the last check: what changes until the next one is theirs
        self._links_of: object = None  # the last sandbox spec whose writable roots separate_links walked
        self._link_lines: list[str] = []  # its lines for the model: the next delivering enter() or check()
        self._unnotified: list[str] = []  # and for the user, when there was nobody to tell yet

    def enter(self, *, deliver: bool = True, why: str = "confined work") -> list[str]:
        """Confined work is about to start: what changed since the last check is put back when confined
        work ran meanwhile, else taken as the user's; then the user's uncommitted work is kept (`keep`).
        Returns the lines of checks nobody read yet (kept for a later `enter` when not `deliver`)."""
        try:
            return self._enter(deliver)
        finally:
            self.keep(why)

    def keep(self, why: str) -> None:
        """Snapshot the uncommitted and untracked work of the workspaces and of the repositories the first
        baseline found in them (terminal/base.py `keep_work`), before confined work may touch it: at each `enter()` and before
        each MCP tool call (a running server may write at any time; this keeps what the user did meanwhile).
        The keepers: terminal/base.py."""
        from hermes_agent.terminal.base import KEEPERS, keep_work

        if KEEPERS:
            with self._lock:
                found = [w for w in (self._first or {}).values() if w]
            keep_work([*self.workspaces, *found], why)

    def _enter(self, deliver: bool) -> list[str]:
        with self._lock:
            if self._base is None:
                self._base = self._scan(None, None)
                self._first = dict(self._base.gitdirs)
                self._objects.track(self._base.gitdirs)
                self._refs.take(self._base.gitdirs)
                notes: list[str] = []
            elif self._active or self._stray:  # confined work ran since the last check, or may have
                notes = self._check()
            else:
                quiet, spots = self._light()
                self._deep.pycs.clear()  # compiled copies written meanwhile are the user's python's
                self._deep.linked.clear()
                if not quiet:
                    self._base = self._scan(self._base, None, spots)
                self._objects.accept()
                self._deps.accept()
                self._objects.track(self._base.gitdirs)
                self._refs.take(self._base.gitdirs)
                notes = []
            if self.tainted and not self._deps.armed:  # before the first command that could use the taint
                self._deps.arm(self.workspaces, self._base.venvs, self.roots)
            self._active += 1
            if not deliver:
                self._held += notes
                return []
            notes, self._held, self._link_lines = self._link_lines + self._held + notes, [], []
            return notes

    def separate_links(self, spec: object, stop: Callable[[], bool] | None = None) -> None:
        """Before the first confined work of a set of writable roots (and again for a new set): files there
        sharing their inode with a name outside are copied apart (hardlinks.py). The lines go to `notify` now
        and to the model with the next `enter()`. `stop`: the warm-up's "the session is closing" (the walk is
        called off and left to the first command, if one comes)."""
        if spec is self._links_of:  # this plan's roots were walked already (the common case: a few ns)
            return
        from hermes_agent.terminal.sandbox import hardlinks

        with self._lock:
            lines = hardlinks.once(*hardlinks.plan(spec), stop=stop)
            if lines is None:
                return
            self._links_of = spec
            for line in lines:
                if self.notify is not None:
                    self.notify(line)
                else:  # an MCP server's start: told when the terminal's guard brings a notifier (guard_for)
                    self._unnotified.append(line)
            self._link_lines += lines

    def leave(self, *, hold: bool = False) -> list[str]:
        """Confined work ended: check now. With `hold`, the lines wait for the next `enter()` (a background
        process or a server nobody waits on)."""
        with self._lock:
            self._active = max(0, self._active - 1)
            notes = self._check() if self._base is not None else []
            self._stray = not self._active and self._strays()
            if hold:
                self._held += notes
                return []
            return notes

    def watch(self, probe: Callable[[], bool]) -> None:
        """`probe()` says whether confined processes of a sandbox live past the calls that started them
        (SandboxRunner.strays); while one does, changes are theirs, not the user's."""
        with self._lock:
            if probe not in self._probes:
                self._probes.append(probe)

    def _strays(self) -> bool:
        for probe in self._probes:
            try:
                if probe():
                    return True
            except Exception:  # noqa: BLE001 - cannot tell: count them as alive
                return True
        return False

    def settle(self) -> list[str]:
        """The sandbox's processes are gone (the session closes): what they changed since the last check is
        put back (each line goes to `notify` as well)."""
        with self._lock:
            if (not self._stray and not self._deep.big) or self._base is None:
                return []
            self._stray = False
            if self._deep.big:  # a tree too big to watch whole: the full look, then the check
                self._deep_spots |= self._deep.full()
            return self._check()

    def check(self) -> list[str]:
        """A check while confined work goes on (after an MCP tool call); the hard-link walk's lines too, when no
        command delivered them yet."""
        with self._lock:
            lines, self._link_lines = self._link_lines, []
            return lines + (self._check() if self._base is not None else [])

    @contextlib.contextmanager
    def trusted(self) -> Iterator[None]:
        """A write by hermes itself (a file tool the approval gate let through): while confined work runs,
        what it changed so far is checked first and the write then joins the baseline, so the next check
        does not put it back. With nothing confined running the next `enter()` takes it anyway."""
        with self._lock:
            if not self._active or self._base is None:
                yield
                return
            self._held += self._check()
            try:
                yield
            finally:
                self._base = self._scan(self._base, None)

    def _widen(self, roots: tuple[str, ...]) -> None:
        """Watch more (another sandbox of the session writes more places): what confined work changed so far
        is checked with the old set first (lines held for the next `enter`), then the baseline is taken again
        with the new set, whose extra places no confined work of this guard could write yet."""
        if self._base is not None and self._active:
            self._held += self._check()
        self.roots = self._deep.within = roots
        if self._base is not None:  # the new places watched too (their repositories are the baseline's)
            self._base = self._scan(self._base, None, self._deep.full(self._deep.budget))

    def _light(self) -> tuple[bool, set[str]]:
        """(nothing to look at, directories that changed). The common cases in a few lstat calls: nothing
        watched moved, or only ordinary directories did (a file made or removed) and none of them holds a
        `.git`, `.envrc` or `.vscode/tasks.json` now."""
        deep, self._deep_spots = self._deep_spots | self._deep.drain(), set()  # new names at any depth
        mods, self._deep.modspots = self._deep.modspots, set()  # a module shadow made (guardscan.scripts)
        if self._base is None or not self._base.unchanged() or mods:
            return False, deep
        changed = deep if self._tree.quiet() else set(self._tree.refresh()) | deep
        return not any(spotted(d, self._base.items, self.roots) for d in changed), changed

    def _scan(self, old: Scan | None, known: dict[str, str] | None, spots: set[str] | None = None) -> Scan:
        """Look again: `old`'s slots, plus run-later files and `.git` entries in the directories that changed
        (added to `spots`, which a check keeps across its passes)."""
        spots = set() if spots is None else spots
        spots.update(self._tree.refresh())
        if old is None:  # the baseline: repositories nested past the per-command watch's bounds too
            from hermes_agent.terminal.sandbox.views import nested_scan

            spots.update(os.path.dirname(dot) for ws in self.workspaces
                         for dot in nested_scan(ws, self.roots)[0])
            spots.update(self._deep.start())
        else:  # a write of hermes's own (`trusted`) joins the baseline here, not the next check
            spots.update(self._deep.drain())
        fds = Fds()
        try:
            return discover(sorted(spots), fds, old, known, self.roots, self.workspaces)
        finally:
            fds.close()

    def _check(self) -> list[str]:
        from hermes_agent.terminal.sandbox.guardfix import shown

        notes = [shown(line) for line in self._objects.check(self._stash)]  # objects first: cheap when quiet
        if self._base is not None:
            notes += [shown(line) for line in self._refs.check(self._base.gitdirs, self.tainted)]
        if self.tainted:  # dependency and build trees (depwatch.py); an untainted command's changes are accepted
            notes += [shown(line) for line in self._deps.check(self._stash)]
        else:
            self._deps.accept()
        quiet, spots = self._light()
        notes += self._bytecode()
        if not quiet:
            notes += self._repair(spots)
        for line in notes:
            if self.notify is not None:
                self.notify(line)
        return notes

    def _bytecode(self) -> list[str]:
        """Compiled python copies confined work wrote (deepwatch.py): removed unless they are what their source
        compiles to (guardpyc.py)."""
        deep = self._deep
        if not deep.pycs and not deep.linked:
            return []
        from hermes_agent.terminal.sandbox import guardpyc
        from hermes_agent.termsafe import one_line

        (paths, deep.pycs), (linked, deep.linked) = (deep.pycs, set()), (deep.linked, set())
        lines = guardpyc.sweep(paths, self._stash, one_line, linked)
        for path in paths - linked:  # kept: a hard link made to one later is then known (deepwatch)
            with contextlib.suppress(OSError):
                deep.pyc_inodes[os.lstat(path).st_ino] = path
        return lines

    def _repair(self, spots: set[str]) -> list[str]:
        from hermes_agent.terminal.sandbox.guardfix import repair, shown

        base = self._base
        assert base is not None
        notes: list[str] = []
        lines = ["start"]
        for _ in range(4):  # a repair can uncover more (a .git moved back, a hooks/ made again): look again
            now = self._scan(base, base.gitdirs, spots)  # always against the baseline: nothing fresh carried
            fds = Fds()
            try:
                lines = repair(base, now, fds, self._stash, self.roots, self.tainted)
            finally:
                fds.close()
            notes += [shown(line) for line in lines]  # paths the command named: no raw controls or newlines
            if not lines:
                break
        if self._deep.unchecked:  # fail closed in words: what no look reached is not called clean
            notes.append(shown(self._deep.report()))
        self._base = now.settled() if not lines else self._scan(base, None, spots)
        notes += [shown(line) for line in self._objects.track(self._base.gitdirs, self._stash)]  # repos made
        return notes

    def _stash(self, path: str, data: bytes | None) -> str:
        """Keep what is at `path` before a repair replaces or removes it (hermes_agent.quarantine: the bytes
        read by the scan, or, when the scan did not keep them, a large file or a directory, read now without
        following a link); where ("" when not saved)."""
        from hermes_agent.nofollow import open_dir
        from hermes_agent.quarantine import session_quarantine

        if not self.quarantine:
            return ""
        q = session_quarantine(self.quarantine)
        if data is not None:
            return q.keep_bytes(path, data)
        try:
            fd = open_dir(os.path.dirname(path), create=False)
        except OSError:
            return ""
        try:
            return q.keep_at(fd, os.path.basename(path), path)
        finally:
            os.close(fd)


_GUARDS: dict[tuple[str, ...], Guard] = {}
_GUARDS_LOCK = threading.Lock()


def guard_for(workspaces: Iterable[str], quarantine: str, notify: Callable[[str], None] | None = None,
              roots: Iterable[str] = ()) -> Guard:
    """The one guard of these workspaces in this process (terminal, background processes and MCP servers of
    a session share it). `roots`: what the caller's sandbox can write (the guard watches the union)."""
    key = tuple(sorted(os.path.realpath(w) for w in workspaces))
    with _GUARDS_LOCK:
        guard = _GUARDS.get(key)
        if guard is None:
            guard = _GUARDS[key] = Guard(key, quarantine, notify, roots)
        else:
            with guard._lock:
                more = tuple(r for r in (os.path.realpath(r) for r in roots) if r not in guard.roots)
                grown = (*guard.roots, *more) if guard.roots and roots else ()
                if grown != guard.roots:
                    guard._widen(grown)
            if notify is not None and guard.notify is None:
                guard.notify = notify
                with guard._lock:
                    told, guard._unnotified = guard._unnotified, []
                for line in told:
                    notify(line)
        return guard


def keep_all(why: str) -> None:
    """Every guard's `keep` (the session's close, before its MCP servers stop: their exit handlers may write)."""
    with _GUARDS_LOCK:
        guards = list(_GUARDS.values())
    for guard in guards:
        guard.keep(why)


def new_repositories() -> dict[str, str]:
    """git directory -> work tree ("" for a bare one) of every repository a guard of this process knows now that
    its baseline did not hold: made, cloned or moved in by confined work at any depth (deepwatch.py), as of the
    last check (tools/ctxcommits.py judges their refs with an empty baseline)."""
    with _GUARDS_LOCK:
        guards = list(_GUARDS.values())
    out: dict[str, str] = {}
    for guard in guards:
        with guard._lock:
            if guard._base is not None and guard._first is not None:
                out.update((gd, wt) for gd, wt in guard._base.gitdirs.items() if gd not in guard._first)
    return out


def existing_guard(workspaces: Iterable[str]) -> Guard | None:
    """The guard of these workspaces if confined work ever started in this process (for hermes's own writes)."""
    key = tuple(sorted(os.path.realpath(w) for w in workspaces))
    with _GUARDS_LOCK:
        return _GUARDS.get(key)
