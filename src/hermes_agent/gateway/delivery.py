"""Exactly-once delivery: a durable inbox per platform. A fetched batch is written (with the next poll
offset) before anything is handled, and each event leaves the inbox once it is answered. A restart
re-handles what was accepted but not answered and polls from the saved offset, so nothing is dropped or
repeated; an event id below the offset (a re-delivery) is ignored."""

from __future__ import annotations

import threading
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
        self._lock = threading.Lock()
        data = self._read()
        self.offset: int = int(data.get("offset", 0))
        self.pending: dict[int, dict] = {int(k): v for k, v in (data.get("pending") or {}).items()}
        self.recent: list[int] = [int(i) for i in data.get("recent") or []]  # answered ids (webhooks come unordered)

    def _read(self) -> dict:
        return read_json_dict(self.path)

    def _write(self) -> None:
        write_json(self.path, {"offset": self.offset, "pending": {str(k): v for k, v in self.pending.items()},
                               "recent": self.recent[-RECENT:]})

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
            self._write()
            return fresh

    def done(self, event_ids: list[int] | tuple[int, ...]) -> None:
        """These events are answered: never handle them again."""
        with self._lock:
            removed = [self.pending.pop(i, None) for i in event_ids]
            if any(r is not None for r in removed):
                self.recent = (self.recent + list(event_ids))[-RECENT:]
                self._write()

    def unanswered(self) -> list[tuple[int, dict]]:
        with self._lock:
            return sorted(self.pending.items())
