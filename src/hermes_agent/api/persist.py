"""What lets an API conversation outlive the server process: HERMES_HOME/api_server/index.json maps each
conversation key (X-Hermes-Session-Id) to its state.db session, and each /v1/responses id to its
conversation and how many messages the conversation had after it. The messages themselves are in state.db
(source `api_server`), written as they happen; this file only says where to find them."""

from __future__ import annotations

import threading
from pathlib import Path

from hermes_agent import paths
from hermes_agent.atomicfile import read_json_dict, write_json

RESPONSES_KEPT = 4096


def index_path() -> Path:
    return paths.hermes_home() / "api_server" / "index.json"


class ApiIndex:
    """conversation key -> session id; response id -> [conversation key, message count]; key -> latest id."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or index_path()
        self._lock = threading.Lock()
        data = self._read()
        self.sessions: dict[str, str] = dict(data.get("sessions") or {})
        self.responses: dict[str, list] = dict(data.get("responses") or {})
        self.latest: dict[str, str] = dict(data.get("latest") or {})

    def _read(self) -> dict:
        return read_json_dict(self.path)

    def _write(self) -> None:
        write_json(self.path, {"sessions": self.sessions, "responses": self.responses, "latest": self.latest})

    def session_of(self, key: str) -> str | None:
        with self._lock:
            return self.sessions.get(key)

    def set_session(self, key: str, session_id: str) -> None:
        with self._lock:
            if self.sessions.get(key) != session_id:
                self.sessions[key] = session_id
                self._write()

    def add_response(self, rid: str, key: str, count: int) -> None:
        """Remember a response id (the newest RESPONSES_KEPT are kept) as the conversation's latest."""
        with self._lock:
            self.responses[rid] = [key, count]
            self.latest[key] = rid
            for old in list(self.responses)[:-RESPONSES_KEPT]:
                del self.responses[old]
            self._write()

    def response(self, rid: str) -> tuple[str, int] | None:
        with self._lock:
            found = self.responses.get(rid)
        return (str(found[0]), int(found[1])) if found else None

    def latest_of(self, key: str) -> str | None:
        with self._lock:
            return self.latest.get(key)
