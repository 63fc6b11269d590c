"""The `memory` tool: durable notes in the agent's MemoryStore (`ctx.memory_store`). Without one
(subagents, bare library calls) dispatch answers that memory is not available."""

from __future__ import annotations

import json

from hermes_agent.memory.store import MemoryStore
from hermes_agent.messages import safe_loads
from hermes_agent.tools.provenance import memory_persists
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

MEMORY_SCHEMA = {
    "name": "memory",
    "description": (
        "Memory across sessions (shown in your system prompt): save unasked what is worth keeping. target "
        "user: who the user is (name, role, preferences, habits, environment); memory: your notes (project "
        "facts, conventions, fixes that worked, lessons). Not task progress or secrets. One compact fact per "
        "entry. When full, merge (replace) or remove stale entries the error lists, then retry."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
            "target": {"type": "string", "enum": ["memory", "user"]},
            "content": {"type": "string"},
            "old_text": {"type": "string", "description": "unique part of the entry"},
        },
        "required": ["action", "target"],
    },
}


def normalise_args(args: dict) -> dict:
    """Hermes's shapes as ours: `target` defaults to 'memory' (also when null), and `operations`
    (a batch of {action, content?, old_text?}, possibly sent as a JSON string) is kept as a list."""
    out = dict(args)
    if out.get("target") is None:
        out["target"] = "memory"
    ops = out.get("operations")
    if isinstance(ops, str):
        try:
            ops = safe_loads(ops) if ops.strip() else None
        except ValueError:
            pass  # left a string: run_memory reports it
    if ops in (None, []):
        out.pop("operations", None)
    else:
        out["operations"] = ops
    return out


def _patched(store: MemoryStore, target: str, args: dict) -> object:
    """The entry holding old_text with that span replaced by content (content itself when none holds it: the
    store then answers that nothing matched)."""
    old, new = args.get("old_text"), args.get("content")
    needle = old.strip() if isinstance(old, str) else ""
    hits = [e for e in store.entries(target) if needle and needle in e] if isinstance(new, str) else []
    return hits[0].replace(needle, new, 1) if len(hits) == 1 else new


def run_memory(args: dict, store: MemoryStore) -> str:
    """Perform one memory action (or a Hermes-style `operations` batch) on `store`; always JSON text."""
    args = normalise_args(args)
    action, target = args.get("action"), args.get("target")
    try:
        if "operations" in args:
            ops = args["operations"]
            if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
                return tool_error("operations must be a list of {action, content?, old_text?} objects.")
            outcome = store.apply_batch(target, ops)
        elif action == "add":
            outcome = store.add(target, args.get("content"))
        elif action == "replace":
            outcome = store.replace(target, args.get("old_text"), args.get("content"))
        elif action == "remove":
            outcome = store.remove(target, args.get("old_text"))
        elif action == "patch":  # upstream Hermes: only the old_text span changes, the rest of the entry stays
            outcome = store.replace(target, args.get("old_text"), _patched(store, target, args))
        else:
            return tool_error(f"Unknown action {action!r}; use add, replace, patch or remove.")
    except OSError as exc:
        return tool_error(f"Could not write memory: {exc.strerror or exc}")
    return json.dumps(outcome.as_dict(), ensure_ascii=False)


def _handle(args: dict, **kw: object) -> str:
    return run_memory(args, kw["ctx"].memory_store)  # type: ignore[attr-defined]  # `needs` guarantees it


registry.register("memory", "memory", MEMORY_SCHEMA, _handle, emoji="🧠", subagent_ok=False,
                  needs={"memory_store"}, persists=memory_persists)
