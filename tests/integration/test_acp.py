"""`hermes acp` driven as an editor drives it: the ACP library's client side spawns the real process over stdio,
against the scripted model: initialize, new session, a prompt with streamed text and a tool call, a permission
request answered (allow and deny), cancel, and a session loaded again in a new process."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse  # noqa: E402

from tests.helpers import HERMES, model_config  # noqa: E402


class Editor:
    """The client half: records every session update and answers permission requests with `answer`."""

    def __init__(self, answer: str | None) -> None:
        self.updates: list = []
        self.permissions: list = []
        self.answer = answer

    async def session_update(self, session_id: str, update, **kw):  # type: ignore[no-untyped-def]
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call, options, **kw):  # type: ignore[no-untyped-def]
        self.permissions.append((tool_call, [o.option_id for o in options]))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def on_connect(self, conn) -> None:  # type: ignore[no-untyped-def]
        pass

    def text(self) -> str:
        return "".join(u.content.text for u in self.updates if getattr(u, "session_update", "") == "agent_message_chunk")

    def of(self, kind: str) -> list:
        return [u for u in self.updates if getattr(u, "session_update", "") == kind]


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    return env


async def _session(editor: Editor, home: Path, cwd: Path, body, load: str | None = None):  # type: ignore[no-untyped-def]
    async with acp.spawn_agent_process(editor, HERMES, "acp", env=_env(home), cwd=str(cwd)) as (conn, proc):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.agent_info.name == "hermes-agent" and init.agent_capabilities.load_session
        if load:
            await conn.load_session(cwd=str(cwd), session_id=load)
            sid = load
        else:
            sid = (await conn.new_session(cwd=str(cwd))).session_id
        return await body(conn, sid)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    d = tmp_path / "project"
    (d / "build").mkdir(parents=True)
    (d / "README.md").write_text("hello\n")
    return d


def test_prompt_streams_text_and_reports_a_tool_call_then_loads_again(scripted, hermes_home, project):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "ls"}}]},
                 {"content": "The project has a README and a build folder."})
    editor = Editor(answer="allow_once")

    async def body(conn, sid):  # type: ignore[no-untyped-def]
        return sid, await conn.prompt(session_id=sid, prompt=[acp.text_block("what is in this project?")])

    sid, resp = asyncio.run(_session(editor, hermes_home, project, body))
    assert resp.stop_reason == "end_turn"
    assert editor.text() == "The project has a README and a build folder."
    start = editor.of("tool_call")[0]
    assert start.kind == "execute" and "ls" in start.title and start.status == "in_progress"
    done = editor.of("tool_call_update")[-1]
    assert done.status == "completed" and "README.md" in done.content[0].content.text
    first = scripted.requests[0]["body"]
    assert first["messages"][-1]["content"] == "what is in this project?"
    assert "clarify" not in {t["function"]["name"] for t in first["tools"]}  # hermes-acp toolset
    again = Editor(answer=None)

    async def nothing(conn, sid):  # type: ignore[no-untyped-def]
        return None

    asyncio.run(_session(again, hermes_home, project, nothing, load=sid))
    replay = [u for u in again.updates if getattr(u, "session_update", "") == "user_message_chunk"]
    assert replay and replay[0].content.text == "what is in this project?"
    assert "build folder" in again.text()


@pytest.mark.parametrize("answer", ["allow_once", None])
def test_a_flagged_command_is_a_permission_request(scripted, hermes_home, project, answer):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {
        "command": f"rm -rf {project / 'build'}", "sandbox": False, "reason": "the sandbox hides the build cache"}}]},
        {"content": "done"})
    editor = Editor(answer=answer)

    async def body(conn, sid):  # type: ignore[no-untyped-def]
        return await conn.prompt(session_id=sid, prompt=[acp.text_block("clean up")])

    asyncio.run(_session(editor, hermes_home, project, body))
    assert len(editor.permissions) == 1
    call, options = editor.permissions[0]
    assert "rm -rf" in call.raw_input["command"] and "sandbox" in call.title and options == ["allow_once", "deny"]  # leaving the sandbox: this call only
    assert (project / "build").exists() == (answer is None)
    result = scripted.requests[1]["body"]["messages"][-1]["content"]
    assert ("denied" in result.lower() or "blocked" in result.lower()) == (answer is None)


def test_a_padded_command_names_its_dangerous_part_in_the_permission_title(scripted, hermes_home, project):
    """rt12 a43 in an editor: the request's title and text name the rm line, the padding is collapsed."""
    model_config(hermes_home, scripted.url)
    (project / "data").mkdir(exist_ok=True)
    command = f"rm -rf {project / 'data'}" + "\n" * 60 + "echo 'formatting the code'"
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
    editor = Editor(answer=None)

    async def body(conn, sid):  # type: ignore[no-untyped-def]
        return await conn.prompt(session_id=sid, prompt=[acp.text_block("clean up")])

    asyncio.run(_session(editor, hermes_home, project, body))
    call, _ = editor.permissions[0]
    assert f"dangerous part: rm -rf {project / 'data'}" in call.title, call.title
    shown = call.content[0].content.text
    assert "«59 blank lines»" in shown and len(shown.splitlines()) < 10, shown
    assert call.raw_input["command"] == command  # the exact command is still there for the editor
    assert (project / "data").exists()


def test_cancel_stops_the_running_prompt(scripted, hermes_home, project):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 30"}}]}, {"content": "late"})
    editor = Editor(answer="allow_once")

    async def body(conn, sid):  # type: ignore[no-untyped-def]
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[acp.text_block("wait")]))
        for _ in range(100):
            if editor.of("tool_call"):
                break
            await asyncio.sleep(0.1)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await conn.cancel(session_id=sid)
        resp = await asyncio.wait_for(task, 20)
        return resp, loop.time() - t0

    resp, took = asyncio.run(_session(editor, hermes_home, project, body))
    assert resp.stop_reason == "cancelled" and took < 10


def test_acp_reads_and_writes_regular_files_without_a_traceback(tmp_path, hermes_home):
    """`hermes acp < requests.jsonl > replies.jsonl` (a user trying it by hand): asyncio's pipe transports
    refuse regular files, so this used to end in a ValueError traceback."""
    import json
    import subprocess

    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": acp.PROTOCOL_VERSION}}) + "\n")
    replies = tmp_path / "replies.jsonl"
    with open(requests, "rb") as stdin, open(replies, "wb") as stdout:
        res = subprocess.run([HERMES, "acp"], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
                             env=_env(hermes_home), timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    answer = json.loads(replies.read_text().splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["agentInfo"]["name"] == "hermes-agent"
