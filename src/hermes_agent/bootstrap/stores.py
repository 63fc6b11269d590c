"""Per-session state wired into an agent: memory, todo, context files and compression."""

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
from hermes_agent.core.compression import AutoCompactor, CompressionResult, describe
from hermes_agent.core.context import PromptParts
from hermes_agent.events import Event, Notice
from hermes_agent.lazylog import get_logger
from hermes_agent.memory.context_files import persona_and_blocks
from hermes_agent.memory.store import MemoryStore
from hermes_agent.memory.todo import TodoStore

from .provider import auxiliary_provider, summarizer

if TYPE_CHECKING:
    from hermes_agent.terminal.base import TerminalBackend
    from hermes_agent.tools.context import ToolContext

log = get_logger(__name__)
SUMMARY_TIMEOUT = 120.0  # seconds a compression summary may take when auxiliary.compression.timeout is unset


def wire_memory_and_todo(services: AgentServices, settings: Settings, user_dir: str | None = None) -> MemoryStore:
    """Memory + todo stores in the agent's ToolContext (the memory snapshot goes in the prompt); `user_dir`:
    a team member's own USER.md (MEMORY.md stays the shared one)."""
    memory = MemoryStore.from_settings(settings, user_dir=user_dir)
    if user_dir:  # a team member's own profile: writing it needs nobody's approval
        from hermes_agent.tools.provenance import USER_PROFILE

        services.ctx.private_persists = frozenset({USER_PROFILE})
    services.ctx.memory_store = memory
    services.ctx.todo_store = TodoStore()
    return memory


def wire_attribution(services: AgentServices, settings: Settings, person: str, role: str) -> None:
    """Team mode: every tool call this agent runs is recorded against `person` in state.db
    (`hermes_agent_tool_people`, a table of ours that Hermes ignores)."""
    from hermes_agent.storage.people import Attribution

    book = Attribution(Path(settings.home) / "state.db")

    def record(name: str, ctx: object = None, **_: object) -> None:
        book.record(getattr(ctx, "session_id", None) or services.session_id, person, role, name)

    services.hooks.register("post_tool_call", record)
    services.closers.append(book.close)


def skills_in(tool_names: set[str] | frozenset[str]) -> bool:
    """Whether the system prompt should carry the skills index: the agent can open skills."""
    return "skill_view" in tool_names


def skills_index(settings: Settings) -> str:
    """The compact skills index (ours that ship with hermes-agent included, read where they are packaged)."""
    from hermes_agent.skills.catalog import catalog_from_settings

    return catalog_from_settings(settings).index_text()


def prompt_parts(settings: Settings, memory: MemoryStore, *, with_skills: bool = True, ignore_rules: bool = False,
                 platform_hint: str = "", refresh: bool = False, extra: tuple[str, ...] = ()) -> PromptParts:
    """Everything the system prompt needs, taken once at session start (refresh: retake the memory snapshot).
    ignore_rules (Hermes's --ignore-rules): no persona, context files or memory; `extra` is appended."""
    cwd = os.getcwd()
    if refresh:
        memory.refresh_snapshot()
    skills = skills_index(settings) if with_skills else ""
    persona, blocks = ("", ()) if ignore_rules else persona_and_blocks(settings, cwd)
    return PromptParts(persona=persona, memory="" if ignore_rules else memory.snapshot(), skills_index=skills,
                       context_files=blocks, platform_hint=platform_hint, cwd=cwd, extra=extra)


def _warn(text: str) -> None:
    log.warning(text)


def wire_terminal(services: AgentServices, settings: Settings, warm: bool = False) -> None:
    """Terminal backends per task (local, docker, ssh, singularity), released with the agent; `warm`: the local
    sandbox starts while the first model call runs (the CLI; not the gateway, whose chats may never run one)."""
    from hermes_agent.terminal.manager import BackendPool
    from hermes_agent.terminal.runfile import reap_stale

    from .safety import build_path_policy

    for what in reap_stale():  # processes and state dirs of an earlier run that was killed
        log.info("cleanup after a killed run: %s", what)
    pending = services.ctx.pending_policy  # its build is not forced here: the pool asks with its first backend
    policy = pending.get if pending is not None else build_path_policy(settings, media_scope=services.ctx.media_scope)
    pool = BackendPool(settings, policy=policy, notice=_warn)  # (not log.warning: that loads logging)
    services.ctx.backend_factory = pool.get
    ctx = services.ctx
    ctx.sandbox_state = lambda: str(getattr(ctx.backend(), "sandbox_state", "n/a"))
    if warm and pool.kind == "local":
        _wire_warm_up(services)  # before pool.close_all among the closers
    services.closers.append(pool.close_all)


COMMAND_TOOLS = frozenset({"terminal", "process", "execute_code"})
_WARM_AFTER_S = 0.15  # a model call still running after this long: the sandbox starts meanwhile (a loop on a fast
# model, or a test's instant one, never has it compete for the CPU)
_WARM_EXIT_WAIT_S = 35.0  # a launcher start gives up after 30 s (launcher._START_TIMEOUT_S)


