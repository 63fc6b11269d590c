"""The clarify tool through the real registry: answers via ctx.clarify, clear errors without a user."""

from __future__ import annotations

import json

from hermes_agent.config.settings import Settings
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import discover_builtin_tools, registry


def call(args: dict, clarify=None) -> dict:
    discover_builtin_tools()
    ctx = ToolContext(settings=Settings(), clarify=clarify)
    return json.loads(registry.dispatch("clarify", args, ctx=ctx, task_id="t"))


def test_answer_comes_back_with_the_question():
    seen = []

    def ask(question, choices):
        seen.append((question, choices))
        return "blue"

    out = call({"question": "Which colour?", "choices": ["red", " blue ", ""]}, ask)
    assert out == {"question": "Which colour?", "answer": "blue"}
    assert seen == [("Which colour?", ["red", "blue"])]


def test_open_question_passes_no_choices():
    out = call({"question": "Name?"}, lambda q, c: f"got {len(c)} choices")
    assert out["answer"] == "got 0 choices"


def test_without_a_user_it_fails_at_once_with_guidance():
    out = call({"question": "Deploy now?"})
    assert "No user is available" in out["error"] and "assumption" in out["error"]


def test_no_answer_is_reported_not_invented():
    out = call({"question": "Which?"}, lambda q, c: "")
    assert out["answer"] is None and "no answer" in out["note"]


def test_bad_arguments_are_errors_the_model_can_fix():
    assert "question is required" in call({"question": "  "}, lambda q, c: "x")["error"]
    assert "at most 4 choices" in call({"question": "q", "choices": list("abcde")}, lambda q, c: "x")["error"]
    assert "list of strings" in call({"question": "q", "choices": "a,b"}, lambda q, c: "x")["error"]


def test_schema_is_small():
    discover_builtin_tools()
    size = len(json.dumps(registry.get("clarify").definition()["function"], separators=(",", ":")))
    assert size < 900  # the released Hermes sends 1911 bytes for this tool on every call
