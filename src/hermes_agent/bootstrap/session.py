"""Binds an agent to the session store: every message written as it happens, usage and cost per call,
resume, lineage on compression, and the agent's session_search."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings
from hermes_agent.core.agent import AgentServices
from hermes_agent.core.compression import CompressionResult
from hermes_agent.errors import StorageError
from hermes_agent.lazylog import get_logger
from hermes_agent.messages import Message, system, tool_result
from hermes_agent.storage.pricing import estimate_cost
from hermes_agent.tools.results import tool_error

from .provider import own_prices

if TYPE_CHECKING:  # the store's modules (sqlite3 with them) load where a store is opened, not at import
    from hermes_agent.storage.retention import Retention
    from hermes_agent.storage.store import SessionStore
    from hermes_agent.storage.usage import Booking

INTERRUPTED = tool_error("interrupted: hermes stopped before this tool call finished; its result is unknown "
                         "(check its effects before relying on it)")

_STORES: dict[str, SessionStore] = {}
_STORES_LOCK = threading.Lock()
_REBUILDING: set[str] = set()
_REBUILD_LOCK = threading.Lock()
_REBUILD_DELAY_S = 5.0
_PRUNERS: dict[str, threading.Thread] = {}  # store path -> its waiting or running auto-prune thread
log = get_logger(__name__)


def shared_store(auto_title: bool = True) -> SessionStore:
    """One SessionStore per database path per process (gateway threads share it)."""
    from hermes_agent import paths
    from hermes_agent.storage.store import SessionStore

    key = str(paths.state_db_path())
    with _STORES_LOCK:  # a store may open on a binding's own thread (SessionBinding.open_soon)
        if key not in _STORES:
            _STORES[key] = SessionStore(auto_title=auto_title)
        return _STORES[key]


def store_is_open() -> bool:
    """Whether this process already has the store of the current state.db (then opening it costs nothing)."""
    from hermes_agent import paths

    return str(paths.state_db_path()) in _STORES


def retention_policy(settings: Settings) -> Retention:
    """The `sessions:` settings as the store's retention policy."""
    from hermes_agent.storage.retention import Retention

    c = settings.cfg.sessions
    return Retention(tool_output_chars=c.tool_output_max_chars, keep_full=c.keep_full_tool_output,
                     full_dir=settings.home / "sessions" / "tool_outputs", retention_days=c.retention_days,
                     max_db_bytes=c.max_db_mb * 1024 * 1024, vacuum_after_prune=c.vacuum_after_prune,
                     shrink_after_days=c.old_tool_output_days, old_output_chars=c.old_tool_output_max_chars)


def recover_unsaved(store: SessionStore) -> int:
    """Messages a full disk kept out of state.db (`unsaved-<id>.jsonl` beside it, Session._spill) go back into
    their sessions, in order, at the next start that can write them; each file goes once its messages are in.
    Returns how many messages were put back."""
    import json

    from hermes_agent.storage.store import DiskFull

    if store.read_only:
        return 0
    try:
        names = sorted(n for n in os.listdir(store.path.parent) if n.startswith("unsaved-") and n.endswith(".jsonl"))
    except OSError:
        return 0
    done = 0
    for name in names:
        path = store.path.parent / name
        try:
            kept: dict[str, list[Message]] = {}
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    kept.setdefault(str(row.pop("session_id")), []).append(Message.from_openai(row))
            for sid, messages in kept.items():
                if store.get_session(sid) is not None:
                    store.append_messages(sid, messages)
                    done += len(messages)
            path.unlink()
        except (OSError, ValueError, KeyError, TypeError, AttributeError, DiskFull) as exc:
            log.warning("%s was not put back into its session yet: %s", path, exc)
    return done