def _wire_warm_up(services: AgentServices) -> None:
    """The local sandbox planned and started on a background thread while a model call of a run that offers a
    command tool has been running for _WARM_AFTER_S (bootstrap/warm.py), before pool.close_all among the closers."""
    warm = _WarmUp(services.ctx.backend)
    services.hooks.register("pre_llm_call", warm.on_call)
    services.hooks.register("post_llm_call", warm.on_reply)
    services.closers.append(warm.finish)


class _WarmUp:
    """At close no start begins; once the thread has begun starting processes, that start is aborted and the
    thread waited for, so the backends then close whatever it left (before, it only plans: nothing to wait for)."""

    def __init__(self, backend: Callable[[], object]) -> None:
        self.backend = backend
        self.stop = threading.Event()
        self.cond = threading.Condition()
        self.since: float | None = None  # when the model call in flight began
        self.thread: threading.Event | None = None  # set when the warm-up thread is done
        self.warming: list = []  # the backend whose start is under way (warm.warm_sandbox)
        self.idle = True  # the thread waits for a call with no deadline (or is not started yet)

    def on_call(self, tools: tuple = (), **_: object) -> None:
        with self.cond:
            if self.stop.is_set():
                return
            if self.thread is None:
                if not any(_tool_name(t) in COMMAND_TOOLS for t in tools or ()):
                    return
                from hermes_agent import background

                self.thread = background.start(self._run)  # (threading.Thread.start waits for the thread to run)
            self.since = time.monotonic()
            if self.idle:  # woken only when it has no deadline: not on every call of a fast loop
                self.cond.notify_all()

    def on_reply(self, **_: object) -> None:
        with self.cond:
            self.since = None  # the thread finds out at its deadline

    def _run(self) -> None:
        with self.cond:
            while True:
                if self.stop.is_set():
                    return
                left = None if self.since is None else self.since + _WARM_AFTER_S - time.monotonic()
                if left is not None and left <= 0:
                    break
                self.idle = left is None
                self.cond.wait(left)
                self.idle = False
        from .warm import warm_sandbox

        warm_sandbox(self.backend, self.stop, self.cond, self.warming)

    def finish(self) -> None:
        with self.cond:
            self.stop.set()
            committed = list(self.warming)
            self.cond.notify_all()
        for chosen in committed:
            chosen.abort_warm()
        if committed and self.thread is not None:
            self.thread.wait(_WARM_EXIT_WAIT_S)


def _tool_name(tool: object) -> str:
    fn = tool.get("function") if isinstance(tool, dict) else None
    return str(fn.get("name", "")) if isinstance(fn, dict) else ""


def finish_context_watch(ctx: ToolContext) -> None:
    """The context-file watch's last look (tools/ctxwatch.py), when the session ran confined code; a closer
    registered last, so the session's processes are gone (nothing imported otherwise)."""
    if ctx.ctx_watch is not None:
        from hermes_agent.tools import ctxwatch

        ctxwatch.finish(ctx)
    if ctx.read_watch is not None:  # tools/readwatch.py
        from hermes_agent.tools import readwatch

        readwatch.finish(ctx)
    if ctx.taint_window is not None or ctx.untrusted:  # provenance in the data (tools/taintmark.py)
        from hermes_agent.tools import taintmark

        taintmark.finish(ctx)


def wire_browser_and_vision(services: AgentServices, settings: Settings) -> None:
    """ctx.vision asks the `auxiliary.vision` model (the main one when unset) about an image; the task's
    browser context is released with the agent (the last one out stops Chromium)."""
    from hermes_agent.messages import user
    from hermes_agent.providers.base import ChatRequest
    ctx = services.ctx
    aux = auxiliary_provider(settings, "vision", services.provider)
    own = aux is not services.provider
    row = settings.cfg.auxiliary.get("vision")
    temperature = row.get("temperature") if isinstance(row, dict) else None

    def vision(prompt: str, image: str) -> str:
        provider = aux if own else services.provider  # follows /model when there is no vision row
        request = ChatRequest((user(prompt, (image,)),), max_tokens=2000,
                              temperature=float(temperature) if temperature is not None else 0.1)
        return provider.complete(request, cancel=ctx.interrupt).content or ""

    ctx.vision = vision
    if own:
        services.closers.append(aux.close)
    services.closers.append(lambda: _release_browser(ctx.task_id))


def _release_browser(task_id: str) -> None:
    """Release the task's browser context; a no-op when no browser was started (nor its pool imported)."""
    import sys

    pool = sys.modules.get("hermes_agent.tools.builtin._browser_pool")
    if pool is not None:
        pool.release_task(task_id)


