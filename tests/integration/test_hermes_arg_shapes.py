"""A model trained on Hermes calls our tools with Hermes's argument shapes, through the real CLI:
every call works and returns what the model expects (our schemas stay the compact ones)."""

from __future__ import annotations

import json

from tests.helpers import model_config, run_hermes

NO_RC = "terminal:\n  auto_source_bashrc: false\n"


def _results(scripted) -> list[dict]:
    """The tool results in the last request, in order."""
    return [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_memory_todo_skill_and_file_calls_in_hermes_shapes(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url, NO_RC)
    work = tmp_path / "work"
    work.mkdir()
    skill_md = "---\nname: demo-skill\ndescription: A demo.\n---\n# Demo\nSteps.\n"
    calls = [
        ("memory", {"target": "user", "operations": [{"action": "add", "content": "Name: Ada"},
                                                     {"action": "add", "content": "Prefers tabs"}]}),
        ("memory", {"operations": json.dumps([{"action": "replace", "old_text": "nothing", "content": "x"}])}),
        ("memory", {"target": "user", "operations": [{"action": "replace", "old_text": "tabs", "content": "Prefers spaces"},
                                                     {"action": "remove", "old_text": "Ada"}]}),
        ("memory", {"action": "add", "content": "Project uses uv"}),  # single-op shape, target defaults to memory
        ("todo", {"todos": json.dumps([{"id": "1", "content": "ship it", "status": "in_progress"}]), "merge": False}),
        ("write_file", {"path": str(work / "a.txt"), "content": "one\ntwo\n", "cross_profile": False}),
        ("patch", {"mode": "replace", "path": str(work / "a.txt"), "old_string": "two", "new_string": "three",
                   "replace_all": False, "cross_profile": False}),
        ("read_file", {"path": str(work / "a.txt"), "offset": 1, "limit": 500}),
        ("search_files", {"pattern": "three", "target": "content", "path": str(work), "output_mode": "content",
                          "context": 0, "limit": 50, "offset": 0}),
        ("skill_manage", {"action": "create", "name": "demo-skill", "content": skill_md, "category": "demos"}),
        ("skills_list", {"category": "demos"}),
        ("skill_view", {"name": "demo-skill"}),
        ("skill_manage", {"action": "delete", "name": "demo-skill", "absorbed_into": ""}),
        ("terminal", {"command": "echo hi", "background": False, "timeout": 30, "workdir": str(work), "pty": False,
                      "notify_on_complete": False}),
    ]
    scripted.add({"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}, {"content": "done"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, timeout=120, cwd=str(work))  # the workspace (/tmp is private)
    assert out.returncode == 0, out.stderr
    r = _results(scripted)
    assert r[0]["success"] is True and r[0]["message"] == "Applied 2 operation(s)." and r[0]["entry_count"] == 2
    assert r[1]["success"] is False and "No operations were applied" in r[1]["error"]
    assert r[2]["success"] is True and r[2]["entry_count"] == 1
    assert (hermes_home / "memories" / "USER.md").read_text() == "Prefers spaces\n"
    assert r[3]["success"] is True and (hermes_home / "memories" / "MEMORY.md").read_text() == "Project uses uv\n"
    assert r[4]["todos"] == [{"id": "1", "content": "ship it", "status": "in_progress"}]
    assert "error" not in r[5] and "error" not in r[6]
    assert (work / "a.txt").read_text() == "one\nthree\n"
    assert "three" in r[7]["content"] and "three" in json.dumps(r[8])
    assert "error" not in r[9] and "demo-skill" in json.dumps(r[10]) and "# Demo" in r[11]["content"]
    assert "error" not in r[12] and not (hermes_home / "skills" / "demos" / "demo-skill").exists()
    assert r[13]["exit_code"] == 0 and r[13]["output"].strip() == "hi"
    # what we send stays our compact schema
    memory = next(t for t in scripted.requests[0]["body"]["tools"] if t["function"]["name"] == "memory")
    assert "operations" not in memory["function"]["parameters"]["properties"]


def test_delegate_task_and_session_search_in_hermes_shapes(scripted, hermes_home):
    model_config(hermes_home, scripted.url, NO_RC)
    scripted.add({"content": "the answer is 42"})
    first = run_hermes("chat", "-q", "remember the answer", home=hermes_home)
    assert first.returncode == 0, first.stderr
    scripted.add(
        {"tool_calls": [{"name": "delegate_task", "arguments": {
            "goal": "ignored when tasks are given",
            "tasks": json.dumps([{"goal": "say hello", "context": "be brief", "role": "leaf"}]),
            "role": "leaf", "background": True}}]},
        {"content": "hello from the child"},
        {"tool_calls": [{"name": "session_search", "arguments": {
            "query": "answer", "limit": 3, "sort": "newest", "role_filter": "user,assistant"}},
            {"name": "session_search", "arguments": {"session_id": "x", "profile": "work"}}]},
        {"content": "done"})
    out = run_hermes("chat", "-q", "go", "-t", "delegation,session_search,terminal", home=hermes_home)
    assert out.returncode == 0, out.stderr
    delegated = [json.loads(m["content"]) for m in scripted.requests[3]["body"]["messages"] if m["role"] == "tool"]
    assert "hello from the child" in json.dumps(delegated[0])
    search, other_profile = _results(scripted)[-2:]
    assert search["count"] == 1 and "42" in json.dumps(search["results"])
    assert "only this home's sessions" in other_profile["error"]
