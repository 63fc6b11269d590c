"""Hermes's shapes of the `process` and `terminal` calls through handle_function_call on the real local
backend: `session_id` for `id`, `submit` (data plus Enter), line-paged `log` with `limit`, and
notify_on_complete / watch_patterns accepted with a note saying how to follow the process instead."""

from __future__ import annotations

import json

import pytest

from hermes_agent.terminal.manager import BackendPool
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.dispatch import handle_function_call
from tests.unit.terminal.conftest import make_settings


@pytest.fixture
def hcall(tmp_path, work):
    pool = BackendPool(make_settings(tmp_path, work, terminal={"auto_source_bashrc": False}))
    ctx = ToolContext(settings=pool.settings, task_id="h", backend_factory=pool.get)

    def _call(name: str, **args) -> dict:
        return json.loads(handle_function_call(name, json.dumps(args), task_id="h", ctx=ctx))

    yield _call
    pool.close_all()


def test_process_with_session_id_submit_and_line_paged_log(hcall):
    start = hcall("terminal", command="while read line; do echo got $line; done", background=True,
                  notify_on_complete=True)
    sid = start["session_id"]
    assert sid == start["id"] and "process(action='wait')" in start["notify"]
    assert hcall("process", action="submit", session_id=sid, data="one")["session_id"] == sid
    hcall("process", action="submit", session_id=sid, data="two")
    hcall("process", action="close", session_id=sid)
    done = hcall("process", action="wait", session_id=sid, timeout=10)
    assert done["status"] == "exited" and done["session_id"] == sid
    tail = hcall("process", action="log", session_id=sid, limit=1)
    assert tail["output"] == "got two" and tail["total_lines"] == 2 and tail["showing"] == "1 lines"
    head = hcall("process", action="log", session_id=sid, offset=0, limit=5)
    assert head["output"] == "got one\ngot two"
    assert hcall("process", action="poll", session_id="proc_nope")["error"]


def test_foreground_terminal_ignores_hermes_notify_arguments(hcall):
    out = hcall("terminal", command="echo ok", notify_on_complete=False, watch_patterns=["x"], timeout=30)
    assert out["output"].strip() == "ok" and out["exit_code"] == 0 and "notify" not in out
