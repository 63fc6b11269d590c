"""Binds an agent to the session store: every message written as it happens, usage and cost per call,
resume, lineage on compression, and the session_search intercept."""

from __future__ import annotations

import os

from hermes_agent.core.agent import AgentServices
from hermes_agent.core.compression import CompressionResult
from hermes_agent.errors import StorageError
from hermes_agent.messages import Message, system
from hermes_agent.storage.store import SessionStore
from hermes_agent.tools.builtin.session_search import run_session_search

_STORES: dict[str, SessionStore] = {}


def shared_store(auto_title: bool = True) -> SessionStore:
    """One SessionStore per database path per process (gateway threads share it)."""
    from hermes_agent import paths

    key = str(paths.state_db_path())
    if key not in _STORES:
        _STORES[key] = SessionStore(auto_title=auto_title)
    return _STORES[key]


class SessionBinding:
    """The current session of one agent; created lazily on the first message so an idle REPL leaves no trace."""

    def __init__(self, store: SessionStore, services: AgentServices, source: str, *,
                 parent_id: str | None = None) -> None:
        self.store, self.services, self.source, self.parent_id = store, services, source, parent_id
        self.id: str | None = None

    def _set_id(self, sid: str | None) -> None:
        self.id = sid
        self.services.session_id = sid
        self.services.ctx.session_id = sid

    def persist(self, message: Message) -> None:
        """Write one message (the system prompt is kept on the session row)."""
        if self.id is None:
            info = self.store.create_session(self.source, self.services.provider.model, cwd=os.getcwd(),
                                             parent_session_id=self.parent_id)
            self._set_id(info.id)
            self.services.hooks.emit("on_session_start", session_id=info.id, platform=self.source)
        if message.role == "system":
            self.store.set_system_prompt(self.id, message.content)
            return
        self.store.append_message(self.id, message)
        if message.role == "assistant" and message.usage is not None:
            self.store.add_usage(self.id, message.usage, model=self.services.provider.model)

    def resume(self, which: str) -> list[Message]:
        """Restore a session by id/prefix, or the latest of this source for `which == "latest"`."""
        if which == "latest":
            info = self.store.latest_session(source=self.source)
            if info is None:
                raise StorageError(f"no earlier {self.source} session to continue")
        else:
            info = self.store.require_session(which)
        self.store.reopen_session(info.id)
        self._set_id(info.id)
        history = self.store.get_messages(info.id)
        return ([system(info.system_prompt)] if info.system_prompt else []) + history

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
        """/undo and /retry: the undone turn stays in the parent session; `--continue` resumes the branch."""
        self._branch(kept, "rewound")

    def new_session(self) -> None:
        """End the current session; the next message starts another."""
        self.end("new_session")

    def end(self, reason: str = "ended") -> None:
        if self.id is not None:
            self.store.end_session(self.id, reason)
            self.services.hooks.emit("on_session_end", session_id=self.id, reason=reason)
            self._set_id(None)

    def search(self, args: dict) -> str:
        return run_session_search(args, self.store, self.id)
