"""A model trained on today's upstream Hermes (2026.9) calls tools by its names and argument shapes, through
the real CLI: `todo_list`, `process_manage`, `cronjob_manage`, clarify `questions[]`, skill_manage
`operations[]`, memory `new_text`, session_search `after`/`before`/`detail`, terminal `notify`, delegate_task
`action`, and the `tool_call` bridge. Each works (or says in one line what is missing); the schemas we send
keep our names."""

from __future__ import annotations

import json

from tests.helpers import model_config, run_hermes

NO_RC = "terminal:\n  auto_source_bashrc: false\n"
SKILL = "---\nname: durian-notes\ndescription: Durian facts.\n---\n# Durian\nIt smells.\n"


def _results(scripted) -> list[dict]:
    return [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_upstream_names_and_shapes_work_and_our_schemas_are_sent(scripted, hermes_home):
    model_config(hermes_home, scripted.url, NO_RC)
    calls = [
        ("todo_list", {"todos": [{"id": "1", "content": "buy durian", "status": "pending", "parent": None}]}),
        ("memory", {"action": "add", "target": "memory", "new_text": "User likes durian"}),
        ("skill_manage", {"operations": [
            {"action": "create", "name": "durian-notes", "content": SKILL},
            {"action": "write_file", "name": "durian-notes", "file_path": "references/facts.md",
             "content": "Thorny.\n"}]}),
        ("session_search", {"query": "durian", "after": "7d", "detail": "full", "exclude_session_ids": []}),
        ("process_manage", {"action": "list"}),
        ("cronjob_manage", {"action": "list"}),
        ("terminal", {"command": "echo upstream-shape", "notify": False, "persist_on_release": False}),
        ("tool_call", {"name": "todo_list", "arguments": {"todos": [
            {"id": "2", "content": "eat durian", "status": "pending"}], "merge": True}}),
    ]
    scripted.add({"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, {"content": "done"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, timeout=120)
    assert out.returncode == 0, out.stderr
    todo, memory, skills, search, procs, cron, term, bridged = _results(scripted)
    assert [t["content"] for t in todo["todos"]] == ["buy durian"]
    assert memory["success"] is True
    assert "User likes durian" in (hermes_home / "memories" / "MEMORY.md").read_text()
    assert [r["success"] for r in skills["results"]] == [True, True]
    assert (hermes_home / "skills" / "durian-notes" / "references" / "facts.md").read_text() == "Thorny.\n"
    assert "error" not in search and "error" not in procs and "error" not in cron, (search, procs, cron)
    assert "upstream-shape" in term["output"]
    assert [t["content"] for t in bridged["todos"]] == ["buy durian", "eat durian"]
    sent = {t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]}
    # `process` is held back until `terminal` has been called (its unlocked_by trait), so the first request lacks it
    assert {"todo", "cronjob"} <= sent and not {"todo_list", "process_manage", "cronjob_manage"} & sent


def test_upstream_only_requests_get_one_clear_line(scripted, hermes_home):
    model_config(hermes_home, scripted.url, NO_RC)
    calls = [
        ("delegate_task", {"action": "steer", "subagent_id": "sa_1", "message": "faster"}),
        ("clarify", {"questions": []}),
        ("tool_call", {"name": "no_such_tool", "arguments": {}}),
    ]
    scripted.add({"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, {"content": "ok"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, timeout=120)
    assert out.returncode == 0, out.stderr
    steer, clarify, bridge = (r["error"] for r in _results(scripted))
    assert "persistent subagents" in steer and "spawn" in steer and "\n" not in steer
    assert "questions must be a non-empty list" in clarify
    assert "no_such_tool is not among this run's tools" in bridge


def test_schema_style_upstream_sends_upstream_tool_names_and_both_names_work(scripted, hermes_home):
    model_config(hermes_home, scripted.url, NO_RC + "tools:\n  schema_style: upstream\n")
    scripted.add({"tool_calls": [
        {"name": "todo_list", "arguments": {"todos": [{"id": "1", "content": "peel", "status": "pending"}]}},
        {"name": "todo", "arguments": {"todos": [{"id": "2", "content": "eat", "status": "pending"}], "merge": True}},
    ]}, {"content": "ok"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, timeout=120)
    assert out.returncode == 0, out.stderr
    sent = {t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]}
    assert {"todo_list", "cronjob_manage"} <= sent and not {"todo", "process", "cronjob"} & sent
    first, second = _results(scripted)
    assert [t["content"] for t in second["todos"]] == ["peel", "eat"] and "error" not in first


def test_memory_patch_changes_only_the_span(scripted, hermes_home):
    model_config(hermes_home, scripted.url, NO_RC)
    scripted.add(
        {"tool_calls": [{"name": "memory", "arguments": {"action": "add", "target": "user",
                                                         "content": "Ada likes green tea daily"}}]},
        {"tool_calls": [{"name": "memory", "arguments": {"action": "patch", "target": "user",
                                                         "old_text": "green tea", "new_text": "black coffee"}}]},
        {"content": "ok"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [r["success"] for r in _results(scripted)] == [True, True], _results(scripted)
    assert "Ada likes black coffee daily" in (hermes_home / "memories" / "USER.md").read_text()