def apply_retention(store: SessionStore, settings: Settings,
                    stop: threading.Event | None = None) -> threading.Thread | None:
    """Cap what the store keeps; with sessions.auto_prune, prune on a thread of its own (its own connection,
    short transactions) at most every min_interval_hours, so start-up never waits for it."""
    from hermes_agent.storage import retention
    from hermes_agent.storage.store import SessionStore

    policy = retention_policy(settings)
    store.retention = policy
    recover_unsaved(store)
    stop = stop or threading.Event()
    _rebuild_in_background(store, stop)
    delay = settings.cfg.sessions.auto_prune_delay  # a long-lived process (REPL, gateway) prunes after it;
    # a one-shot `chat -q` is normally over before then and leaves the prune to them (or `hermes sessions prune`)
    marker = settings.home / "sessions" / ".last_auto_prune"
    if not settings.cfg.sessions.auto_prune or store.read_only or not retention.due(
            marker, settings.cfg.sessions.min_interval_hours):
        return None
    running = _PRUNERS.get(str(store.path))
    if running is not None and running.is_alive():  # a gateway composes an agent per chat: one pruner per store
        return running

    def run() -> None:
        if delay and stop.wait(delay):
            return
        try:
            with SessionStore(store.path) as own:
                report = own.prune_by_policy(policy)
            retention.touch(marker)
            if report.sessions:
                log.info("auto-prune removed %d sessions (%d messages) in %.1fs", report.sessions,
                         report.messages, report.seconds)
        except (StorageError, OSError) as exc:
            log.warning("auto-prune of %s failed: %s", store.path, exc)

    worker = threading.Thread(target=run, name="sessions-auto-prune", daemon=True)
    _PRUNERS[str(store.path)] = worker
    worker.start()
    return worker


def _rebuild_in_background(store: SessionStore, stop: threading.Event) -> threading.Thread | None:
    """A search-index rebuild left by a migration goes on in chunks on a thread with its own connection (any
    process may carry it forward; a one-shot `chat -q` that exits mid-chunk loses only that chunk)."""
    key = str(store.path)
    with _REBUILD_LOCK:  # one rebuilder per file per process (a gateway wires a session per chat)
        if key in _REBUILDING or store.read_only or store.search_index_pending() is None:
            return None
        _REBUILDING.add(key)

    def run() -> None:
        from hermes_agent.storage.store import SessionStore

        try:
            if stop.wait(_REBUILD_DELAY_S):  # a quick `chat -q` starts and ends without it
                return
            with SessionStore(store.path) as own:
                if own.rebuild_search_index(stop):
                    log.info("search index rebuilt (%s)", store.path)
        except (StorageError, OSError) as exc:
            log.warning("search index rebuild of %s paused: %s", store.path, exc)
        finally:
            with _REBUILD_LOCK:
                _REBUILDING.discard(key)

    worker = threading.Thread(target=run, name="sessions-index-rebuild", daemon=True)
    worker.start()
    return worker


def bind_session(store: SessionStore | None, services: AgentServices, source: str, *,
                 parent_id: str | None = None, opener: Callable[[], SessionStore] | None = None) -> SessionBinding:
    """A SessionBinding wired into `services`: persist, the agent's session_search, `services.session`.
    `opener` instead of a store: the store opens once the first model request is on its way (open_soon)."""
    binding = SessionBinding(store, services, source, parent_id=parent_id, opener=opener)
    services.persist = binding.persist
    services.persist_many = binding.persist_many
    services.session = binding
    services.ctx.session_search = binding.search
    services.closers.append(binding.close)
    return binding


