"""Provenance that travels with the data (issue 19, red-team rt7 a05: a page fetched in a tainted session and
saved to notes.html, read back by a fresh session and saved to memory unasked). The writing side records, the
reading side is tainted (ledger: memory/taintledger.py):

- a tainted conversation opens a window over what its confined code can write (from the call before the taint
  was seen, since the network counters are read "since the last look", to the session's end), marks the files
  its file tools write, and marks its session in the ledger;
- a later read taints the reader: read_file of a file whose inode changed inside such a window or that carries
  a mark, a command or script whose text names one (`cat notes.html`, `cp notes.html x`, a glob), a
  session_search that returns messages of a marked session.

A command that finds the file without naming it (`find -exec`, a script building the name) is seen by its
reads (tools/readwatch.py). Not seen: a file whose content was written again later by someone else (its mtime
moves: the later writer vouches for it; a chmod or chown alone does not: taintledger.source_in)."""

from __future__ import annotations

import glob
import json
import logging
import os
import stat
import time

from hermes_agent import lazyre

log = logging.getLogger(__name__)

MAX_TOKENS, MAX_GLOB = 200, 200
_TOKENS = lazyre.compile(r"\"([^\"\n]{1,4096})\"|'([^'\n]{1,4096})'|([^\s;|&<>()'\"`$]{1,4096})")


def _home(ctx: object) -> str:
    return str(ctx.settings.home)  # type: ignore[attr-defined]


def window_roots(ctx: object) -> list[str]:
    """Where this session's confined code can write: the workspace and writable paths of its policy; "/" when
    the sandbox is off."""
    settings = ctx.settings  # type: ignore[attr-defined]
    if str(getattr(settings.cfg.sandbox, "mode", "")) == "off":
        return ["/"]
    policy = getattr(ctx, "path_policy", None)
    if policy is None:
        from hermes_agent.approval.policy import policy_for_settings

        policy = policy_for_settings(settings)
    return list(dict.fromkeys((*policy.workspace, *policy.writable, os.getcwd())))


def after_call(ctx: object, confined: bool, since_ns: int) -> None:
    """After a tool call: a tainted conversation has its window and its session marked (once each); a confined
    call keeps the window's sign of life fresh (a crash ends it there)."""
    source = getattr(ctx, "untrusted", "")
    if not source:
        return
    from hermes_agent.memory import taintledger

    home = _home(ctx)
    try:
        if ctx.taint_window is None:  # type: ignore[attr-defined]
            ctx.taint_window = taintledger.open_window(home, window_roots(ctx), source, since_ns)  # type: ignore[attr-defined]
            ctx.taint_touched = time.time_ns()  # type: ignore[attr-defined]
        elif confined and time.time_ns() - ctx.taint_touched > taintledger.SLACK_NS // 2:  # type: ignore[attr-defined]
            taintledger.touch_window(home, ctx.taint_window)  # type: ignore[attr-defined]
            ctx.taint_touched = time.time_ns()  # type: ignore[attr-defined]
        _mark_session(ctx, home, source, since_ns / 1e9)
    except OSError:
        log.warning("could not record the taint of this session in the ledger", exc_info=True)


def mark_session(ctx: object, since: float | None = None) -> None:
    """A tainted conversation's session is marked in the ledger as soon as both are known (the taint, the session
    id: at the taint, at the session's first row, at a compressed continuation, `since` 0: all its messages),
    not only at a tool call or the session's end, which a killed server or gateway never reaches (red-team b14)."""
    source = getattr(ctx, "untrusted", "")
    if not source or not getattr(ctx, "session_id", None) or getattr(ctx, "settings", None) is None:
        return
    try:
        _mark_session(ctx, _home(ctx), source, time.time() if since is None else since)
    except OSError:
        log.warning("could not record the taint of this session in the ledger", exc_info=True)


def _mark_session(ctx: object, home: str, source: str, since: float) -> None:
    sid = getattr(ctx, "session_id", None)
    if sid and ctx.taint_session != sid:  # type: ignore[attr-defined]
        from hermes_agent.memory import taintledger

        taintledger.mark_session(home, sid, source, since)
        ctx.taint_session = sid  # type: ignore[attr-defined]


