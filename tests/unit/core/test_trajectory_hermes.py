"""Trajectories byte-compatible with the released Hermes: the same conversation converted by Hermes's
own converter (run in its venv) and by ours gives identical turns. Skipped only when the released
Hermes is not installed (.ci/install-hermes-ref.sh)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hermes_agent.core.trajectory import to_sharegpt
from hermes_agent.messages import Message, ToolCall
from tests.helpers import other_hermes_skip

HERMES_REF_BIN = Path(os.environ.get("HERMES_REF_BIN", "/work/hermes-ref/bin/hermes"))

TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run a command — ünïcode",
                                           "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "read_file", "description": "Read",
                                           "parameters": {"type": "object", "properties": {}}}}]

CONVERT = '''
import json, sys
from agent.agent_runtime_helpers import convert_to_trajectory_format
data = json.loads(sys.stdin.read())
agent = type("A", (), {"tools": data["tools"]})()
agent._format_tools_for_system_message = lambda: __import__("agent.system_prompt", fromlist=["x"]).format_tools_for_system_message(agent)
print(json.dumps(convert_to_trajectory_format(agent, data["messages"], data["query"], True), ensure_ascii=False))
'''


def _conversation() -> tuple[list[Message], list[dict]]:
    calls = (ToolCall("c1", "terminal", '{"command": "ls"}'), ToolCall("c2", "read_file", '{"path": "a"}'))
    ours = [Message("system", "our long system prompt"), Message("user", "list and read"),
            Message("assistant", "Let me look.", tool_calls=calls, reasoning="need files"),
            Message("tool", '{"output": "a\\nb", "exit_code": 0}', tool_call_id="c1", name="terminal"),
            Message("tool", "plain text result", tool_call_id="c2", name="read_file"),
            Message("assistant", "", tool_calls=(ToolCall("c3", "terminal", "not json"),)),
            Message("tool", "[1, 2]", tool_call_id="c3", name="terminal"),
            Message("assistant", "Done: a and b."), Message("user", "thanks"), Message("assistant", "You're welcome")]
    theirs = []
    for m in ours[1:]:
        d: dict = {"role": m.role, "content": m.content}
        if m.reasoning:
            d["reasoning"] = m.reasoning
        if m.tool_calls:
            d["tool_calls"] = [c.to_openai() for c in m.tool_calls]
        if m.tool_call_id:
            d["tool_call_id"] = m.tool_call_id
        theirs.append(d)
    return ours, theirs


@pytest.mark.skipif(bool(other_hermes_skip(HERMES_REF_BIN)),
                    reason=f"the released Hermes: {other_hermes_skip(HERMES_REF_BIN)}")
def test_our_trajectory_turns_equal_hermes_own_conversion(tmp_path):
    ours, theirs = _conversation()
    payload = json.dumps({"tools": TOOLS, "messages": theirs, "query": "list and read"})
    env = {"HERMES_HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    out = subprocess.run([str(HERMES_REF_BIN.with_name("python")), "-c", CONVERT], input=payload, text=True,
                         capture_output=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    hermes_turns = json.loads(out.stdout)
    mine = to_sharegpt(ours, TOOLS)
    assert json.dumps(mine, ensure_ascii=False) == json.dumps(hermes_turns, ensure_ascii=False)


def test_tool_responses_hold_objects_and_the_preamble_lists_tools():
    ours, _ = _conversation()
    turns = to_sharegpt(ours, TOOLS)
    assert turns[0]["value"].startswith("You are a function calling AI model.") and "<tools>\n[" in turns[0]["value"]
    first = json.loads(turns[3]["value"].split("\n</tool_response>")[0].removeprefix("<tool_response>\n"))
    assert first == {"tool_call_id": "c1", "name": "terminal", "content": {"output": "a\nb", "exit_code": 0}}
    assert "our long system prompt" not in json.dumps(turns)