class SessionBinding:
    """The current session of one agent; created lazily on the first message so an idle REPL leaves no trace.

    Given an `opener` rather than a store (issue 24: opening state.db, its migrations check and retention were
    ~35 M instructions before `chat -q`'s first request), the system prompt and the user's message are held
    while the store opens on a thread of its own (the first request leaves meanwhile) and written, in order,
    with the model's reply, before any tool runs. A store that cannot be written gives one line and the turn
    goes on unsaved: the answer is still shown."""

    def __init__(self, store: SessionStore | None, services: AgentServices, source: str, *,
                 parent_id: str | None = None, opener: Callable[[], SessionStore] | None = None) -> None:
        self.services, self.source, self.parent_id = services, source, parent_id
        self._store, self._opener = store, opener
        self._opening: threading.Event | None = None  # set when open_soon's thread is done
        self._open_failed: str | None = None  # why the store could not be opened (the turn goes on unsaved)
        self._held: list[Message] = []  # said before the store opened: written first, in order
        self.id: str | None = None
        # The session this conversation began in: compression and /undo continue in child sessions, and a session
        # spending cap follows the conversation across them (bootstrap/budget.py books spend under this id).
        self.lineage: str | None = None
        self.keep_open = False  # a chat's session outlives the gateway process (Hermes's gateway prunes ended ones)
        self.titler: Callable[[str, str], str] | None = None  # opt-in LLM titles (sessions.title_mode: llm)
        self._titled: set[str] = set()
        self._title_thread: threading.Thread | None = None
        self._unsaved: list[tuple[str, Message, Booking | None]] = []  # kept back by a full disk, oldest first
        self._full_said = False
        self._prices: tuple[Settings | None, dict] = (None, {})

    @property
    def store(self) -> SessionStore:
        """The session store, opened now if it is not yet (waits for open_soon's thread)."""
        if self._store is None:
            self._wait_open()
        if self._store is None:
            raise StorageError(f"cannot save this conversation: {self._open_failed}")
        return self._store

    def open_soon(self) -> None:
        """Start opening the store on its own thread (nothing when it is open or opening)."""
        if self._store is None and self._opening is None and self._opener is not None:
            from hermes_agent import background

            self._opening = background.start(self._open)  # (threading.Thread.start waits for the thread to run)

    def _open(self) -> None:
        try:
            self._store = self._opener()  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - any failure to open is said once, by _wait_open
            self._open_failed = str(exc).removeprefix("cannot save this conversation: ") or type(exc).__name__

    def _wait_open(self) -> bool:
        """Wait for the store (opening it here if nothing started it); False, said once, when it cannot open."""
        if self._store is None and self._open_failed is None:
            if self._opening is None:
                self._open()
            else:
                self._opening.wait()
        if self._store is None and self._opener is not None:
            self._opener = None
            self._held.clear()
            said = f"cannot save this conversation: {self._open_failed} (the answer is shown, not kept)"
            log.info(said)  # the line itself is said whatever the run's quietness (-Q hides warnings)
            print(f"hermes: {said}", file=sys.stderr)
        return self._store is not None

    def _hold(self, message: Message) -> bool:
        """Hold what comes before the model's first reply while the store is not open (True: held)."""
        if self._store is not None or self._opener is None or message.role not in ("system", "user"):
            return False
        if self._open_failed is None:
            self._held.append(message)
            self.open_soon()
            return True
        return False

    def _release(self) -> bool:
        """The store is needed: wait for it and write what was held; False when it cannot be written."""
        if not self._wait_open():
            return False
        held, self._held = self._held, []
        for message in held:
            self._write(message)
        return True

    def _set_id(self, sid: str | None, since: float = 0.0) -> None:
        self.id = sid
        self.services.session_id = sid
        self.services.ctx.session_id = sid
        if sid and self.services.ctx.untrusted:  # a tainted conversation's new row (first message, continuation)
            from hermes_agent.tools import taintmark

            taintmark.mark_session(self.services.ctx, since=since)

    def start(self) -> str:
        """The session's id, creating its row now if no message has yet (frontends that name it first: ACP)."""
        if self.id is None:
            info = self.store.create_session(self.source, self.services.provider.model, cwd=os.getcwd(),
                                             parent_session_id=self.parent_id)
            self._set_id(info.id)
            self.lineage = info.id
            self.services.hooks.emit("on_session_start", session_id=info.id, platform=self.source)
        return self.id  # type: ignore[return-value]

    def persist(self, message: Message) -> None:
        """Write one message (the system prompt is kept on the session row); a reply and its usage and cost go in
        one transaction. On a full disk (state.db's reserve spent too) the message is kept in memory, in order,
        and written with the next one that fits; the turn goes on (red-team round 6 a06: a command filled the
        disk and the answer was lost)."""
        if self._hold(message) or not self._release():
            return
        self._write(message)

    def _write(self, message: Message) -> None:
        self.start()
        if message.role == "system":
            self.store.set_system_prompt(self.id, message.content)
            return
        self._add([message])
        if message.role == "assistant" and not message.tool_calls and self.titler and self.id not in self._titled:
            self._start_title(self.id, message.content or "")

    def persist_many(self, messages: list[Message]) -> None:
        """Write messages known together (one reply's tool results) in one transaction, after any kept back."""
        if self._release():
            self._add(messages)

    def _add(self, messages: list[Message]) -> None:
        sid = self.start()
        for message in messages:
            self._unsaved.append((sid, message, self._booking(message)))
        self._flush()

    def _booking(self, message: Message) -> Booking | None:
        if message.role != "assistant" or message.usage is None:
            return None
        from hermes_agent.storage.usage import Booking  # with the first reply: not at start-up

        model = self.services.provider.model  # a fallback chain's: the model that answered
        settings = self.services.settings
        if self._prices[0] is not settings:  # the user's own prices, read again when the settings change (/model)
            self._prices = (settings, own_prices(settings))
        return Booking(message.usage, estimate_cost(model, message.usage, self._prices[1]), model)

    def _flush(self) -> bool:
        """Write the messages kept back by a full disk and the new ones, each session's run of them in one
        transaction (True when none is left)."""
        from hermes_agent.storage.store import DiskFull  # (loaded with the store)

        while self._unsaved:
            run = _first_run(self._unsaved)
            sid = run[0][0]
            try:
                self.store.append_messages(sid, [m for _, m, _ in run], bookings=[b for _, _, b in run if b])
            except DiskFull as exc:
                if not self._full_said:
                    self._full_said = True
                    log.warning("%s: the conversation is kept in memory and saved when there is room", exc)
                return False
            del self._unsaved[:len(run)]
        return True

    def _spill(self) -> None:
        """At the end, what a full disk kept back goes to a file beside state.db if one fits, else to stderr:
        one line says where (the answer itself was already shown)."""
        import json
        import sys

        if self._flush():
            return
        lines = "".join(json.dumps({"session_id": sid, **m.to_openai()}, ensure_ascii=False) + "\n"
                        for sid, m, _ in self._unsaved)
        path = self.store.path.with_name(f"unsaved-{self._unsaved[0][0]}.jsonl")
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(lines)
            where = f"{path} (put back into the session by the next hermes that can write {self.store.path.name})"
        except OSError:
            sys.stderr.write(lines)
            where = "stderr above"
        print(f"hermes: the disk is full: {len(self._unsaved)} message(s) of session {self._unsaved[0][0]} "
              f"could not be saved in {self.store.path.name}; they are in {where}", file=sys.stderr)
        self._unsaved.clear()

    def _start_title(self, sid: str, answer: str) -> None:
        """Ask the auxiliary model for a short title once per session, off the turn's critical path."""
        self._titled.add(sid)
        first = next((m.content for m in self.store.get_messages(sid) if m.role == "user"), "") or ""
        titler = self.titler

        def work() -> None:
            try:
                title = " ".join((titler(first, answer) or "").split())[:80].strip(" .\"'")
            except Exception:  # a title is cosmetic: keep the first-message title
                log.info("title generation failed", exc_info=True)
                return
            if title:
                self.store.set_title(sid, title)

        self._title_thread = threading.Thread(target=work, name="hermes-title", daemon=True)
        self._title_thread.start()

    def resume(self, which: str, *, by_title: bool = False) -> list[Message]:
        """Restore a session by id/prefix, or the latest of this source for `which == "latest"`;
        `by_title` (`-c NAME`): the newest session titled NAME (or `NAME #n`) first, then an id."""
        info = self.store.session_by_title(which) if by_title else None
        if info is not None:
            pass
        elif which == "latest" and not by_title:
            info = self.store.latest_session(source=self.source, workspace=_workspace())
            if info is None:
                raise StorageError(f"no earlier {self.source} session to continue")
        elif by_title and self.store.get_session(which) is None:
            raise StorageError(f"no session found matching '{which}' (see: hermes sessions list)")
        else:
            info = self.store.require_session(which)
        tip = self.store.continuation_tip(info.id)  # a compressed session goes on in its continuation, as in Hermes
        if tip != info.id:
            info = self.store.require_session(tip)
        self.store.reopen_session(info.id)
        self._set_id(info.id, since=time.time())  # a taint this process holds covers what is said from now on
        self.lineage = self.store.conversation_root(info.id)
        self._taint_from_ledger([s.id for s in reversed(self.store.lineage(info.id))] or [info.id])
        history, tail = close_dangling_tool_calls(self.store.get_messages(info.id))
        if tail:  # a killed run left tool calls without results: every strict endpoint would refuse the history
            self.store.append_messages(info.id, tail)
        return ([system(info.system_prompt)] if info.system_prompt else []) + history

    def _taint_from_ledger(self, chain: list[str]) -> None:
        """A conversation that took in untrusted content at any door (an API request, an A2A sender, a gateway
        guest, a tool's result; recorded in the taint ledger, tools/taintmark.py) is still tainted when it goes
        on anywhere: --resume in the CLI, /resume, a gateway or ACP session rebuilt; `chain`: the session, then
        the ones it continued from (compression, branching), whose content its history carries."""
        from hermes_agent.memory import taintledger

        ctx = self.services.ctx
        for sid in chain:
            found = taintledger.session_source(ctx.settings.home, sid)
            if found is not None:
                ctx.taint(f"{found[1]} (earlier in this conversation, session {sid})")
                return

    def _branch(self, messages: list[Message], reason: str) -> None:
        """Continue in a child session holding `messages`; the parent keeps everything it had."""
        if self.id is None:
            return
        prompt = next((m.content for m in messages if m.role == "system"), None)
        child = self.store.create_session(self.source, self.services.provider.model, parent_session_id=self.id,
                                          cwd=os.getcwd(), system_prompt=prompt)
        self.store.append_messages(child.id, [m for m in messages if m.role != "system"])
        self.store.end_session(self.id, reason)
        self._set_id(child.id)

    def on_compressed(self, res: CompressionResult) -> None:
        if res.method != "none":
            self._branch(res.messages, "compression")

    def on_rewind(self, kept: list[Message]) -> None:
        """/undo and /retry: as in Hermes, the undone turn stays in the session, taken back (active = 0), so
        Hermes lists and resumes the conversation as it now is; a history the session's rows do not start with
        (not all of it saved here) goes on in a child session instead."""
        if self.id is not None and self.store.take_back(self.id, [m for m in kept if m.role != "system"]):
            return
        self._branch(kept, "rewound")

    def new_session(self) -> None:
        """End the current session; the next message starts another."""
        self.end("new_session")

    def close(self) -> None:
        """The agent is going away: end the session, unless it is a chat's that continues later."""
        if self._opening is not None:  # a store still opening (a REPL left at once) finishes its migrations first
            self._opening.wait()
        if not self.keep_open:
            self.end()
        else:
            if self._title_thread is not None:
                self._title_thread.join(timeout=15)
            if self._held and not self._release():
                return
            self._spill()

    def end(self, reason: str = "ended") -> None:
        if self._title_thread is not None:
            self._title_thread.join(timeout=15)
        if self._held and not self._release():
            return
        self._spill()
        if self.id is not None:
            from hermes_agent.storage.store import DiskFull

            try:
                self.store.end_session(self.id, reason)
            except DiskFull:
                log.warning("the disk is full: session %s was not marked ended", self.id)
            self.services.hooks.emit("on_session_end", session_id=self.id, reason=reason)
            self._set_id(None)

    def search(self, args: dict) -> str:
        from hermes_agent.tools.builtin.session_search import run_session_search

        return run_session_search(args, self.store, self.id)


