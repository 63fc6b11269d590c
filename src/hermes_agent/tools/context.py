"""ToolContext: everything a tool needs beyond its arguments, handed in by the caller as `ctx`.
Each agent has its own; a field left None means "not available here" (see ToolEntry.needs)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_agent.approval.policy import PathPolicy, PendingPolicy
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.base import TerminalBackend

if TYPE_CHECKING:
    from hermes_agent.memory.store import MemoryStore
    from hermes_agent.memory.todo import TodoStore
    from hermes_agent.providers.base import Provider
    from hermes_agent.tools.builtin.send_message import Messenger
    from hermes_agent.tools.hooks import HookBus
    from hermes_agent.tools.registry import ToolEntry

ToolRunner = Callable[[dict], str]


@dataclass(slots=True)
class ToolContext:
    """Per-agent context. `backend()` returns the terminal backend of this task (created lazily by
    the factory). Callbacks and stores are None when this agent has no such thing (a subagent has no
    memory or clarify, a one-shot run nobody to ask, a library call no session store)."""

    settings: Settings
    task_id: str = "default"
    session_id: str | None = None
    backend_factory: Callable[[str], TerminalBackend] | None = None
    clarify: Callable[[str, list[str]], str] | None = None
    checkpoint: Callable[[str, str], None] | None = None
    keep_uncommitted: Callable[[str, str], object] | None = None  # before a local terminal command: (its dir, it)
    interrupt: threading.Event = field(default_factory=threading.Event)
    pending_policy: PendingPolicy | None = None  # the session's path policy, built on first use: `path_policy`
    sandbox_state: Callable[[], str] | None = None  # "bwrap" | "landlock" | "off" | "unavailable" (local backend)
    approve_write: Callable[..., object] | None = None  # the approval gate's check_write (file tools ask here)
    approve_context: Callable[..., object] | None = None  # the gate's check_context_file (tools/ctxwatch.py)
    memory_store: MemoryStore | None = None
    todo_store: TodoStore | None = None
    session_search: ToolRunner | None = None  # runs a session_search call on this agent's session store
    delegate: ToolRunner | None = None  # runs a delegate_task call (builds this agent's subagents)
    offered: frozenset[str] = frozenset()  # the tools this agent offers the model (set with its definitions)
    provider_for: Callable[[Mapping], Provider] | None = None  # a provider for a config row {provider, model, ...}
    vision: Callable[[str, str], str] | None = None  # (prompt, image data URL) -> the vision model's answer
    summarize: Callable[[str], str] | None = None  # prompt -> auxiliary model's answer (web.summarize: true)
    hook_bus: HookBus | None = None
    deferred_tools: Mapping[str, dict] | None = None  # name -> definition, behind tool_search/tool_call
    turn_id: str | None = None
    is_subagent: bool = False
    messenger: Messenger | None = None  # sends to messaging platforms (gateway chats, cron runs): send_message
    media_scope: str = "local"  # the folder of cache/{documents,images,audio} this agent reads and writes
    origin: Mapping[str, str] | None = None  # {"platform", "chat_id"} of the chat this agent serves (cron origin)
    # Who this agent works for: "<platform>:<user id>" in a gateway chat ("api:NAME" on the API server; "" for the
    # owner at the CLI) and their team role ("" outside team mode). Cron jobs record their creator from it.
    person: str = ""
    role: str = ""
    # The first source of untrusted content this conversation took in ("" while none): web/browser pages,
    # external MCP results, downloads, a message from someone other than the owner. Set by dispatch and the
    # frontends, cleared with a new conversation; the approval gate then asks before anything persists.
    untrusted: str = ""
    notice: Callable[[str], None] | None = None  # a warning the user sees (the agent emits it as a Notice)
    # Lasting changes only this person's own sessions see (team mode: a member's own USER.md): the gate lets
    # them through in a tainted conversation, since nobody else reads them.
    private_persists: frozenset[str] = frozenset()
    ctx_watch: object | None = None  # the session's context-file watch (tools/ctxwatch.py), made on first use
    traffic_watch: bool = False  # a command tool ran: its backend's network counters are read before each call
    # Provenance in the data (tools/taintmark.py): this tainted session's ledger window, the session id marked
    # tainted there, and when the previous tool call started (a taint seen now may have come in since then).
    taint_window: int | None = None
    taint_session: str = ""
    taint_touched: int = 0
    last_call_ns: int = 0
    read_watch: object | None = None  # reads of tainted files by this session's processes (tools/readwatch.py)
    _local_backend: TerminalBackend | None = field(default=None, repr=False)

    @property
    def path_policy(self) -> PathPolicy | None:
        """The session's path policy (waits for its build when one is under way); None: no policy here."""
        pending = self.pending_policy
        return None if pending is None else pending.get()

    @path_policy.setter
    def path_policy(self, policy: PathPolicy | None) -> None:
        self.pending_policy = None if policy is None else PendingPolicy.of(policy)

    def backend(self) -> TerminalBackend:
        """The terminal backend for this task."""
        if self.backend_factory is None:
            if self._local_backend is None:
                from hermes_agent.terminal.local import LocalBackend

                self._local_backend = LocalBackend()
            return self._local_backend
        return self.backend_factory(self.task_id)

    def taint(self, source: str) -> None:
        """Record that the conversation took in untrusted content from `source` (the first one is kept)."""
        if source and not self.untrusted:
            self.untrusted = source
            if self.session_id:
                from hermes_agent.tools import taintmark

                taintmark.mark_session(self)

    def written_instruction(self, name: str, args: dict) -> str:
        """Why what the call `name` saves for later sessions reads as an instruction ("" if it does not)."""
        from hermes_agent.tools.provenance import written_instruction

        return written_instruction(name, args)

    def tool_entry(self, name: str) -> ToolEntry | None:
        """The registry entry (with its traits) of a tool this context runs."""
        from hermes_agent.tools.registry import registry

        return registry.get(name)
