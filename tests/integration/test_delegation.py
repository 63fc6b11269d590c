"""delegate_task through the real `hermes chat -q` (and the composed agent) against the scripted server:
summaries back to the parent, subagent sessions, parallelism, auto-deny, failures, interrupt, depth 1."""

from __future__ import annotations

import json
import os
import re
import threading
import time

import pexpect

from hermes_agent.storage.store import SessionStore
from tests.helpers import HERMES, model_config, run_hermes

BLOCKED = {"delegate_task", "clarify", "memory"}


def delegate(*tasks: dict) -> dict:
    return {"tool_calls": [{"name": "delegate_task", "arguments": {"tasks": list(tasks)}}]}


def tools_of(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request["body"].get("tools") or []}


def tool_result(request: dict) -> dict:
    message = request["body"]["messages"][-1]
    assert message["role"] == "tool"
    return json.loads(message["content"])


def parent_session(stderr: str) -> str:
    return re.search(r"session (\S+) \(continue", stderr).group(1)


def test_two_tasks_report_back_and_children_are_subagent_sessions(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add(delegate({"goal": "Count the lines of a.txt", "context": "a.txt is in /srv/data",
                           "toolsets": ["terminal"]},
                          {"goal": "Name three primes"}),
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo 3 lines"}}]},
                 {"content": "a.txt has 3 lines."},
                 {"content": "2, 3 and 5."},
                 {"content": "Both done: 3 lines; primes 2, 3, 5."})
    out = run_hermes("chat", "-q", "do two things", "-C", "delegation.max_concurrent_children=1", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Both done: 3 lines; primes 2, 3, 5.\n"
    assert "delegating 2 tasks to subagents" in out.stderr and "[1] completed" in out.stderr

    rows = tool_result(scripted.requests[4])["results"]
    assert [(r["goal"], r["status"], r["summary"]) for r in rows] == [
        ("Count the lines of a.txt", "completed", "a.txt has 3 lines."),
        ("Name three primes", "completed", "2, 3 and 5.")]
    assert [(r["api_calls"], r["tool_calls"]) for r in rows] == [(2, 1), (1, 0)]

    first_child = scripted.requests[1]["body"]["messages"]
    assert [m["role"] for m in first_child] == ["system", "user"]  # no parent history
    assert first_child[1]["content"] == "Count the lines of a.txt\n\nContext:\na.txt is in /srv/data"
    assert "You are a subagent" in first_child[0]["content"]
    assert "delegate_task" in tools_of(scripted.requests[0])
    assert tools_of(scripted.requests[1]) == {"terminal"}  # requested toolsets only (process after a terminal call)
    assert tools_of(scripted.requests[3]) and not tools_of(scripted.requests[3]) & BLOCKED  # inherited, minus blocked

    parent_id = parent_session(out.stderr)
    with SessionStore(hermes_home / "state.db") as store:
        kids = {rows[i]["session_id"]: store.require_session(rows[i]["session_id"]) for i in (0, 1)}
        assert {(k.source, k.parent_session_id, k.end_reason) for k in kids.values()} == {
            ("subagent", parent_id, "completed")}
        assert [m.content for m in store.get_messages(rows[1]["session_id"])] == ["Name three primes", "2, 3 and 5."]
    listed = run_hermes("sessions", "list", "--source", "subagent", home=hermes_home)
    assert "Count the lines of a.txt" in listed.stdout and "Name three primes" in listed.stdout


def test_children_run_in_parallel(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.default = {"content": "child done", "delay": 0.6}
    scripted.add(delegate({"goal": "task one"}, {"goal": "task two"}, {"goal": "task three"}))
    out = run_hermes("chat", "-q", "fan out", "-Q", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    children = scripted.requests[1:4]
    arrivals = [r["time"] for r in children]
    assert max(arrivals) - min(arrivals) < 0.6  # all three asked before the first answer (each answer takes 0.6 s)
    assert sorted(r["body"]["messages"][1]["content"] for r in children) == ["task one", "task three", "task two"]
    rows = tool_result(scripted.requests[4])["results"]
    assert [(r["goal"], r["status"], r["summary"]) for r in rows] == [
        ("task one", "completed", "child done"), ("task two", "completed", "child done"),
        ("task three", "completed", "child done")]


def test_child_flagged_command_is_denied_without_asking_the_user(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url, "approvals:\n  timeout: 30\n")
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    scripted.add(delegate({"goal": "clean up", "toolsets": ["terminal"]}),
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": f"rm -r {victim}"}}]},
                 {"content": "Could not delete: the command needs approval."},
                 {"content": "The subagent could not delete it."})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), TERM="dumb")
    started = time.monotonic()
    # a terminal on stdin: the parent itself could ask, the subagent must not
    child = pexpect.spawn(HERMES, ["chat", "-q", "delete victim"], env=env, encoding="utf-8", timeout=20)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert time.monotonic() - started < 10
    assert victim.exists() and "Allow" not in child.before and "once" not in child.before
    denial = json.loads(scripted.requests[2]["body"]["messages"][-1]["content"])
    assert "was not run" in denial["error"] and "approval" in denial["error"]
    assert tool_result(scripted.requests[3])["results"][0]["summary"] == "Could not delete: the command needs approval."


def test_failing_child_is_a_failed_row_and_others_still_finish(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add(delegate({"goal": "will break"}, {"goal": "will work"}),
                 {"error": {"status": 400, "message": "bad tool schema"}},
                 {"content": "worked"},
                 {"content": "one failed"})
    out = run_hermes("chat", "-q", "go", "-C", "delegation.max_concurrent_children=1", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr and "Traceback" not in out.stderr
    broken, fine = tool_result(scripted.requests[3])["results"]
    assert broken["status"] == "failed" and "bad tool schema" in broken["error"]
    assert (fine["status"], fine["summary"]) == ("completed", "worked")
    assert out.stdout == "one failed\n"


def test_iteration_limit_and_toolset_intersection(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add(delegate({"goal": "loop forever", "toolsets": ["terminal", "file", "delegation"]}),
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo step"}}]},
                 {"content": "finished"})
    out = run_hermes("chat", "-q", "go", "-t", "terminal,delegation", "-C", "delegation.max_iterations=1",
                     home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    assert tools_of(scripted.requests[1]) == {"terminal"}  # file not the parent's, delegation blocked
    row = tool_result(scripted.requests[2])["results"][0]
    assert (row["status"], row["api_calls"], row["tool_calls"]) == ("max_iterations", 1, 1)


def test_bad_arguments_come_back_as_errors_the_model_can_fix(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "delegate_task", "arguments": {"context": "no goal"}}]},
                 {"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "x", "toolsets": ["delegation"]}}]},
                 {"content": "gave up"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, input="")
    assert out.returncode == 0, out.stderr
    assert "give a goal" in tool_result(scripted.requests[1])["error"]
    assert "leave the subagent no tools" in tool_result(scripted.requests[2])["error"]
    assert len(scripted.requests) == 3  # no subagent was started


def test_parent_interrupt_stops_running_children(scripted, hermes_home):
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.config.loader import load_settings

    model_config(hermes_home, scripted.url)
    scripted.add(delegate({"goal": "slow one"}, {"goal": "slow two"}),
                 {"content": "late", "delay": 8}, {"content": "late", "delay": 8})
    agent = build_agent(load_settings(), platform="cli")
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(agent.run_turn("go")))
    worker.start()
    deadline = time.monotonic() + 5
    while len(scripted.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    stopped = time.monotonic()
    agent.interrupt()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - stopped < 3
    assert outcome[0].reason == "interrupted"
    rows = json.loads(next(m.content for m in agent.history if m.role == "tool"))["results"]
    assert [r["status"] for r in rows] == ["interrupted", "interrupted"]
    agent.close()


def test_a_child_past_its_timeout_is_stopped_and_named_while_the_other_reports(scripted, hermes_home):
    model_config(hermes_home, scripted.url)

    def answer(body: dict) -> dict:
        msgs = body["messages"]
        first = next(m["content"] for m in msgs if m["role"] == "user")
        if first.startswith("GOAL-FAST"):
            return {"content": "fast done"}
        if first.startswith("GOAL-SLOW"):
            if msgs[-1]["role"] == "tool":
                return {"content": "slow finished after all"}
            return {"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 60", "timeout": 120}}]}
        if msgs[-1]["role"] == "tool":
            return {"content": "PARENT " + msgs[-1]["content"]}
        return delegate({"goal": "GOAL-FAST say hi"}, {"goal": "GOAL-SLOW wait a minute", "toolsets": ["terminal"]})

    scripted.default = answer
    t0 = time.monotonic()
    out = run_hermes("chat", "-q", "go", "-C", "delegation.child_timeout_seconds=2", home=hermes_home, input="",
                     timeout=90)
    took = time.monotonic() - t0
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout.split("PARENT ", 1)[1])["results"]
    assert rows[0]["status"] == "completed" and rows[0]["summary"] == "fast done"
    assert rows[1]["status"] == "timeout" and "no result within 2s" in rows[1]["error"]
    assert took < 30, took  # the 60 s command did not hold the parent
    assert "[2] timeout: GOAL-SLOW" in out.stderr


def test_delegation_model_and_base_url_put_children_on_their_own_model(scripted, hermes_home):
    """Hermes's delegation.model / delegation.base_url: subagents on a cheaper model and endpoint."""
    from hermes_agent.providers.scripted import ScriptedServer

    with ScriptedServer(default={"content": "child answer from the cheap model"}) as cheap:
        model_config(hermes_home, scripted.url, f"delegation:\n  model: cheap-child\n  base_url: {cheap.url}\n")
        scripted.add(delegate({"goal": "Summarise x"}), {"content": "parent done"})
        res = run_hermes("chat", "-q", "go", home=hermes_home, timeout=90)
        assert res.returncode == 0, res.stdout + res.stderr
        assert [r["body"]["model"] for r in cheap.requests] == ["cheap-child"]
    assert [r["body"]["model"] for r in scripted.requests] == ["scripted-model", "scripted-model"]
    assert tool_result(scripted.requests[1])["results"][0]["summary"] == "child answer from the cheap model"
