"""The OpenAI-compatible HTTP surface (aiohttp): /v1/models, /v1/chat/completions (SSE and not),
/health; bearer-key auth; X-Hermes-Session-Id continuity. Agents and turns live in conversations.py."""

from __future__ import annotations

import asyncio
import hmac
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web

from hermes_agent.api import responses
from hermes_agent.api.common import SESSION_HEADER, USER_HEADER, error
from hermes_agent.api.conversations import Conversation, ConversationPool, TurnResult
from hermes_agent.config.listen import bind_refusal, host_allowed
from hermes_agent.errors import HermesError
from hermes_agent.events import Event, TextDelta, ToolStarted
from hermes_agent.messages import safe_loads

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiConfigError(ValueError):
    """The server refuses to start with this configuration (the message says why)."""


@dataclass(frozen=True, slots=True)
class ApiConfig:
    """API_SERVER_HOST / API_SERVER_PORT / API_SERVER_KEY / API_SERVER_MODEL_NAME."""

    host: str = "127.0.0.1"
    port: int = 8642
    key: str = ""
    model_name: str = "hermes-agent"
    cors_origins: tuple[str, ...] = ()  # browser origins allowed (API_SERVER_CORS_ORIGINS), only with a key

    @classmethod
    def from_env(cls, env: Mapping[str, str], extra: Mapping | None = None, *, host: str | None = None,
                 port: int | None = None) -> ApiConfig:
        """API_SERVER_HOST / _PORT / _KEY / _MODEL_NAME (flags first, then the environment, then
        `platforms.api_server.extra` host/port/key/model_name as Hermes writes them)."""
        extra = extra or {}
        return cls(host=host or env.get("API_SERVER_HOST") or str(extra.get("host") or "") or "127.0.0.1",
                   port=_port(port or env.get("API_SERVER_PORT") or extra.get("port") or 8642),
                   key=(env.get("API_SERVER_KEY") or str(extra.get("key") or "")).strip(),
                   model_name=env.get("API_SERVER_MODEL_NAME") or str(extra.get("model_name") or "") or "hermes-agent",
                   cors_origins=_origins(env.get("API_SERVER_CORS_ORIGINS") or extra.get("cors_origins") or ""))

    def check(self) -> None:
        """Refuse a non-loopback address without a key of at least 16 characters."""
        refusal = bind_refusal(self.host, self.key, "API_SERVER_KEY", "run the agent")
        if refusal:
            raise ApiConfigError(refusal)


def _port(value: object) -> int:
    """API_SERVER_PORT (or the flag, or platforms.api_server.extra.port) as a TCP port, else ApiConfigError."""
    try:
        port = int(str(value).strip())
    except ValueError:
        raise ApiConfigError(f"API_SERVER_PORT must be a port number, got {value!r}") from None
    if not 0 <= port <= 65535:
        raise ApiConfigError(f"API_SERVER_PORT {port} is out of range 0-65535")
    return port


def _origins(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list | tuple) else str(raw).split(",")
    return tuple(str(o).strip().rstrip("/") for o in items if str(o).strip())


def _cors_ok(request: web.Request) -> bool:
    """A browser origin the user listed in API_SERVER_CORS_ORIGINS, on a server with a key (the page must
    still send it: the key, not the origin, authorises)."""
    config = request.app["config"]
    return bool(config.key) and request.headers.get("Origin", "").rstrip("/") in config.cors_origins


async def _cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    if request.headers.get("Origin") and _cors_ok(request):
        response.headers["Access-Control-Allow-Origin"] = request.headers["Origin"]
        response.headers["Vary"] = "Origin"
        response.headers["Access-Control-Expose-Headers"] = "X-Hermes-Session-Id"


def _browser_refusal(request: web.Request, key: str) -> web.Response | None:
    """Browsers are refused (Hermes: browser origins only when configured, and none can be here): a page the
    user visits could otherwise post a turn to the local server (a text/plain POST needs no preflight), and
    without a key a DNS-rebound name must not reach it either."""
    if request.headers.get("Origin") and not _cors_ok(request):
        return error(403, "browser requests (with an Origin header) are not accepted unless the origin is in "
                     "API_SERVER_CORS_ORIGINS and API_SERVER_KEY is set", "permission_error")
    host = request.headers.get("Host")
    if not key and not host_allowed(host, request.app["config"].host):
        return error(403, f"unexpected Host {host!r} for a server without API_SERVER_KEY", "permission_error")
    return None


@web.middleware
async def _auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    key = request.app["config"].key
    refused = _browser_refusal(request, key)
    if refused is not None:
        return refused
    if not key and request.path != "/health":  # keyless: loopback only, and never a confined process
        why = await request.app["peers"].refusal(request.transport)
        if why:
            refusal = error(403, f"hermes api without API_SERVER_KEY refused this client: {why} (set API_SERVER_KEY "
                            "and give that client the key to allow it)", "permission_error")
            refusal.force_close()
            return refusal
    if request.method == "OPTIONS" and request.headers.get("Origin"):  # an allowed origin's preflight
        return web.Response(status=204, headers={
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": "Authorization, Content-Type, X-Hermes-Session-Id, X-Hermes-User",
            "Access-Control-Max-Age": "600"})
    user = request.headers.get(USER_HEADER, "").strip()
    if user and request.path != "/health":  # team mode: a person with their own key
        person = _person(request, user)
        if person is None:
            return error(401, f"Invalid or missing API key for {USER_HEADER}: {user[:64]}", "authentication_error")
        request["person"] = person
    elif key and request.path != "/health":
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {key}".encode()):
            return error(401, "Invalid or missing API key", "authentication_error")
    return await handler(request)


