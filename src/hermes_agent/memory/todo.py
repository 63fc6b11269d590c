"""TodoStore: the per-session task list (replace or merge by id), rendered for re-injection after
context compression. In memory only; one store per agent."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Literal

Status = Literal["pending", "in_progress", "completed", "cancelled"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed", "cancelled")
MAX_ITEMS = 256
MAX_CONTENT_CHARS = 4000
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


class TodoError(ValueError):
    """A write the store refused; the message is meant for the model."""


@dataclass(frozen=True, slots=True)
class TodoItem:
    """One entry of the session's todo list."""

    id: str
    content: str
    status: Status = "pending"

    def as_dict(self) -> dict:
        return {"id": self.id, "content": self.content, "status": self.status}


def _field(raw: dict, key: str, pos: int) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise TodoError(f"todos[{pos}].{key} must be a string")
    return str(value).strip()


def _parse(raw: object, pos: int) -> tuple[str, str | None, str | None]:
    """(id, content or None, status or None) of one raw item, validated."""
    if not isinstance(raw, dict):
        raise TodoError(f"todos[{pos}] must be an object with id, content and status")
    item_id = _field(raw, "id", pos)
    if not item_id:
        raise TodoError(f"todos[{pos}] needs a non-empty 'id'")
    content = _field(raw, "content", pos)
    if content is not None and len(content) > MAX_CONTENT_CHARS:
        raise TodoError(f"todos[{pos}].content is {len(content)} chars; the limit is {MAX_CONTENT_CHARS}")
    status = _field(raw, "status", pos)
    if status is not None and status not in STATUSES:
        raise TodoError(f"todos[{pos}].status {status!r} is not one of {', '.join(STATUSES)}")
    return item_id, content, status


class TodoStore:
    """The session's task list. `write` replaces it, or with merge=True updates/appends by id."""

    def __init__(self) -> None:
        self._items: list[TodoItem] = []
        self._lock = threading.Lock()

    def read(self) -> list[TodoItem]:
        """The current list, in order."""
        with self._lock:
            return list(self._items)

    def write(self, todos: list[dict], merge: bool = False) -> list[TodoItem]:
        """Replace the list (or merge by id) and return it; bad input raises TodoError and changes nothing."""
        if not isinstance(todos, list):
            raise TodoError("'todos' must be an array of {id, content, status}")
        parsed = [_parse(raw, i) for i, raw in enumerate(todos)]
        with self._lock:
            items: dict[str, TodoItem] = {it.id: it for it in self._items} if merge else {}
            for pos, (item_id, content, status) in enumerate(parsed):
                old = items.get(item_id)
                if old is not None:
                    items[item_id] = replace(old, content=content or old.content, status=status or old.status)
                elif not content:
                    raise TodoError(f"todos[{pos}] (id {item_id!r}) is new and needs 'content'")
                else:
                    items[item_id] = TodoItem(item_id, content, status or "pending")  # type: ignore[arg-type]
            if len(items) > MAX_ITEMS:
                raise TodoError(f"the list would hold {len(items)} items; the limit is {MAX_ITEMS}")
            self._items = list(items.values())
            return list(self._items)

    def counts(self) -> dict[str, int]:
        """Number of items per status (every status present, zeros included)."""
        items = self.read()
        return {s: sum(1 for it in items if it.status == s) for s in STATUSES}

    def render_for_context(self) -> str | None:
        """The list as text to re-inject after compression; None when there is nothing open."""
        items = self.read()
        if not any(it.status in ("pending", "in_progress") for it in items):
            return None
        lines = [f"{_MARKS[it.status]} {it.id}. {it.content}" for it in items]
        return "Your task list (todo tool), carried over from before the compaction:\n" + "\n".join(lines)
