"""`a2a_discover` and `a2a_call` through the real `hermes chat -q` (scripted model) against a sample agent
built with a2a-sdk's own server classes (DefaultRequestHandler, its Starlette JSON-RPC and card routes) on
loopback, behind a bearer token: the card shown, a streamed task completed with its artifacts, the reply
marked untrusted; an unconfigured agent and a card pointing to another host are refused."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from tests.helpers import model_config, run_hermes

pytest.importorskip("a2a")
pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
TOKEN = "sample-token-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sample_app(base: str, interface_url: str):
    """The SDK's minimal server: an executor that answers 'echo: <text>' in two streamed artifact pieces."""
    from a2a.helpers import get_message_text, new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.responses import JSONResponse

    class Echo(AgentExecutor):
        async def execute(self, context, event_queue):
            task = context.current_task or new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            text = get_message_text(context.message)
            await updater.add_artifact([new_text_part("echo: ")], artifact_id="a1", name="echo")
            await updater.add_artifact([new_text_part(text)], artifact_id="a1", append=True, last_chunk=True)
            await updater.complete()

        async def cancel(self, context, event_queue):
            raise NotImplementedError

    card = AgentCard(name="Echo", version="0.1", description="Echoes what it is told",
                     supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=interface_url,
                                                          protocol_version="1.0")],
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"],
                     skills=[AgentSkill(id="echo", name="Echo", description="Repeats the message", tags=["echo"])])
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card)

    async def bearer(request, call_next):
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)

    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/rpc")])
    app.add_middleware(BaseHTTPMiddleware, dispatch=bearer)
    return app


@pytest.fixture
def sample_agent():
    """Yields a function starting a sample agent (its card's interface URL given) and returning its base URL."""
    servers = []

    def start(interface_url: str | None = None) -> str:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(_sample_app(base, interface_url or base + "/rpc"), host="127.0.0.1", port=port,
                                log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        return base

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


def _tool_result(body: dict) -> str:
    tools = [m for m in body["messages"] if m.get("role") == "tool"]
    return str(tools[-1]["content"]) if tools else "no tool result"


def _chat(home, scripted, call: dict, url: str) -> tuple[dict, str]:
    model_config(home, scripted.url, f"a2a:\n  agents:\n    echo:\n      url: {url}\n      token_env: ECHO_TOKEN\n")
    seen: list[str] = []

    def answer(body: dict) -> dict:
        seen.append(_tool_result(body))
        return {"content": "done"}

    scripted.add({"tool_calls": [call]}, answer)
    res = run_hermes("chat", "-q", "go", "-t", "a2a", home=home, env={"ECHO_TOKEN": TOKEN}, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(seen[0]), res.stdout


def test_a2a_call_completes_a_task_on_the_sdk_sample_server(sample_agent, scripted, hermes_home):
    url = sample_agent()
    result, _ = _chat(hermes_home, scripted, {"name": "a2a_call", "arguments": {"agent": "echo",
                                                                                "message": "ping pong"}}, url)
    assert result["state"] == "TASK_STATE_COMPLETED" and result["task_id"] and result["context_id"]
    assert "untrusted reply from agent echo" in result["answer"] and "\necho: ping pong\n" in result["answer"]
    assert [a["name"] for a in result["artifacts"]] == ["echo"] and "echo: ping pong" in result["artifacts"][0]["text"]


def test_a2a_discover_shows_the_card(sample_agent, scripted, hermes_home):
    url = sample_agent()
    result, _ = _chat(hermes_home, scripted, {"name": "a2a_discover", "arguments": {"agent": "echo"}}, url)
    card = json.loads(result["card"].split("\n")[1])
    assert card["name"] == "Echo" and card["streaming"] is True and card["skills"][0]["id"] == "echo"


def test_only_configured_agents_and_their_own_origin(sample_agent, scripted, hermes_home):
    url = sample_agent()
    result, _ = _chat(hermes_home, scripted, {"name": "a2a_call", "arguments": {"agent": "other",
                                                                                "message": "hi"}}, url)
    assert "no agent 'other' under a2a.agents" in result["error"] and "echo" in result["error"]
    elsewhere = sample_agent(interface_url="http://169.254.169.254/rpc")  # a card sending us to another host
    result, _ = _chat(hermes_home, scripted, {"name": "a2a_call", "arguments": {"agent": "echo",
                                                                                "message": "hi"}}, elsewhere)
    assert "another origin than the configured URL: refused" in result["error"]
