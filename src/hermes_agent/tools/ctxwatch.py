"""The session's context-file watch (issue 19 item 9): AGENTS.md & co. anywhere in the workspace (a bounded
walk: guardscan.Tree, DEPTH levels, BUDGET directories, dependency/build/dot directories skipped but
`.github`) and in the directories the next prompt loads from (cwd up to the git root), as this session
accepts them. Confined code (terminal, process, execute_code, MCP tools and the background processes they
leave) that creates, changes or removes one is put back unless a person says yes to that change
(`ctx.approve_context`, the gate's once-only question), in any conversation: no guess about what the text
means. Checked after each confined call, before the next one (a background process may have written
meanwhile), when a background process ends and at session end. Changes seen while nothing confined could
run are the user's (the baseline moves); hermes's own file-tool writes join it (`trusted`). The accepted
files are vouched for in the ledger (memory/ctxledger.py), whose windows let the loader hold back what this
walk cannot see."""

from __future__ import annotations

import contextlib
import logging
import os
import threading

from hermes_agent.tools import ctxguard
from hermes_agent.tools.ctxguard import WATCHED, Entry

log = logging.getLogger(__name__)
Key = tuple[str, str]


class Watch:
    """See the module doc. `roots`: workspace directories walked; `dirs`: directories looked at whatever the
    walk's bounds (where the next prompt loads from); `home`: the Hermes home of the ledger; `window_roots`:
    what confined code can write (the ledger window)."""

    def __init__(self, roots: list[str], dirs: list[str], home: str, window_roots: list[str]) -> None:
        from hermes_agent.terminal.sandbox.guardscan import Tree

        self.tree = Tree(roots, keep=(".github",))
        self.extra = [d for d in dirs if d not in roots]
        self.extra_m: dict[str, int] = {}
        self.home, self.window_roots = home, window_roots
        self.base: dict[Key, Entry] | None = None
        self.roots = roots
        self.refs: dict[str, dict[str, str]] = {}  # repository root -> ref tips at the first confined call
        self.over: dict[str, tuple] = {}  # nested repositories past MAX_NESTED -> their ref files' stamps
        self.active = 0  # confined calls running now
        self.background = False  # a background process ran since the last look
        self.held: list[str] = []  # lines of checks nobody read yet (background exits)
        self.window: int | None = None
        self.lock = threading.RLock()
        self._listening: object = None  # the background-exit listener (removed at finish)

    # -- looking ---------------------------------------------------------------------------------

    def _probe(self, dirs: list[str], keys: set[Key]) -> dict[Key, Entry]:
        """Every watched name present in `dirs` (a listing says which: one call per directory), plus `keys`."""
        want = set(keys)
        for d in dirs:
            try:
                names = set(os.listdir(d))
            except OSError:
                continue
            want.update((d, rel) for rel in WATCHED if rel.split("/", 1)[0] in names)
        now: dict[Key, Entry] = {}
        for (d, rel), entry in ctxguard.snapshot_keys(sorted(want)).items():
            if entry.kind != "absent":
                now[(d, rel)] = entry
        return now

    def _quiet(self) -> bool:
        """Nothing moved: no walked directory changed and every known file has its inode and ctime."""
        assert self.base is not None
        if not self.tree.quiet():
            return False
        for (d, rel), entry in self.base.items():
            try:
                s = os.lstat(os.path.join(d, rel))
            except OSError:
                return False
            if (s.st_ino, s.st_ctime_ns) != (entry.sig[1], entry.sig[4]):
                return False
        return self._extra_mtimes() == self.extra_m

    def _extra_mtimes(self) -> dict[str, int]:
        out = {}
        for d in self.extra:
            try:
                out[d] = os.lstat(d).st_mtime_ns
            except OSError:
                out[d] = -1
        return out

    def _look(self) -> dict[Key, Entry]:
        changed = self.tree.refresh()
        changed += [os.path.dirname(d) for d in changed if os.path.basename(d) == ".github"]
        self.extra_m = self._extra_mtimes()
        return self._probe([*changed, *self.extra], set(self.base or ()))

    def _found(self, now: dict[Key, Entry]) -> list[tuple[Key, Entry, Entry]]:
        base = self.base or {}
        absent = Entry("absent")
        return [(k, base.get(k, absent), now.get(k, absent)) for k in sorted(set(base) | set(now))
                if not ctxguard.same(base.get(k, absent), now.get(k, absent))]

    # -- the calls -------------------------------------------------------------------------------

    def start(self) -> None:
        """The first baseline (and the ledger window) at the session's first confined call."""
        if self.base is None:
            self.extra_m = self._extra_mtimes()
            self.base = self._probe(self.tree.refresh() + self.extra, set())
            from pathlib import Path

            from hermes_agent.memory.context_files import git_root
            from hermes_agent.tools.ctxcommits import tips

            repos = dict.fromkeys(str(r) for r in (git_root(Path(root)) for root in self.roots) if r)
            nested = [r for r in _nested(self.roots, self.window_roots) if r not in repos]
            repos.update(dict.fromkeys(nested[:MAX_NESTED]))
            self.refs = {r: t for r in repos if (t := tips(r)) is not None}
            from hermes_agent.tools.ctxcommits import ref_stamp

            self.over = {r: ref_stamp(r) for r in nested[MAX_NESTED:]}  # past the bound: stamped, not noted
            try:
                from hermes_agent.memory.ctxledger import open_window

                self.window = open_window(self.home, self.window_roots)
            except OSError:
                log.warning("could not record the confined window in the context-file ledger", exc_info=True)

    def settle(self, confined: bool) -> list[tuple[Key, Entry, Entry]]:
        """What changed since the baseline; with `confined` False the changes are the user's and join it."""
        assert self.base is not None
        if self._quiet():
            return []
        now = self._look()
        found = self._found(now)
        if not confined or not found:
            self.base = now
            return []
        changed = {key for key, _old, _new in found}  # the rest keep their fresh signature
        self.base = {k: v for k, v in now.items() if k not in changed} | \
            {k: old for k, old, _new in found if old.kind != "absent"}
        return found

    def decide(self, found: list[tuple[Key, Entry, Entry]], tool: str, ask: object, session_id: str | None) -> list[str]:
        """Ask about each change (when `ask` can reach a person); what is not kept is put back. Lines for the
        model and the user."""
        assert self.base is not None
        lines, undo, kept = [], [], []
        for key, old, new in found:
            what = _describe(key, old, new)
            decision = ask(tool, what, session_id=session_id) if callable(ask) else None
            if decision is not None and getattr(decision, "allowed", False):
                kept.append((key, new))
                lines.append(f"{os.path.join(*key)}: {what.split(': ', 1)[-1]} kept (the user said yes)")
            else:
                undo.append((key, old, new, getattr(decision, "via", "no_approver")))
        for key, new in kept:
            if new.kind == "absent":
                self.base.pop(key, None)
            else:
                self.base[key] = new
        self._vouch([(key, new) for key, new in kept])
        done = ctxguard.undo_changes([(k, o, n) for k, o, n, _ in undo], self.quarantine()) if undo else []
        for (_key, old, new, via), (path, ok, saved) in zip(undo, done, strict=True):
            lines.append(_undone_line(path, old, new, ok, tool, via == "user", saved))
        if undo:
            lines.append(HOW)
        fresh = ctxguard.snapshot_keys([k for k, *_ in undo])
        for key, entry in fresh.items():
            if entry.kind == "absent":
                self.base.pop(key, None)
            else:
                self.base[key] = entry
        return lines

    def quarantine(self) -> object:
        """The session's quarantine ($HERMES_HOME/quarantine, shared with the sandbox guard's repairs)."""
        from hermes_agent.quarantine import session_quarantine

        return session_quarantine(os.path.join(self.home, "quarantine"))

    def _vouch(self, items: list[tuple[Key, Entry]]) -> None:
        from hermes_agent.memory.ctxledger import digest, vouch

        try:
            vouch(self.home, [(os.path.join(*k), digest(e.data)) for k, e in items if e.kind == "file"])
        except OSError:
            log.warning("could not record vouched context files", exc_info=True)

    def finish(self) -> list[str]:
        """Session end (its processes are gone): put back what changed since the last look, vouch for the
        accepted files, close the ledger window."""
        with self.lock:
            if self.base is None:
                return []
            found = self.settle(True)
            lines = self.decide(found, "a process of this session", None, None) if found else []
            self._vouch(list(self.base.items()))
            from hermes_agent.paths import is_under
            from hermes_agent.terminal.sandbox.guard import new_repositories
            from hermes_agent.tools.ctxcommits import new_baselines, record, ref_stamp

            try:  # the repositories that appeared meanwhile (at any depth) start from nothing (rt12 a26)
                new = {gd: wt for gd, wt in new_repositories().items()  # where this session's commands write
                       if any(is_under(wt or gd, os.path.realpath(r)) for r in self.window_roots)
                       and os.path.lexists(os.path.join(gd, "HEAD"))}  # git takes no directory without one (d06)
                roots = {**self.refs, **new_baselines(new, self.refs, self.window_roots)}
                # a nested repository past the bound whose refs moved: judged as new, every tree by content
                roots.update({r: {} for r, stamp in self.over.items() if ref_stamp(r) != stamp and r not in roots})
                lines += record(self.home, roots) if roots else []
            except OSError:
                log.warning("could not look at this session's commits", exc_info=True)
            lines += _kept_lines(self.quarantine())
            if self.window is not None:
                from hermes_agent.memory.ctxledger import close_window

                try:
                    close_window(self.home, self.window)
                except OSError:
                    log.warning("could not close the confined window in the ledger", exc_info=True)
                self.window = None
            return lines


