"""Exactly-once delivery: a durable inbox per platform. A fetched batch is written (with the next poll
offset) before anything is handled, and each event leaves the inbox once it is answered. A restart
re-handles what was accepted but not answered and polls from the saved offset, so nothing is dropped or
repeated; an event id below the offset (a re-delivery) is ignored. Writes made at the same time share one
fsync (a write covers every change made before it), so a burst of answers costs a few writes, not one each."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hermes_agent import paths
from hermes_agent.atomicfile import read_json_dict, write_json

RECENT = 500


def gateway_dir() -> Path:
    return paths.gateway_dir()


class Inbox:
    """`offset` = the next event id to ask the platform for; `pending` = accepted, not yet answered."""

    def __init__(self, platform: str, directory: Path | None = None) -> None:
        self.path = (directory or gateway_dir()) / f"{platform}-inbox.json"
        self._lock = threading.Lock()  # the state in memory
        self._write_lock = threading.Lock()  # one write at a time
        self._changes = 0  # how many changes the state in memory has had
        self._saved = 0  # ... and how many of them are on disk
        self._writer: ThreadPoolExecutor | None = None
        data = self._read()
        self.offset: int = int(data.get("offset", 0))
        self.pending: dict[int, dict] = {int(k): v for k, v in (data.get("pending") or {}).items()}
        self.recent: list[int] = [int(i) for i in data.get("recent") or []]  # answered ids (webhooks come unordered)

    def _read(self) -> dict:
        return read_json_dict(self.path)

    def _changed(self) -> int:
        """(under _lock) count a change; the number a save must reach to cover it"""
        self._changes += 1
        return self._changes

    def save(self, upto: int) -> None:
        """Make the state durable at least up to change `upto`: one write covers every change made before it,
        so callers waiting here meanwhile find theirs saved and return."""
        with self._write_lock:
            if self._saved >= upto:
                return
            with self._lock:
                data = {"offset": self.offset, "pending": {str(k): v for k, v in self.pending.items()},
                        "recent": self.recent[-RECENT:]}
                reached = self._changes
            write_json(self.path, data)
            self._saved = reached

    def accept(self, events: list[tuple[int, dict | None]], *, ordered: bool = True) -> list[int]:
        """Record a fetched batch (`None` payload = nothing to answer); returns the ids that are new.
        `ordered` (polling): an id below the offset is a re-delivery; pushed events are checked by id."""
        with self._lock:
            fresh = []
            recent = set(self.recent)
            for event_id, payload in events:
                if (ordered and event_id < self.offset) or event_id in self.pending or event_id in recent:
                    continue
                if payload is not None:
                    self.pending[event_id] = payload
                    fresh.append(event_id)
                self.offset = max(self.offset, event_id + 1)
            upto = self._changed()
        self.save(upto)
        return fresh

    def done(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """These events are answered: never handle them again (on disk when this returns)."""
        upto = self._forget(event_ids)
        if upto:
            self.save(upto)

    def done_soon(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """`done` without waiting for the disk (an ack from the event loop): the state changes now, the write
        happens on the inbox's own thread, shared with the answers given meanwhile."""
        upto = self._forget(event_ids)
        if upto:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-write")
            self._writer.submit(self.save, upto)

    def _forget(self, event_ids: list[int] | tuple[int, ...]) -> int:
        with self._lock:
            removed = [self.pending.pop(i, None) for i in event_ids]
            if not any(r is not None for r in removed):
                return 0
            self.recent = (self.recent + list(event_ids))[-RECENT:]
            return self._changed()

    def unanswered(self) -> list[tuple[int, dict]]:
        with self._lock:
            return sorted(self.pending.items())
