"""Team mode on `hermes api`: `X-Hermes-User` with that person's own key; their role's tools, their own
conversations, their tool calls attributed in state.db."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request

import pytest

from tests.helpers import model_config
from tests.integration.test_api_server import KEY, _free_port, _start_api
from tests.integration.test_gateway_team import _brain, _everything, _request_for, _tools

pytest.importorskip("aiohttp")
ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789ab"


def _post(url: str, text: str, user: str | None, key: str, session: str | None = None) -> tuple[int, str, str]:
    """(status, reply text or error, session id) of one chat completion."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if user:
        headers["X-Hermes-User"] = user
    if session:
        headers["X-Hermes-Session-Id"] = session
    body = json.dumps({"model": "x", "messages": [{"role": "user", "content": text}]}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url + "/chat/completions", body, headers), timeout=60) as r:
            data = json.loads(r.read())
            return r.status, data["choices"][0]["message"]["content"], r.headers.get("X-Hermes-Session-Id", "")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), ""


@pytest.fixture
def api(scripted, hermes_home, tmp_path):
    scripted.default = _brain
    model_config(hermes_home, scripted.url,
                 f"team:\n  people:\n    'api:alice': guest\n    'api:bob': member\n"
                 f"  workspace_root: {tmp_path / 'team'}\n  api_keys:\n    alice: {ALICE}\n    bob: {BOB}\n")
    port = _free_port()
    proc = _start_api(hermes_home, port)
    yield f"http://127.0.0.1:{port}/v1"
    proc.terminate()
    proc.wait(timeout=20)


def test_each_user_has_their_own_key_tools_and_conversations(api, scripted, hermes_home, tmp_path):
    assert _post(api, "hi", "alice", KEY)[0] == 401  # the server's key is not alice's
    assert _post(api, "hi", "alice", BOB)[0] == 401
    assert _post(api, "hi", "mallory", ALICE)[0] == 401
    marker = tmp_path / "alice-was-here"
    status, reply, _ = _post(api, f"run touch {marker}", "alice", ALICE)
    assert status == 200 and "Unknown tool: terminal" in reply and not marker.exists()
    assert "terminal" not in _tools(_request_for(scripted, f"run touch {marker}"))

    status, reply, bob_session = _post(api, "run echo bob-secret-word", "bob", BOB)
    assert status == 200 and "bob-secret-word" in reply
    status, reply, other = _post(api, "what did bob say", "alice", ALICE, session=bob_session)
    assert status == 200 and other != bob_session
    assert "bob-secret-word" not in _everything(_request_for(scripted, "what did bob say"))
    status, reply, same = _post(api, "bob again", "bob", BOB, session=bob_session)
    assert same == bob_session and "bob-secret-word" in _everything(_request_for(scripted, "bob again"))

    db = sqlite3.connect(hermes_home / "state.db")
    rows = db.execute("SELECT person, role, tool_name FROM hermes_agent_tool_people").fetchall()
    assert ("api:bob", "member", "terminal") in rows and not any(r[0] == "api:alice" for r in rows)


def test_a_guests_role_cap_stops_their_turns_only(scripted, hermes_home, tmp_path):
    """`api:alice` (guest) spends her own budget under her role's cap; bob (member, no cap) is not metered."""
    from tests.integration.test_budget import TOOL_STEP, _config, _spend, within_one_call

    _config(hermes_home, scripted.url,
            f"team:\n  people:\n    'api:alice': guest\n    'api:bob': member\n"
            f"  workspace_root: {tmp_path / 'team'}\n  api_keys:\n    alice: {ALICE}\n    bob: {BOB}\n"
            "  roles:\n    guest:\n      budget: {session_usd: 0.05}\nplatform_toolsets:\n  api_server: [todo]\n")
    scripted.default = TOOL_STEP
    port = _free_port()
    proc = _start_api(hermes_home, port)
    try:
        status, stop, _ = _post(f"http://127.0.0.1:{port}/v1", "go", "alice", ALICE)
        assert status == 200 and stop.startswith("Budget reached: session cap $0.0500"), stop
        assert "team.roles.guest.budget.session_usd" in stop, stop
        within_one_call(stop, hermes_home, 0.05)
        scripted.default = {"content": "bob's answer", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
        assert _post(f"http://127.0.0.1:{port}/v1", "hello", "bob", BOB)[:2] == (200, "bob's answer")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert {row[1] for row in _spend(hermes_home)} == {"api:alice"}