def close_dangling_tool_calls(history: list[Message]) -> tuple[list[Message], list[Message]]:
    """`history` with an "interrupted" result after every assistant tool call that has none, and the
    results added after the last message (those can be stored by appending; earlier gaps, left by
    older versions, are closed in memory on every resume)."""
    out: list[Message] = []
    added: list[Message] = []
    pending: list = []

    def close() -> None:
        for call in pending:
            result = tool_result(call, INTERRUPTED)
            out.append(result)
            added.append(result)
        pending.clear()

    for message in history:
        if message.role == "tool":
            pending[:] = [c for c in pending if c.id != message.tool_call_id]
        else:
            close()
            added.clear()  # only the results after the last stored message can be appended
            if message.role == "assistant":
                pending.extend(message.tool_calls)
        out.append(message)
    close()
    return out, added


def _first_run(kept: list[tuple[str, Message, Booking | None]]) -> list[tuple[str, Message, Booking | None]]:
    """The leading entries of one session (a compression can switch sessions between kept messages)."""
    end = 1
    while end < len(kept) and kept[end][0] == kept[0][0]:
        end += 1
    return kept[:end]


def _workspace() -> str | None:
    """Where `hermes -c` looks first (today's Hermes): the git repository the working directory is in, else it."""
    try:
        cwd = Path.cwd()
    except OSError:
        return None
    return str(next((d for d in (cwd, *cwd.parents) if (d / ".git").exists()), cwd))
