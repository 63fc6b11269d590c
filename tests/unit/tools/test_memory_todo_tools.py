"""The memory and todo tools as the model sees them: schemas, run_* results, no store = clear error."""

from __future__ import annotations

import json

from hermes_agent.config.settings import Settings
from hermes_agent.memory.store import MemoryStore
from hermes_agent.memory.todo import TodoStore
from hermes_agent.tools.builtin.memory import run_memory
from hermes_agent.tools.builtin.todo import run_todo
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry

RELEASED_BYTES = {"memory": 2764, "todo": 1322}


def test_schemas_are_registered_and_under_half_the_released_size():
    for name, emoji, toolset in (("memory", "🧠", "memory"), ("todo", "📋", "todo")):
        entry = registry.get(name)
        assert entry is not None and entry.emoji == emoji and entry.toolset == toolset
        size = len(json.dumps(entry.definition(), separators=(",", ":"), ensure_ascii=False).encode())
        assert size < RELEASED_BYTES[name] / 2, (name, size)


def test_without_a_store_the_tools_say_they_are_not_available(tmp_path):
    for name in ("memory", "todo"):
        out = json.loads(registry.dispatch(name, {"action": "add"}))
        assert out == {"error": f"{name} is not available in this context"}
        out = json.loads(registry.dispatch(name, {"action": "add"}, ctx=ToolContext(settings=Settings(home=tmp_path))))
        assert out == {"error": f"{name} is not available in this context"}


def test_handlers_use_the_stores_of_the_tool_context(tmp_path):
    store, todos = MemoryStore(tmp_path), TodoStore()
    ctx = ToolContext(settings=Settings(home=tmp_path), memory_store=store, todo_store=todos)
    args = {"action": "add", "target": "user", "content": "Ada"}
    out = json.loads(registry.dispatch("memory", args, ctx=ctx))
    assert out["success"] is True and store.entries("user") == ["Ada"]
    out = json.loads(registry.dispatch("todo", {"todos": [{"id": "1", "content": "x"}]}, ctx=ctx))
    assert out["todos"] == [{"id": "1", "content": "x", "status": "pending"}]


def test_run_memory_results(tmp_path):
    store = MemoryStore(tmp_path, memory_char_limit=100)
    ok = json.loads(run_memory({"action": "add", "target": "memory", "content": "repo uses uv"}, store))
    assert ok == {"success": True, "target": "memory", "message": "Entry added.",
                  "usage": "12/100 chars (12%)", "entry_count": 1}
    full = json.loads(run_memory({"action": "add", "target": "memory", "content": "z" * 95}, store))
    assert full["success"] is False and full["entries"] == ["repo uses uv"]
    bad = json.loads(run_memory({"action": "forget", "target": "memory"}, store))
    assert bad == {"error": "Unknown action 'forget'; use add, replace, patch or remove."}
    missing = json.loads(run_memory({"action": "add", "target": "memory"}, store))
    assert missing["success"] is False and "'content' is required" in missing["error"]


def test_run_todo_read_write_merge_and_errors():
    store = TodoStore()
    assert json.loads(run_todo({}, store))["todos"] == []
    run_todo({"todos": [{"id": "1", "content": "a"}, {"id": "2", "content": "b"}]}, store)
    out = json.loads(run_todo({"todos": [{"id": "2", "status": "in_progress"}], "merge": True}, store))
    assert [t["status"] for t in out["todos"]] == ["pending", "in_progress"]
    assert out["counts"] == {"pending": 1, "in_progress": 1, "completed": 0, "cancelled": 0}
    err = json.loads(run_todo({"todos": [{"id": "3", "status": "nope"}]}, store))
    assert "not one of" in err["error"]
    assert len(json.loads(run_todo({}, store))["todos"]) == 2