def _person(request: web.Request, user: str) -> object | None:
    """The team member `user` when the request carries their key (`team.api_keys.<user>`), else None."""
    from hermes_agent.config.team import Team

    team = request.app.get("team")
    if team is None:
        team = request.app["team"] = Team(request.app["pool"].settings)
    expected = str((team.api_keys or {}).get(user) or "")
    given = request.headers.get("Authorization", "")
    if not team.enabled or len(expected) < 16 or not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        return None
    return team.person("api", user)


async def _health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "platform": "hermes-agent"})


async def _models(request: web.Request) -> web.Response:
    name = request.app["config"].model_name
    return web.json_response({"object": "list", "data": [
        {"id": name, "object": "model", "created": int(time.time()), "owned_by": "hermes"}]})


def _split_messages(body: dict) -> tuple[str, list[dict]] | str:
    """(last user message, earlier messages) or an error text."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Missing or invalid 'messages' field"
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        return "The last message must be a user message"
    content = last.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or ""), [m for m in messages[:-1] if isinstance(m, dict)]


def _completion(result: TurnResult, model: str, cid: str) -> dict:
    finish = "stop" if result.reason in ("stop", "interrupted") else "length"
    return {"id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result.text},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                      "total_tokens": result.prompt_tokens + result.completion_tokens}}


async def _chat(request: web.Request) -> web.StreamResponse:
    try:
        body = await request.json(loads=safe_loads)
    except ValueError:
        return error(400, "Request body is not valid JSON")
    split = _split_messages(body if isinstance(body, dict) else {})
    if isinstance(split, str):
        return error(400, split)
    message, history = split
    try:
        return await _answer(request, body, message, history)
    except HermesError as exc:
        return error(500, str(exc), "server_error")


async def _answer(request: web.Request, body: dict, message: str, history: list[dict]) -> web.StreamResponse:
    pool: ConversationPool = request.app["pool"]
    key = request.headers.get(SESSION_HEADER, "").strip() or None
    conv = await pool.get(key, request.get("person"))
    model = str(body.get("model") or request.app["config"].model_name)
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    history = [] if key else history  # a continued session has its own history
    if body.get("stream"):
        return await _stream(request, pool, conv, message, history, model, cid)
    result = await pool.run(conv, message, history, None)
    return web.json_response(_completion(result, model, cid), headers={SESSION_HEADER: result.session_id})


def _chunk(cid: str, model: str, delta: dict, finish: str | None = None) -> bytes:
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


async def _stream(request: web.Request, pool: ConversationPool, conv: Conversation, message: str, history: list[dict],
                  model: str, cid: str) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                       SESSION_HEADER: conv.key})
    await resp.prepare(request)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    progress = bool(request.app["tool_progress"])

    def sink(event: Event) -> None:
        if isinstance(event, TextDelta):
            loop.call_soon_threadsafe(queue.put_nowait, _chunk(cid, model, {"content": event.text}))
        elif isinstance(event, ToolStarted) and progress:
            loop.call_soon_threadsafe(queue.put_nowait, f": tool {event.shown()}\n\n".encode())

    await resp.write(_chunk(cid, model, {"role": "assistant"}))
    turn = asyncio.ensure_future(pool.run(conv, message, history, sink))
    turn.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (item := await queue.get()) is not None:
            await resp.write(item)
        turn.result()
        await resp.write(_chunk(cid, model, {}, "stop"))
        await resp.write(b"data: [DONE]\n\n")
    except (ConnectionResetError, asyncio.CancelledError):
        turn.cancel()  # the client went away: interrupt its turn
        raise
    return resp


def build_app(pool: ConversationPool, config: ApiConfig, *, tool_progress: bool = True) -> web.Application:
    """The aiohttp application (routes, auth); the caller runs it and closes the pool."""
    app = web.Application(middlewares=[_auth], client_max_size=16 * 1024 * 1024)
    app.on_response_prepare.append(_cors_headers)
    from hermes_agent.terminal.sandbox.peer import PeerGuard

    app["pool"], app["config"], app["tool_progress"] = pool, config, tool_progress
    app["peers"] = PeerGuard()  # who is on the other end of a keyless request (terminal/sandbox/peer.py)
    app.router.add_get("/health", _health)
    app.router.add_get("/v1/models", _models)
    app.router.add_post("/v1/chat/completions", _chat)
    app["responses"] = responses.ResponseIndex(store=pool.index)
    app.router.add_post("/v1/responses", responses.handle)
    if pool.settings.cfg.a2a.enabled:
        from hermes_agent.api import a2a_server

        a2a_server.install(app, pool, f"http://{config.host}:{config.port}", config.model_name)
    return app


async def serve(pool: ConversationPool, config: ApiConfig, stop: asyncio.Event) -> None:
    """Listen until `stop` is set; a disconnecting client cancels its handler (and so its turn)."""
    config.check()
    await pool.warm()
    runner = web.AppRunner(build_app(pool, config), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    await site.start()
    print(f"hermes api: listening on http://{config.host}:{config.port}/v1", flush=True)
    evictor = asyncio.create_task(_evict_forever(pool))
    try:
        await stop.wait()
    finally:
        evictor.cancel()
        await runner.cleanup()
        pool.close()


async def _evict_forever(pool: ConversationPool) -> None:
    """Idle conversations leave memory (their sessions stay in state.db and come back on the next request)."""
    while True:
        await asyncio.sleep(min(60.0, max(pool.idle_seconds / 4, 0.25)))
        pool.evict_idle()
