"""A 'context too long' answer from the endpoint is recovered from automatically: compress, retry, finish."""

from __future__ import annotations

import json

from hermes_agent import AIAgent
from tests.helpers import model_config, run_hermes


def _tool_pairs_intact(messages: list[dict]) -> bool:
    pending: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            if pending:
                return False
            pending = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            pending.discard(m["tool_call_id"])
    return not pending


def test_context_length_error_is_compressed_and_retried(scripted, hermes_home):
    model_config(hermes_home, scripted.url, "compression:\n  protect_first_n: 1\n  protect_last_n: 2\n")
    steps = [{"tool_calls": [{"id": f"c{i}", "name": "terminal", "arguments": {"command": f"seq 1 4000 # {i}"}}]}
             for i in range(6)]
    scripted.add(*steps, {"error": {"status": 400, "message": "This model's maximum context length is 8192 tokens"}},
                 {"content": "summary"}, {"content": "All done."})
    out = run_hermes("chat", "-q", "count a lot", "--yolo", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "All done.\n" and "compressed" in out.stderr
    too_long, retried = scripted.requests[6]["body"], scripted.requests[-1]["body"]
    assert len(json.dumps(retried)) < len(json.dumps(too_long)) / 2
    assert _tool_pairs_intact(retried["messages"]) and retried["messages"][1]["content"] == "count a lot"
    from hermes_agent.storage.store import SessionStore

    store = SessionStore(hermes_home / "state.db")
    child = store.latest_session()
    assert child.parent_session_id is not None and store.get_session(child.parent_session_id).end_reason == "compression"
    store.close()


def test_library_use_with_the_public_constructor(scripted):
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {}}]}, {"content": "library ok"})
    agent = AIAgent(model="lib-model", base_url=scripted.url, api_key="k", enabled_toolsets=["todo"],
                    quiet_mode=True)
    try:
        result = agent.run_conversation("hello")
    finally:
        agent.close()
    assert result["final_response"] == "library ok" and result["completed"]
    assert scripted.requests[0]["body"]["model"] == "lib-model"
    assert [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]] == ["todo"]
