"""Upstream Hermes's clarify `questions[]` and delegate/bridge shapes through the real dispatch path
(handle_function_call), answered by a real ToolContext."""

from __future__ import annotations

import json

from hermes_agent.config.settings import Settings
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.dispatch import handle_function_call
from hermes_agent.tools.registry import discover_builtin_tools


def _ask(args: dict, offered=None) -> tuple[dict, list]:
    discover_builtin_tools()
    seen = []

    def clarify(question, choices):
        seen.append((question, choices))
        return "durian"

    ctx = ToolContext(settings=Settings(), clarify=clarify)
    return json.loads(handle_function_call("clarify", json.dumps(args), "t", ctx=ctx, offered=offered)), seen


def test_one_upstream_question_is_asked_with_its_choices():
    out, seen = _ask({"questions": [{"question": "Which fruit?", "choices": ["durian", "mango"],
                                     "multi_select": False}]})
    assert out == {"question": "Which fruit?", "answer": "durian"}
    assert seen == [("Which fruit?", ["durian", "mango"])]


def test_several_upstream_questions_are_asked_together_with_their_options():
    out, seen = _ask({"questions": [{"question": "Which fruit?", "choices": ["durian", "mango"]},
                                    {"question": "How many?"}]})
    assert out["answer"] == "durian"
    assert seen == [("Please answer each question:\n1. Which fruit? (options: durian, mango)\n2. How many?", [])]


def test_a_tool_outside_the_offered_set_is_unknown_even_by_its_upstream_name():
    discover_builtin_tools()
    out = json.loads(handle_function_call("todo_list", "{}", "t", ctx=ToolContext(settings=Settings()),
                                          offered={"clarify"}))
    assert out["error"].startswith("Unknown tool: todo. Available tools: clarify")