def _kept_lines(q: object) -> list[str]:
    """The session's end line naming where what was put back this session is kept (context files and the
    sandbox's repairs alike), and what was too large to keep."""
    from hermes_agent.termsafe import one_line

    kept, skipped = getattr(q, "kept", []), getattr(q, "skipped", [])
    lines = [f"{len(kept)} version(s) displaced by put-backs this session are kept in {one_line(q.dir)}"  # type: ignore[attr-defined]
             " (copy back what was yours)"] if kept else []
    if skipped:
        lines.append("too large to keep before being put back: " + ", ".join(one_line(p) for p in skipped[:5]))
    return lines


MAX_NESTED = 16  # nested repositories whose names are noted at the start (~18 ms each); past it: their ref files
# are stamped (no git process), and one whose refs moved is judged at the end as a repository made this session


def _nested(roots: list[str], within: list[str]) -> list[str]:
    """Work trees of the repositories nested in the workspace at the start (the guard's baseline scan, cached):
    their names are compared at the end like the top one's."""
    from hermes_agent.terminal.sandbox.views import nested_scan

    found = [os.path.dirname(dot) for root in roots for dot in nested_scan(root, within)[0]]
    return list(dict.fromkeys(found))


def _describe(key: Key, old: Entry, new: Entry) -> str:
    """`path: created|changed|removed (+N lines: first added line)` — what the person is asked about."""
    path = os.path.join(*key)
    if new.kind == "absent":
        return f"{path}: removed"
    if new.kind != "file":
        return f"{path}: replaced by a {new.kind} (not a plain file)"
    text = new.data.decode("utf-8", "replace")
    gone = set(old.data.decode("utf-8", "replace").splitlines()) if old.kind == "file" else set()
    added = [ln for ln in text.splitlines() if ln not in gone and ln.strip()]
    verb = "created" if old.kind == "absent" else "changed"
    first = added[0][:160] if added else ""
    return f"{path}: {verb} (+{len(added)} line(s){': ' + repr(first) if first else ''})"


