"""tools.results.failure: the first line of why a call failed, from each result shape tools return."""

from __future__ import annotations

import json

import pytest

from hermes_agent.tools.results import failure, tool_error


@pytest.mark.parametrize(("result", "why"), [
    (tool_error("Blocked: BLOCKED: `rm -rf /` was not run\nTell the user."), "Blocked: BLOCKED: `rm -rf /` was not run"),
    (json.dumps({"success": False, "error": "No page is open."}), "No page is open."),
    (json.dumps({"success": False}), "failed"),
    (json.dumps({"status": "error", "output": "Traceback ...", "exit_code": 1}), "failed"),
    (json.dumps({"results": [{"url": "http://127.0.0.1/", "error": "Blocked: 127.0.0.1 is a loopback address"}]}),
     "Blocked: 127.0.0.1 is a loopback address"),
    (json.dumps({"results": [{"url": "a", "error": "x"}, {"url": "b", "content": "ok"}]}), ""),
    (json.dumps({"output": "", "exit_code": 1}), ""),  # a command that failed is the command's answer, not the tool's
    (json.dumps({"success": True, "data": {}}), ""),
    ("plain text", ""),
    (tool_error("x" * 500), "x" * 119 + "…"),
])
def test_failure_reason(result: str, why: str) -> None:
    assert failure(result) == why
