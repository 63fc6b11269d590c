"""POST /v1/responses (OpenAI's Responses API, text in and out) with `previous_response_id` continuity:
each response id remembers its conversation and the history after it, so continuing from an older
response forks a new conversation instead of mixing two branches. Ids are also written to the pool's
ApiIndex, so a `previous_response_id` from before a restart continues (or forks) from state.db."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web

from hermes_agent.api.common import SESSION_HEADER, error
from hermes_agent.api.conversations import Conversation, ConversationPool, TurnResult
from hermes_agent.api.persist import ApiIndex
from hermes_agent.errors import HermesError
from hermes_agent.events import Event, TextDelta
from hermes_agent.messages import safe_loads

if TYPE_CHECKING:
    from hermes_agent.config.team import Person


@dataclass(frozen=True, slots=True)
class Stored:
    """What a response id points at."""

    conv_key: str
    history: tuple[dict, ...]


class ResponseIndex:
    """response id -> Stored (the newest `limit` kept); conversation key -> its latest response id."""

    def __init__(self, limit: int = 2048, store: ApiIndex | None = None) -> None:
        self.limit = limit
        self.store = store
        self.by_id: OrderedDict[str, Stored] = OrderedDict()
        self.latest: dict[str, str] = {}

    def add(self, rid: str, result: TurnResult) -> None:
        self.by_id[rid] = Stored(result.session_id, result.history)
        self.latest[result.session_id] = rid
        if self.store is not None:
            self.store.add_response(rid, result.session_id, len(result.history))
        while len(self.by_id) > self.limit:
            self.by_id.popitem(last=False)


def _text_of(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _inputs(body: dict) -> tuple[str, list[dict]] | str:
    """(the last user text, earlier input items as chat messages) or an error text."""
    raw = body.get("input")
    if isinstance(raw, str):
        items: list[dict] = [{"role": "user", "content": raw}]
    elif isinstance(raw, list) and raw:
        items = [{"role": i.get("role", "user"), "content": _text_of(i.get("content"))} for i in raw if isinstance(i, dict)]
    else:
        return "Missing or invalid 'input' field"
    if not items or items[-1]["role"] != "user":
        return "The last input item must be a user message"
    return items[-1]["content"], items[:-1]


def _response(rid: str, model: str, result: TurnResult, previous: str | None) -> dict:
    message = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": result.text, "annotations": []}]}
    return {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed", "model": model,
            "output": [message], "previous_response_id": previous, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "usage": {"input_tokens": result.prompt_tokens, "output_tokens": result.completion_tokens,
                                   "total_tokens": result.prompt_tokens + result.completion_tokens}}


async def _conversation(pool: ConversationPool, index: ResponseIndex, previous: str | None,
                        earlier: list[dict], instructions: str | None,
                        person: Person | None = None) -> tuple[Conversation, list[dict]] | str:
    """(conversation, history to seed it with); a team member reaches only responses of their own."""
    if not previous:
        system = [{"role": "system", "content": instructions}] if instructions else []
        return await pool.get(None, person), system + earlier
    stored = index.by_id.get(previous)
    if stored is None:
        return await _from_before(pool, index, previous, person)
    if not pool.owns(stored.conv_key, person):
        return f"Previous response with id '{previous}' not found"
    if index.latest.get(stored.conv_key) == previous:
        return await pool.get(stored.conv_key, person), []
    return await pool.get(None, person), list(stored.history)  # a fork from an older response


async def _from_before(pool: ConversationPool, index: ResponseIndex, previous: str,
                       person: Person | None = None) -> tuple[Conversation, list[dict]] | str:
    """A response id this process did not make (a restart, or forgotten): its conversation from state.db."""
    found = index.store.response(previous) if index.store is not None else None
    if found is None or not pool.owns(found[0], person):
        return f"Previous response with id '{previous}' not found"
    key, count = found
    if index.store is not None and index.store.latest_of(key) == previous:
        return await pool.get(key, person), []
    return await pool.get(None, person), await pool.history_of(key, count)


async def handle(request: web.Request) -> web.StreamResponse:
    """POST /v1/responses (an internal failure is an OpenAI-style 500)."""
    try:
        return await _handle(request)
    except HermesError as exc:
        return error(500, str(exc), "server_error")


async def _handle(request: web.Request) -> web.StreamResponse:
    try:
        body = await request.json(loads=safe_loads)
    except ValueError:
        return error(400, "Request body is not valid JSON")
    parsed = _inputs(body if isinstance(body, dict) else {})
    if isinstance(parsed, str):
        return error(400, parsed)
    message, earlier = parsed
    pool: ConversationPool = request.app["pool"]
    index: ResponseIndex = request.app["responses"]
    previous = body.get("previous_response_id")
    found = await _conversation(pool, index, previous, earlier, body.get("instructions"), request.get("person"))
    if isinstance(found, str):
        return error(404, found)
    conv, history = found
    rid, model = f"resp_{uuid.uuid4().hex}", str(body.get("model") or request.app["config"].model_name)
    if body.get("stream"):
        return await _stream(request, pool, index, conv, message, history, rid, model, previous)
    result = await pool.run(conv, message, history, None, snapshot=True)
    index.add(rid, result)
    return web.json_response(_response(rid, model, result, previous), headers={SESSION_HEADER: result.session_id})


def _event(kind: str, seq: int, **fields: object) -> bytes:
    payload = json.dumps({"type": kind, "sequence_number": seq, **fields}, ensure_ascii=False)
    return f"event: {kind}\ndata: {payload}\n\n".encode()


async def _stream(request: web.Request, pool: ConversationPool, index: ResponseIndex, conv: Conversation, message: str,  # noqa: PLR0913
                  history: list[dict], rid: str, model: str, previous: str | None) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def sink(event: Event) -> None:
        if isinstance(event, TextDelta):
            loop.call_soon_threadsafe(queue.put_nowait, event.text)

    pending = {"id": rid, "object": "response", "status": "in_progress", "model": model, "output": [],
               "created_at": int(time.time()), "previous_response_id": previous, "tools": [],
               "parallel_tool_calls": True, "tool_choice": "auto"}
    mid = f"msg_{uuid.uuid4().hex[:24]}"
    item = {"type": "message", "id": mid, "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    at = {"item_id": mid, "output_index": 0, "content_index": 0}
    opening: tuple[tuple[str, dict[str, object]], ...] = (
        ("response.created", {"response": pending}), ("response.output_item.added", {"output_index": 0, "item": item}),
        ("response.content_part.added", {**at, "part": part}))
    for seq, (kind, fields) in enumerate(opening):
        await resp.write(_event(kind, seq, **fields))
    turn = asyncio.ensure_future(pool.run(conv, message, history, sink, snapshot=True))
    turn.add_done_callback(lambda _: queue.put_nowait(None))
    seq = 3
    try:
        while (delta := await queue.get()) is not None:
            await resp.write(_event("response.output_text.delta", seq, **at, delta=delta))
            seq += 1
        result = turn.result()
        index.add(rid, result)
        done = _response(rid, model, result, previous)
        done["output"][0]["id"] = mid
        await resp.write(_event("response.output_text.done", seq, **at, text=result.text))
        await resp.write(_event("response.content_part.done", seq + 1, **at, part={**part, "text": result.text}))
        await resp.write(_event("response.output_item.done", seq + 2, output_index=0, item=done["output"][0]))
        await resp.write(_event("response.completed", seq + 3, response=done))
    except (ConnectionResetError, asyncio.CancelledError):
        turn.cancel()  # the client went away: interrupt its turn
        raise
    return resp