def _undone_line(path: str, old: Entry, new: Entry, ok: bool, tool: str, refused: bool, saved: str = "") -> str:
    from hermes_agent.termsafe import one_line

    what = "put back" if ok else "COULD NOT BE PUT BACK, check it before the next session"
    why = "the user said no" if refused else "no one could be asked"
    verb = "created" if old.kind == "absent" else "removed" if new.kind == "absent" else "changed"
    kept = (f"; the version it replaced is kept as {one_line(saved)} (if that was your own edit, made while "
            "the command ran, copy it back from there)") if saved else ""
    return f"{one_line(path)} was {verb} by {tool}: {what} ({why}){kept}"


HOW = ("Context files are loaded as instructions by every later session, so a change made by commands, code or "
       "tool servers is kept only with the user's yes. To make it, write the file with write_file or patch, or "
       "ask the user to re-run this interactively and approve it.")


# -- the glue dispatch and bootstrap use ------------------------------------------------------------

def watch_for(ctx: object) -> Watch:
    """The session's watch (made on first use): the workspace roots of its path policy, cwd and
    terminal.cwd walked; where the next prompt loads from (cwd up to the git root) looked at too."""
    with _MAKE_LOCK:
        watch = getattr(ctx, "ctx_watch", None)
        if isinstance(watch, Watch):
            return watch
        settings = ctx.settings  # type: ignore[attr-defined]
        policy = getattr(ctx, "path_policy", None)
        if policy is None:
            from hermes_agent.approval.policy import policy_for_settings

            policy = policy_for_settings(settings)
        cwds = [os.getcwd()]
        configured = str(getattr(settings.cfg.terminal, "cwd", "") or "")
        if configured not in ("", "."):
            cwds.append(os.path.expanduser(configured))
        roots = list(dict.fromkeys(os.path.realpath(p) for p in (*policy.workspace, *cwds)))
        off = str(getattr(settings.cfg.sandbox, "mode", "")) == "off"
        writable = ["/"] if off else list(dict.fromkeys((*policy.workspace, *policy.writable)))
        watch = Watch(roots, ctxguard.watched_dirs(cwds), str(settings.home), writable)
        ctx.ctx_watch = watch  # type: ignore[attr-defined]
        return watch


