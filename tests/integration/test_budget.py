"""Spending caps (budget.*) through the real CLI: a model that keeps calling tools is stopped before the call that
would cross the session cap, history stays well-formed, and the session resumes once the cap is raised."""

from __future__ import annotations

import json
import re
import sqlite3

from tests.helpers import model_config, run_hermes

# $10 per 1M tokens in and out: a call of 1000 + 100 tokens costs $0.011.
PRICED = ("  max_tokens: 100\n  pricing: {input: 10, output: 10}\n")


def TOOL_STEP(body: dict) -> dict:  # noqa: N802 - a scripted step: a model that never stops calling tools
    n = len(body["messages"])  # new arguments each time, so the repeated-call guard never steps in
    return {"tool_calls": [{"name": "todo", "arguments": {"todos": [{"id": str(n), "content": "x", "status": "pending"}]}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}


def _config(hermes_home, url, budget: str = "budget:\n  session_usd: 0.05\n") -> None:
    path = model_config(hermes_home, url, budget)
    text = path.read_text().replace("  api_key: test-key\n", "  api_key: test-key\n" + PRICED, 1)
    path.write_text(text)


def _spend(hermes_home) -> list[tuple]:
    with sqlite3.connect(hermes_home / "state.db") as c:
        return c.execute("SELECT session_id, who, task, input_tokens, output_tokens, cost_usd "
                         "FROM hermes_agent_spend ORDER BY id").fetchall()


def within_one_call(stop: str, hermes_home, cap: float) -> float:
    """The stop line's figures agree with the ledger: spent <= cap < spent + the refused call's price."""
    m = re.search(r"spent \$([0-9.]+) this session, the next model call could cost up to \$([0-9]+\.[0-9]+)", stop)
    assert m, stop
    spent, refused = float(m.group(1)), float(m.group(2))
    booked = sum(r[5] for r in _spend(hermes_home))
    assert abs(booked - spent) < 1e-4 and booked <= cap < booked + refused, (booked, refused, stop)
    return booked


def test_session_cap_stops_a_tool_loop_and_resumes_when_raised(scripted, hermes_home):
    _config(hermes_home, scripted.url)
    scripted.default = TOOL_STEP  # the model never stops calling tools
    out = run_hermes("chat", "-q", "go", "-t", "todo", home=hermes_home, timeout=120)
    assert out.stdout.startswith("Budget reached: session cap $0.0500 (budget.session_usd)"), out.stdout
    assert "-C budget.session_usd=" in out.stdout and out.returncode == 3
    assert (out.stdout + out.stderr).count("Budget reached") == 1, out.stderr  # the stop line once, as the answer
    within_one_call(out.stdout, hermes_home, 0.05)
    calls = len(scripted.requests)
    rows = _spend(hermes_home)
    assert len(rows) == calls == 4  # 4 x $0.011 = $0.044 booked; a fifth could cost more than what is left
    insights = run_hermes("insights", home=hermes_home).stdout
    assert "Spending caps" in insights and re.search(r"owner\s+budget\.session_usd\s+\$0\.0440 of \$0\.0500 \(88%\)",
                                                     insights), insights
    last = scripted.requests[-1]["body"]["messages"]
    # the stored history ends on tool results: every tool call answered, so it resumes cleanly
    sid = rows[0][0]
    scripted.default = {"content": "finished", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
    again = run_hermes("chat", "-q", "carry on", "-r", sid, "-t", "todo", "-C", "budget.session_usd=1",
                       home=hermes_home, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "finished" in again.stdout
    resumed = scripted.requests[-1]["body"]["messages"]
    assert len(resumed) > len(last)
    ids = {tc["id"] for m in resumed if m["role"] == "assistant" for tc in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in resumed if m["role"] == "tool"}
    assert ids == answered
    assert json.dumps(resumed).count("carry on") == 1


def test_subagent_calls_spend_the_parents_session_budget(scripted, hermes_home):
    _config(hermes_home, scripted.url, "budget:\n  session_usd: 0.08\n")
    scripted.add({"tool_calls": [{"name": "delegate_task", "arguments": {"goal": "loop", "toolsets": ["todo"]}}],
                  "usage": {"prompt_tokens": 1000, "completion_tokens": 100}})
    scripted.default = TOOL_STEP  # the child never stops calling tools either
    out = run_hermes("chat", "-q", "delegate it", "-t", "todo,delegation", home=hermes_home, timeout=180)
    assert out.stdout.startswith("Budget reached: session cap $0.0800"), out.stdout + out.stderr
    rows = _spend(hermes_home)
    assert {r[0] for r in rows} == {rows[0][0]}  # every call booked to the parent's session
    assert [r[2] for r in rows].count("main") == 1 and [r[2] for r in rows].count("subagent") >= 3
    within_one_call(out.stdout, hermes_home, 0.08)
    assert len(rows) == len(scripted.requests)


def test_auxiliary_calls_are_counted_and_an_unpriced_model_counts_tokens(scripted, hermes_home):
    _config(hermes_home, scripted.url, "budget:\n  session_usd: 1\n  session_tokens: 100000\nsessions:\n"
                                       "  title_mode: llm\nauxiliary:\n  title_generation:\n    model: title-model\n")
    scripted.add({"content": "the answer", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}},
                 {"content": "A Short Title", "usage": {"prompt_tokens": 300, "completion_tokens": 20}})
    out = run_hermes("chat", "-q", "question", "-t", "todo", home=hermes_home, timeout=120)
    assert out.returncode == 0 and out.stdout == "the answer\n", out.stdout + out.stderr
    rows = _spend(hermes_home)
    assert [(r[2], r[3], r[4], r[5]) for r in rows] == [("main", 1000, 100, 0.011),
                                                        ("aux:title_generation", 300, 20, None)]
    assert "title-model has no price" in out.stderr and "counting its tokens only" in out.stderr


def test_mixture_of_agents_references_are_booked(scripted, hermes_home):
    from tests.integration.test_moa import MOA, _answer

    _config(hermes_home, scripted.url, "budget:\n  session_tokens: 1000000\n" + MOA.format(url=scripted.url))
    scripted.default = _answer
    res = run_hermes("chat", "-q", "hard question", "-t", "moa", home=hermes_home, timeout=90)
    assert res.returncode == 0, res.stdout + res.stderr
    assert {r[2] for r in _spend(hermes_home)} == {"main", "moa"}
    models = {row[0] for row in sqlite3.connect(hermes_home / "state.db").execute(
        "SELECT model FROM hermes_agent_spend WHERE task = 'moa'")}
    assert {"ref-a", "ref-b", "agg"} <= models and "ref-broken" not in models  # a failed call costs nothing



def _with_fallback(hermes_home, primary_url: str, fallback_url: str, budget: str) -> None:
    """The primary (a custom endpoint at $1 per 1M) fails; the fallback row has its own price ($100 per 1M)."""
    _config(hermes_home, primary_url, budget + "fallback_providers:\n  - provider: custom\n    model: fb-model\n"
                                               f"    base_url: {fallback_url}\n    api_key: k\n"
                                               "    pricing: {input: 100, output: 100}\n")
    path = hermes_home / "config.yaml"
    path.write_text(path.read_text().replace("pricing: {input: 10, output: 10}", "pricing: {input: 1, output: 1}"))


def test_a_call_the_fallback_answers_is_priced_as_the_fallback(scripted, hermes_home):
    from hermes_agent.providers.scripted import ScriptedServer

    with ScriptedServer() as fallback:
        scripted.default = {"error": {"status": 500, "message": "down"}}
        fallback.default = {"content": "from the fallback", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
        _with_fallback(hermes_home, scripted.url, fallback.url, "budget:\n  session_usd: 5\n")
        out = run_hermes("chat", "-q", "hi", "-t", "todo", home=hermes_home, timeout=120)
        assert out.returncode == 0 and out.stdout == "from the fallback\n", out.stdout + out.stderr
        assert "falling back to custom/fb-model" in out.stderr
    # booked at the fallback's $100 per 1M (1100 tokens = $0.11), not the primary's $1 ($0.0011)
    assert [(r[2], r[5]) for r in _spend(hermes_home)] == [("main", 0.11)]
    sid = _spend(hermes_home)[0][0]
    show = run_hermes("sessions", "show", sid, home=hermes_home).stdout
    assert f"Session {sid}  (cli, fb-model)" in show and "Cost: $0.1100" in show, show


def test_the_cap_check_prices_the_fallback_before_it_is_called(scripted, hermes_home):
    from hermes_agent.providers.scripted import ScriptedServer

    with ScriptedServer() as fallback:
        scripted.default = {"error": {"status": 500, "message": "down"}}
        fallback.default = {"content": "from the fallback", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
        # 100 output tokens alone cost $0.0001 at the primary's price, $0.01 at the fallback's: over a $0.01 cap
        _with_fallback(hermes_home, scripted.url, fallback.url, "budget:\n  session_usd: 0.01\n")
        out = run_hermes("chat", "-q", "hi", "-t", "todo", home=hermes_home, timeout=120)
        assert out.stdout.startswith("Budget reached: session cap $0.0100 (budget.session_usd); spent $0.0000"), \
            out.stdout + out.stderr
        assert len(scripted.requests) == 4 and fallback.requests == []  # the primary tried; the fallback never
    assert _spend(hermes_home) == []


def test_an_endpoint_that_reports_no_usage_cannot_lift_a_token_cap(scripted, hermes_home):
    """rt7 a07: usage 0 (or none: llama.cpp, proxies) let 41 calls pass a 30k-token cap. The meter counts at least
    its own estimate of each request and reply, and says once that it did."""
    def step(body: dict) -> dict:
        n = len(body["messages"])
        return {"tool_calls": [{"name": "todo", "arguments": {"todos": [{"id": str(n), "content": "x" * 4000,
                                                                         "status": "pending"}]}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0}}

    model_config(hermes_home, scripted.url, "budget:\n  session_tokens: 30000\n")
    scripted.default = step
    out = run_hermes("chat", "-q", "go", "-t", "todo", "--max-turns", "60", home=hermes_home, timeout=180)
    assert out.stdout.startswith("Budget reached: session cap 30,000 tokens (budget.session_tokens)"), \
        out.stdout + out.stderr[-800:]
    assert len(scripted.requests) < 12, len(scripted.requests)
    rows = _spend(hermes_home)
    assert len(rows) == len(scripted.requests) and sum(r[3] + r[4] for r in rows) <= 30000
    assert all(r[3] > 0 and r[4] > 900 for r in rows)  # the estimate, not the reported 0
    assert out.stderr.count("scripted-model reported 0 tokens for a call hermes estimates at") == 1, out.stderr
    assert "the caps count the estimate" in out.stderr