def on_write(ctx: object, paths: list[str]) -> None:
    """hermes's file tools wrote `paths` (relative: the workspace's) in this conversation."""
    source = getattr(ctx, "untrusted", "")
    if not source or not paths:
        return
    from hermes_agent.memory import taintledger

    base = _base_dir(ctx)
    try:
        taintledger.mark_files(_home(ctx), [os.path.join(base, os.path.expanduser(p)) for p in paths], source)
    except OSError:
        log.warning("could not mark the files written in a tainted conversation", exc_info=True)


def _base_dir(ctx: object) -> str:
    policy = getattr(ctx, "path_policy", None)
    return policy.workspace[0] if policy is not None and policy.workspace else os.getcwd()


def on_read(ctx: object, paths: list[str], how: str = "read by") -> bool:
    """Taint the conversation when one of `paths` (absolute) holds content a tainted session wrote."""
    if getattr(ctx, "untrusted", "") or not paths:
        return False
    from hermes_agent.memory import taintledger

    home = _home(ctx)
    if not taintledger.any_files(home):
        return False
    for path in paths[:MAX_GLOB]:
        source = _link_source(home, path)  # a symlink a tainted session made: its target is its text (a34)
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            st = None
        source = source or (taintledger.file_source(home, path, st) if st is not None else "")
        if source:
            ctx.taint(f"{path}, {how} this conversation, written by a session after it took in {source}")  # type: ignore[attr-defined]
            return True
    return False


def _link_source(home: str, path: str) -> str:
    """Why the symlink at `path` (itself, not its target) carries a tainted session's text ("" if not one)."""
    from hermes_agent.memory import taintledger

    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return ""
    if not stat.S_ISLNK(st.st_mode):
        return ""
    own = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return taintledger.source_in(taintledger.ledger_data(home), own, st)


def command_reads(ctx: object, text: object, cwd: str | None) -> bool:
    """Taint the conversation when a command's or script's text names a file a tainted session wrote (words
    and quoted strings as paths against `cwd`, globs expanded)."""
    if not isinstance(text, str) or getattr(ctx, "untrusted", "") or not text.strip():
        return False
    from hermes_agent.memory import taintledger

    if not taintledger.any_files(_home(ctx)):
        return False
    base = cwd or _base_dir(ctx)
    paths: list[str] = []
    for n, m in enumerate(_TOKENS.finditer(text)):
        if n >= MAX_TOKENS or len(paths) >= MAX_GLOB:
            break
        word = next(g for g in m.groups() if g is not None).split("=", 1)[-1]
        if not word or word.startswith("-") or "\x00" in word:
            continue
        path = os.path.join(base, os.path.expanduser(word))
        if any(c in word for c in "*?["):
            paths += glob.glob(path)[:MAX_GLOB]
        else:
            paths.append(path)
    return on_read(ctx, paths, "named by a command of")


def session_hits(ctx: object, result: str) -> None:
    """A session_search result that shows messages of a session which had taken in untrusted content (from its
    taint on) taints this conversation."""
    if getattr(ctx, "untrusted", "") or '"session_id"' not in result:
        return
    try:
        data = json.loads(result)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    sids = [data.get("session_id")] if data.get("mode") == "read" else \
        [r.get("session_id") for r in data.get("results") or () if isinstance(r, dict) and r.get("hits")]
    from hermes_agent.memory import taintledger

    home = _home(ctx)
    for sid in sids:
        row = taintledger.session_source(home, sid) if isinstance(sid, str) else None
        if row is not None:
            ctx.taint(f"session_search (messages of session {sid}, which had taken in {row[1]})")  # type: ignore[attr-defined]
            return


def finish(ctx: object) -> None:
    """Session end: the window closes (its processes are gone) and what its confined code wrote with forged times
    is recorded (taintledger.sweep); a session tainted without a tool call (an untrusted person's messages) is
    marked."""
    from hermes_agent.memory import taintledger

    home = _home(ctx)
    try:
        if ctx.taint_window is not None:  # type: ignore[attr-defined]
            taintledger.touch_window(home, ctx.taint_window, end=True)  # type: ignore[attr-defined]
            roots = window_roots(ctx)  # forged file times outlive a later chmod (taintledger: taint_inodes)
            taintledger.sweep(home, [_base_dir(ctx)] if "/" in roots else roots, ctx.taint_window)  # type: ignore[attr-defined]
            ctx.taint_window = None  # type: ignore[attr-defined]
        if getattr(ctx, "untrusted", ""):
            _mark_session(ctx, home, ctx.untrusted, time.time())  # type: ignore[attr-defined]
    except OSError:
        log.warning("could not close the taint window in the ledger", exc_info=True)
