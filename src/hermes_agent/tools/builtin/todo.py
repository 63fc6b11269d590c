"""The `todo` tool: the task list in the agent's TodoStore (`ctx.todo_store`; every agent and
subagent has its own). Without one dispatch answers that todo is not available."""

from __future__ import annotations

import json

from hermes_agent.memory.todo import STATUSES, TodoError, TodoStore
from hermes_agent.messages import safe_loads
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

TODO_SCHEMA = {
    "name": "todo",
    "description": (
        "Task list for work of 3+ steps; no args reads it. `todos` replaces the list (merge=true: update by "
        "id). Keep one item in_progress; mark each completed once done."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "content": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["id"],
                },
            },
            "merge": {"type": "boolean"},
        },
    },
}


def normalise_args(args: dict) -> dict:
    """Hermes's shapes as ours: `todos` sent as a JSON string is parsed; merge "true"/"false" as a bool."""
    out = dict(args)
    todos = out.get("todos")
    if isinstance(todos, str):
        try:
            out["todos"] = safe_loads(todos) if todos.strip() else None
        except ValueError:
            pass  # left a string: the store reports it
    if isinstance(out.get("merge"), str):
        out["merge"] = out["merge"].strip().lower() in ("true", "1", "yes")
    return out


def run_todo(args: dict, store: TodoStore) -> str:
    """Read or write the task list; returns the list and per-status counts as JSON text."""
    args = normalise_args(args)
    todos = args.get("todos")
    if todos is not None:
        try:
            store.write(todos, merge=bool(args.get("merge", False)))
        except TodoError as exc:
            return tool_error(str(exc))
    items = [it.as_dict() for it in store.read()]
    return json.dumps({"todos": items, "counts": store.counts()}, ensure_ascii=False)


def _handle(args: dict, **kw: object) -> str:
    return run_todo(args, kw["ctx"].todo_store)  # type: ignore[attr-defined]  # `needs` guarantees it


registry.register("todo", "todo", TODO_SCHEMA, _handle, emoji="📋", needs={"todo_store"})