_MAKE_LOCK = threading.Lock()


def _others_may_run(ctx: object) -> bool:
    """Could confined code have run since the last look although no call was running: a background process
    was started in this process, or an MCP server serves this session (it runs all along)?"""
    from hermes_agent.terminal.processes import get_manager
    from hermes_agent.tools.registry import registry

    if get_manager().list():
        return True
    offered = getattr(ctx, "offered", ()) or ()
    return any(getattr(registry.get(n), "approval", "") == "external" for n in offered)


def before_call(ctx: object, session_id: str | None) -> list[str]:
    """Before a confined call: the first baseline, or what changed since the last look (confined work's when
    something could have run, else the user's)."""
    watch = watch_for(ctx)
    _listen(ctx, watch)
    with watch.lock:
        lines: list[str] = []
        if watch.base is None:
            watch.start()
        else:
            confined = watch.active > 0 or _others_may_run(ctx)
            found = watch.settle(confined)
            if found:
                lines = watch.decide(found, "a background process or server of this session",
                                     getattr(ctx, "approve_context", None), session_id)
        watch.active += 1
        return lines


def after_call(ctx: object, tool: str, session_id: str | None) -> list[str]:
    """After a confined call: every change since the baseline is this call's (or a process it left)."""
    watch = watch_for(ctx)
    with watch.lock:
        watch.active = max(0, watch.active - 1)
        found = watch.settle(True)
        lines = watch.decide(found, tool, getattr(ctx, "approve_context", None), session_id) if found else []
        lines, watch.held = watch.held + lines, []
        return lines


def after_write(ctx: object, paths: list[str]) -> None:
    """After a file tool's write (through the approval gate): the written context files join the baseline."""
    watch = getattr(ctx, "ctx_watch", None)
    if not isinstance(watch, Watch):
        return
    policy = getattr(ctx, "path_policy", None)  # relative paths are the workspace's (as the file tools take them)
    base_dir = policy.workspace[0] if policy is not None and policy.workspace else os.getcwd()
    wanted = {os.path.realpath(os.path.join(base_dir, os.path.expanduser(p))) for p in paths}
    with watch.lock:
        if watch.base is None:
            return
        now = watch._look()
        mine = [(k, n) for k, _o, n in watch._found(now) if os.path.realpath(os.path.join(*k)) in wanted]
        for key, new in mine:
            if new.kind == "absent":
                watch.base.pop(key, None)
            else:
                watch.base[key] = new
        watch._vouch(mine)


def finish(ctx: object) -> None:
    """Session end: the last check (nobody asked), vouch and close the window; the user is told."""
    watch = getattr(ctx, "ctx_watch", None)
    if not isinstance(watch, Watch):
        return
    if watch._listening is not None:
        from hermes_agent.terminal.processes import get_manager

        with contextlib.suppress(ValueError):
            get_manager().exit_listeners.remove(watch._listening)
    for line in watch.finish():
        log.warning("%s", line)
        notice = getattr(ctx, "notice", None)
        if callable(notice):
            notice(line)


def _listen(ctx: object, watch: Watch) -> None:
    """Once: when a background process ends, look again (nobody is asked: its lines go to the user now and
    to the model with the next confined call's result)."""
    if watch._listening:
        return
    from hermes_agent.terminal.processes import get_manager

    def ended(_proc: object) -> None:
        with watch.lock:
            if watch.base is None:
                return
            found = watch.settle(True)
            lines = watch.decide(found, "a background process", None, None) if found else []
            watch.held += lines
        for line in lines:
            log.warning("%s", line)
            notice = getattr(ctx, "notice", None)
            if callable(notice):
                notice(line)

    get_manager().exit_listeners.append(ended)
    watch._listening = ended
