"""`hermes sessions list|show|search|export|rename|delete|prune|stats`: browse and manage state.db."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from hermes_agent import lazyre, paths
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.storage import SessionInfo, SessionStore, Stats

_AGE = lazyre.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw]?)$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "": 86400}


def _limit(text: str) -> int:
    """argparse type: a row count 0-100000 (a huge one is a usage error, not SQLite's overflow)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}") from None
    if not 0 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"{value} is out of range 0-100000")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes sessions ...`."""
    p = subparsers.add_parser("sessions", help="List, search, export and prune saved sessions")
    sub = p.add_subparsers(dest="sessions_command", metavar="ACTION")
    ls = sub.add_parser("list", help="Recent sessions, newest first")
    ls.add_argument("--source", help="Only sessions from this source (cli, telegram, cron, ...)")
    ls.add_argument("--limit", type=_limit, default=20)
    show = sub.add_parser("show", help="Print a whole session")
    show.add_argument("id", help="Session id or a unique prefix")
    show.add_argument("--full", action="store_true", help="Do not shorten tool output")
    find = sub.add_parser("search", help="Full-text search over all messages")
    find.add_argument("query", nargs="+")
    find.add_argument("--source")
    find.add_argument("--limit", type=_limit, default=10)
    find.add_argument("--since", help="YYYY-MM-DD")
    find.add_argument("--until", help="YYYY-MM-DD (inclusive)")
    exp = sub.add_parser("export", help="Write sessions as JSON Lines or Markdown (Hermes's format)")
    exp.add_argument("target", nargs="?", metavar="OUTPUT",
                     help="jsonl: a file, or - for stdout; md: a directory (default <home>/session-exports). "
                          "A session id here (hermes-agent's older form) exports that one in our format")
    exp.add_argument("--format", choices=("jsonl", "md"), default="jsonl")
    exp.add_argument("--session-id", help="Only this session (id or unique prefix)")
    exp.add_argument("--source", help="Only sessions from this source (cli, telegram, cron, ...)")
    exp.add_argument("--older-than", metavar="AGE", help="Only sessions idle for longer than AGE (30d, 12h)")
    exp.add_argument("--newer-than", metavar="AGE", help="Only sessions active within AGE")
    exp.add_argument("--style", choices=("hermes", "ours"), default=None,
                     help="hermes (default): Hermes's records; ours: a session line then one line per message")
    exp.add_argument("-o", "--output", help="File to write (with the older form; default: stdout)")
    ren = sub.add_parser("rename", help="Set a session's title")
    ren.add_argument("id")
    ren.add_argument("title", nargs="+")
    rm = sub.add_parser("delete", help="Delete a session and its messages")
    rm.add_argument("id")
    rm.add_argument("--yes", "-y", action="store_true", help="Do not ask for confirmation")
    prune = sub.add_parser("prune", help="Delete sessions idle for longer than an age (default: apply the "
                                         "sessions.retention_days / max_db_mb policy)")
    prune.add_argument("--older-than", help="Age such as 30d, 12h, 2w")
    prune.add_argument("--yes", "-y", action="store_true", help="Do not ask for confirmation")
    sub.add_parser("optimize-storage", help="Finish a pending search-index rebuild now (otherwise it runs in the "
                                            "background), then rewrite state.db compactly (VACUUM)")
    st = sub.add_parser("stats", help="Token usage, cost and database size (one session with ID)")
    st.add_argument("id", nargs="?")


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run one `hermes sessions` action; problems become one line on stderr and exit code 1."""
    action = getattr(args, "sessions_command", None)
    if action is None:  # bare `hermes sessions` lists
        action, args = "list", argparse.Namespace(limit=20, source=None)
    handler = _ACTIONS[action]
    try:
        with SessionStore() as store:
            if store.read_only and action not in _WRITES:
                print(f"hermes sessions: note: {store.read_only}", file=sys.stderr)
            if action == "prune" and not args.older_than:
                return _prune_policy(args, store, settings)
            return handler(args, store)
    except HermesError as exc:
        print(f"hermes sessions {action}: {exc}", file=sys.stderr)
        return 1


_WRITES = ("rename", "delete", "prune", "optimize-storage")


def parse_age(text: str) -> float:
    """Seconds in an age like '30d', '12h', '2w', '90m', '45s' (a bare number means days)."""
    m = _AGE.match(text.strip().lower())
    if not m:
        raise HermesError(f"invalid age {text!r}: use a number with s, m, h, d or w (e.g. 30d)")
    return float(m.group(1)) * _AGE_UNITS[m.group(2)]


def _day(text: str | None, end: bool = False) -> float | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise HermesError(f"invalid date {text!r}: use YYYY-MM-DD") from None
    return (moment + timedelta(days=1 if end and len(text) <= 10 else 0)).timestamp()


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "-"


def _short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise HermesError("needs confirmation: re-run with --yes")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _print(*parts: object, **kw: object) -> None:
    """print() of stored conversation text (titles, messages, tool calls): terminal controls the model
    wrote are shown as text, never sent to the user's terminal (termsafe)."""
    from hermes_agent.termsafe import visible

    print(*(visible(str(p)) for p in parts), **kw)  # type: ignore[call-overload]


def _list(args: argparse.Namespace, store: SessionStore) -> int:
    rows = store.list_sessions(args.limit * 3 if not args.source else args.limit, args.source)
    if not args.source:  # subagent runs clutter the list (`--source subagent` shows them); a conversation that
        # compression continued is listed once, by its live continuation (resuming the earlier id lands there too)
        rows = [r for r in rows if r.source != "subagent" and r.end_reason != "compression"][: args.limit]
    if not rows:
        _print("No sessions yet." if not args.source else f"No sessions from {args.source}.")
        return 0
    previews = store.previews(s.id for s in rows if not s.title)  # untitled: the first thing asked, in quotes
    _print(f"{'ID':<22}  {'LAST ACTIVE':<16}  {'SOURCE':<9}  {'MSGS':>5}  TITLE")
    for s in rows:
        title = s.title or (f'"{previews[s.id]}"' if previews.get(s.id) else None)
        _print(f"{s.id:<22}  {_when(s.last_active_at):<16}  {s.source:<9}  {s.message_count:>5}  "
              f"{_short(title, 60)}")
    return 0


def _header(info: SessionInfo) -> list[str]:
    lines = [f"Session {info.id}  ({info.source}{', ' + info.model if info.model else ''})",
             f"Title:    {info.title or '-'}",
             f"Started:  {_when(info.started_at)}   Last active: {_when(info.last_active_at)}"
             + (f"   Ended: {_when(info.ended_at)} ({info.end_reason})" if info.ended_at else ""),
             f"Messages: {info.message_count}   Tool calls: {info.tool_call_count}   "
             f"Tokens: {info.input_tokens:,} in / {info.output_tokens:,} out   Cost: {_cost(info.estimated_cost_usd)}"]
    if info.parent_session_id:
        lines.append(f"Continues: {info.parent_session_id}")
    return lines


def _show(args: argparse.Namespace, store: SessionStore) -> int:
    info = store.require_session(args.id)
    _print("\n".join(_header(info)))
    for rec in store.get_records(info.id):
        m = rec.message
        label = f"tool {m.name}" if m.role == "tool" and m.name else m.role
        _print(f"\n── {label} · {_when(rec.timestamp)} · #{rec.id}")
        if m.reasoning:
            _print(f"(reasoning) {_short(m.reasoning, 400) if not args.full else m.reasoning}")
        if m.content:
            shorten = m.role == "tool" and not args.full and len(m.content) > 800
            _print(m.content[:800] + f"\n… [{len(m.content) - 800} more chars; --full shows all]"
                  if shorten else m.content)
        for tc in m.tool_calls:
            _print(f"→ {tc.name}({tc.arguments if args.full else _short(tc.arguments, 300)})")
    return 0


def _search(args: argparse.Namespace, store: SessionStore) -> int:
    query = " ".join(args.query)
    hits = store.search(query, source=args.source, since=_day(args.since), until=_day(args.until, end=True),
                        limit=args.limit)
    if not hits:
        _print(f"No sessions match {query!r}.")
    for hit in hits:
        s = hit.session
        _print(f"{s.id}  {_when(s.last_active_at)}  {s.source}  {_short(s.title, 60)}")
        for snip in hit.snippets:
            _print(f"    #{snip.message_id} {snip.role}: {snip.text}")
    if missed := store.search_unscanned():
        _print(f"Note: {missed:,} older messages are still being indexed in the background and were not searched "
               "(`hermes sessions optimize-storage` finishes the index now).")
    return 0


def _export(args: argparse.Namespace, store: SessionStore) -> int:
    target = args.target
    legacy = (not args.session_id and target not in (None, "-") and not Path(target).exists()
              and store.get_session(target) is not None)
    if legacy:
        return _write(store.export(target, args.format), args.output)
    ids = _export_ids(args, store)
    if args.format == "md":
        return _export_md(store, ids, Path(target or args.output or paths.hermes_home() / "session-exports"))
    out = args.output or target
    if not out:
        raise HermesError("jsonl needs OUTPUT: a file path, or - for stdout")
    if args.style == "ours":
        text = "".join(store.export(i, "jsonl") for i in ids)
    else:
        text = "".join(json.dumps(store.export_rows(i), ensure_ascii=False, default=str) + "\n" for i in ids)
    return _write(text, None if out == "-" else out, f"{len(ids)} session(s)")


def _export_ids(args: argparse.Namespace, store: SessionStore) -> list[str]:
    if args.session_id:
        return [store.require_session(args.session_id).id]
    now = datetime.now().timestamp()
    older = now - parse_age(args.older_than) if args.older_than else None
    newer = now - parse_age(args.newer_than) if args.newer_than else None
    infos = store.list_sessions(limit=store.count_sessions(args.source), source=args.source,
                                include_archived=True)  # as Hermes: an export includes archived sessions
    return [s.id for s in reversed(infos) if (older is None or s.last_active_at < older)
            and (newer is None or s.last_active_at >= newer)]


def _export_md(store: SessionStore, ids: list[str], folder: Path) -> int:
    """Hermes's Markdown export: one `<id>-session.md` per session and a manifest.jsonl line for each."""
    from hermes_agent.nofollow import append_nofollow, write_text_nofollow

    try:  # may be the current directory, which a sandboxed command could have filled with symlinks
        folder.mkdir(parents=True, exist_ok=True)
        for sid in ids:
            text = store.export(sid, "hermes-md")
            path = folder / f"{sid}-session.md"
            write_text_nofollow(path, text)
            append_nofollow(folder / "manifest.jsonl", json.dumps({
                "exported_at": datetime.now().timestamp(), "format": "md", "path": str(path), "session_id": sid,
                "sha256": hashlib.sha256(text.encode()).hexdigest()}) + "\n")
    except OSError as exc:
        raise HermesError(f"cannot write to {folder}: {exc.strerror or exc}") from exc
    print(f"Exported {len(ids)} session(s) to {folder}")
    return 0


def _write(text: str, output: str | None, what: str = "") -> int:
    if not output:
        sys.stdout.write(text)
        return 0
    try:
        from hermes_agent.nofollow import write_text_nofollow

        write_text_nofollow(output, text)  # no symlink followed (the current directory is the sandbox's)
    except OSError as exc:
        raise HermesError(f"cannot write {output}: {exc.strerror or exc}") from exc
    print(f"Wrote {what + ' to ' if what else ''}{output} ({len(text.encode()):,} bytes).")
    return 0


def _rename(args: argparse.Namespace, store: SessionStore) -> int:
    info = store.require_session(args.id)
    store.set_title(info.id, " ".join(args.title))
    print(f"Renamed {info.id}.")
    return 0


def _delete(args: argparse.Namespace, store: SessionStore) -> int:
    info = store.require_session(args.id)
    if not _confirm(f"Delete session {info.id} ({_short(info.title, 40) or 'untitled'}, "
                    f"{info.message_count} messages)?", args.yes):
        print("Kept.")
        return 0
    n = store.delete_session(info.id)
    print(f"Deleted session {info.id} ({n} messages).")
    return 0


def _prune(args: argparse.Namespace, store: SessionStore) -> int:
    age = parse_age(args.older_than)
    sessions, messages = store.count_prunable(age)
    if not sessions:
        print(f"No sessions idle for more than {args.older_than}.")
        return 0
    if not _confirm(f"Delete {sessions} sessions ({messages} messages) idle for more than {args.older_than}?",
                    args.yes):
        print("Kept.")
        return 0
    removed, removed_msgs = store.prune(age)
    print(f"Deleted {removed} sessions ({removed_msgs} messages).")
    return 0


def _prune_policy(args: argparse.Namespace, store: SessionStore, settings: Settings) -> int:
    from hermes_agent.bootstrap.session import retention_policy

    policy = retention_policy(settings)
    if not _confirm(f"Delete ended sessions idle for more than {policy.retention_days:g} days, then the oldest "
                    f"while the data exceeds {policy.max_db_bytes / 1e6:.0f} MB?", args.yes):
        print("Kept.")
        return 0
    r = store.prune_by_policy(policy)
    shrunk = f"; {r.shrunk} old tool outputs shrunk" if r.shrunk else ""
    print(f"Deleted {r.sessions} sessions ({r.messages} messages){shrunk}; state.db {r.bytes_before / 1e6:.1f} MB -> "
          f"{r.bytes_after / 1e6:.1f} MB in {r.seconds:.1f}s.")
    return 0


def _optimize(args: argparse.Namespace, store: SessionStore) -> int:
    from hermes_agent.storage.retention import file_bytes

    before = file_bytes(store.path)
    pending = store.search_index_pending()
    start = time.monotonic()
    while pending is not None:
        print(f"Search index: {pending[0]:,} of {pending[1]:,} messages indexed" if pending[0] < pending[1]
              else "Search index: all messages indexed; dropping the old index", flush=True)
        if store.rebuild_search_index(budget_s=5.0):
            break
        pending = store.search_index_pending()
    store.vacuum(full=True)
    print(f"Search index up to date, file rewritten compactly; state.db {before / 1e6:.1f} MB -> {file_bytes(store.path) / 1e6:.1f} MB "
          f"in {time.monotonic() - start:.1f}s.")
    return 0


def _stats_lines(st: Stats) -> list[str]:
    lines = [f"Sessions: {st.sessions:,}   Messages: {st.messages:,}   Tool calls: {st.tool_calls:,}",
             f"Tokens:   {st.input_tokens:,} in / {st.output_tokens:,} out   "
             f"(cache read {st.cache_read_tokens:,}, cache write {st.cache_write_tokens:,})",
             f"Cost:     {_cost(st.cost_usd)} (estimated from list prices)",
             f"Period:   {_when(st.first_at)} .. {_when(st.last_at)}",
             f"Database: {st.db_bytes / 1e6:.1f} MB"]
    if st.by_source:
        lines.append("By source: " + ", ".join(f"{src} {n} ({m} msgs)" for src, n, m in st.by_source))
    for model, n, tin, tout, cost in st.by_model:
        lines.append(f"  {model:<40} {n:>5} sessions  {tin:>12,} in  {tout:>10,} out  {_cost(cost)}")
    return lines


def _stats(args: argparse.Namespace, store: SessionStore) -> int:
    if args.id:
        print("\n".join(_header(store.require_session(args.id))))
        return 0
    print("\n".join(_stats_lines(store.stats())))
    kinds = store.size_by_kind()
    print("Size by kind: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in kinds.items()))
    pending = store.search_index_pending()
    if pending is not None:
        print(f"Search index: being rebuilt in the background ({pending[0]:,} of {pending[1]:,} older messages "
              "indexed); `hermes sessions optimize-storage` finishes it now")
    return 0


_ACTIONS = {"list": _list, "show": _show, "search": _search, "export": _export, "rename": _rename,
            "delete": _delete, "prune": _prune, "stats": _stats, "optimize-storage": _optimize}