def wire_checkpoints(services: AgentServices, settings: Settings) -> None:
    """Snapshot a working directory (shadow git under HERMES_HOME) before the first change of each turn
    (`checkpoints.enabled`), and a git workspace holding uncommitted changes before a terminal command
    (`checkpoints.keep_uncommitted`, storage/dirtyguard.py). The store is made on first use."""
    cfg = settings.cfg.checkpoints
    if not cfg.enabled and not cfg.keep_uncommitted:
        return
    ctx = services.ctx
    made: list = []

    def store():
        if not made:
            from hermes_agent.storage.checkpoints import CheckpointStore

            made.append(CheckpointStore(max_snapshots=cfg.max_snapshots, env=dict(settings.env)))
        return made[0]

    if cfg.enabled:
        ctx.checkpoint = lambda workdir, why: store().snapshot(workdir, why, turn=ctx.turn_id)
    if cfg.keep_uncommitted:
        _wire_keep_uncommitted(services, store)


def _wire_keep_uncommitted(services: AgentServices, store: Callable[[], object]) -> None:
    """ctx.keep_uncommitted (storage/dirtyguard.py), offered to every confined writer's start
    (terminal/base.py `keep_work`); the session's end line says how to restore what was kept."""
    ctx = services.ctx
    guards: list = []
    taken: dict[str, list[tuple[str, str]]] = {}  # repository -> (snapshot, kept before what) this session

    def keep(workdir: str, command: str = "") -> object:
        if not guards:
            from hermes_agent.storage.dirtyguard import DirtyGuard
            from hermes_agent.tools.readwatch import not_to_list, not_to_read

            kept_in = store()
            kept_in.skip_reading = lambda path: not_to_read(ctx, path)  # what a tainted session wrote
            kept_in.skip_listing = lambda: not_to_list(ctx)
            guards.append(DirtyGuard(kept_in, notice=lambda line: (ctx.notice or log.warning)(line)))
        cid = guards[0].before(workdir, command)
        if cid:
            taken.setdefault(guards[0].root_of(workdir) or workdir, []).append((str(cid), command))
        return cid

    ctx.keep_uncommitted = keep
    from hermes_agent.terminal.base import offer_keeper  # every confined writer's start (sandbox/guard.py)

    withdraw = offer_keeper(keep)

    def close() -> None:  # before the MCP servers stop (closers run in order): their exit handlers may write
        guard = sys.modules.get("hermes_agent.terminal.sandbox.guard")  # loaded only if confined work started
        if guard is not None:
            guard.keep_all("the session ends")
        for root in list(taken):  # changed since its last copy (a file tool's write after it): the line is due
            keep(root, "the session ends")
        withdraw()
        for dirty in guards:
            dirty.close()
        from hermes_agent.termsafe import one_line

        for root, kept in taken.items():
            if len(kept) < 2:  # kept once and not changed after: nothing was destroyed, nothing to say
                continue
            ids = "; ".join(f"{cid[:10]} (before {one_line(why)[:60]})" for cid, why in kept[-5:])
            (ctx.notice or log.warning)(
                f"uncommitted work in {one_line(root)} was kept this session before it could be destroyed: "
                f"`hermes checkpoints restore ID [--path FILE]` there brings it back, ID one of: {ids}"
                + (f" (+{len(kept) - 5} earlier)" if len(kept) > 5 else "")
                + "; `hermes checkpoints list` there shows them all")

    services.closers.append(close)


def wire_compression(services: AgentServices, settings: Settings, emit: Callable[[Event], None] | None,
                     on_compressed: Callable[[CompressionResult], None] | None = None) -> None:
    """Automatic compression (summaries by the auxiliary `compression` model, or the main one)."""
    aux = auxiliary_provider(settings, "compression", services.provider)
    todos = services.ctx.todo_store

    def on_result(res: CompressionResult) -> None:
        if on_compressed is not None:
            on_compressed(res)
        if emit is not None and res.method != "none":
            emit(Notice(describe(res)))

    row = settings.cfg.auxiliary.get("compression")
    try:  # auxiliary.compression.timeout, as in Hermes; a summary never holds the turn longer than that
        timeout = float(row.get("timeout") or 0) if isinstance(row, dict) else 0.0
    except (TypeError, ValueError):
        timeout = 0.0
    timeout = timeout or SUMMARY_TIMEOUT
    compactor = AutoCompactor(settings, summarizer(aux, timeout=timeout), todo_text=todos.render_for_context if todos else None,
                              on_result=on_result)
    services.compact = compactor
    if aux is services.provider:  # summaries follow the main model when it is switched (/model)
        services.on_provider_change.append(lambda p: setattr(compactor, "summarize", summarizer(p, timeout=timeout)))


def script_backend(settings: Settings, workspace: str | None = None, cwd: str | None = None) -> TerminalBackend:
    """A sandboxed local shell for a script that is not an agent turn (cron `no_agent` jobs): the session's
    path policy with `workspace` writable (default terminal.cwd); the caller closes it."""
    from dataclasses import replace

    from hermes_agent.terminal.manager import sandboxed_local

    from .safety import build_path_policy

    policy = build_path_policy(settings, workspace)
    scripts = os.path.realpath(settings.home / "scripts")  # the user's scripts: readable, inside a hidden home
    policy = replace(policy, readable=(*policy.readable, scripts))
    return sandboxed_local(settings, policy, cwd=cwd, notice=log.warning)
