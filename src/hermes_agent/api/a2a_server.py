"""The agent over A2A v1.0 (JSON-RPC binding), served by the API server's aiohttp app when `a2a.enabled`:
the agent card at /.well-known/agent-card.json and on POST /a2a `SendMessage`, `SendStreamingMessage`,
`GetTask`, `ListTasks` (paged), `CancelTask`, `SubscribeToTask` and the push-notification config calls; the
v0.3 dialect (`message/send`, ... with v0.3 payloads) is a2a_v03.py's. Tasks and their lifecycle are the
`a2a-sdk` request handler's, kept in $HERMES_HOME/api_server/a2a_tasks.db (a2a_store.py: they outlive a
restart; a task cut off by one is failed with the reason), push notifications a2a_push.py's. Our executor runs
each message as a turn of the conversation `a2a-<context id>` in the API server's ConversationPool (so one
stored session per A2A context, resumed after a restart like any API conversation). Remote agents are
untrusted senders: their turns run with approvals denied and with persisting calls (memory, skills) refused.
Auth, Host and Origin rules are the API server's middleware's (server.py). a2a-sdk is imported here only."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from hermes_agent.events import Event, TextDelta
from hermes_agent.messages import safe_loads

if TYPE_CHECKING:
    from hermes_agent.api.conversations import ConversationPool

log = logging.getLogger(__name__)
CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/a2a"
RpcId = str | int | None
UNTRUSTED = "a message from another agent over A2A"
_ALIASES = {"message/send": "SendMessage", "message/stream": "SendStreamingMessage", "tasks/get": "GetTask",
            "tasks/cancel": "CancelTask", "tasks/resubscribe": "SubscribeToTask",
            "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
            "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
            "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
            "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig"}


def _card(base_url: str, name: str) -> Any:
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    skills = [AgentSkill(id="chat", name="Conversation", tags=["chat", "assistant"],
                         description="Answers questions and carries out tasks with its tools (a terminal in a "
                                     "sandbox, files, web); dangerous commands are refused for remote callers."),
              AgentSkill(id="research", name="Research", tags=["web", "search"],
                         description="Searches and reads the web and local files, and reports what it found.")]
    # one endpoint, two dialects: the 0.3 interface gives the card the fields a v0.3 client reads (url,
    # preferredTransport, protocolVersion)
    interfaces = [AgentInterface(protocol_binding="JSONRPC", url=base_url + RPC_PATH, protocol_version=version)
                  for version in ("1.0", "0.3")]
    return AgentCard(name=name, version="1.0", description="Hermes Agent, a personal AI agent with tools.",
                     supported_interfaces=interfaces,
                     capabilities=AgentCapabilities(streaming=True, push_notifications=True), skills=skills,
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"])


async def _pieces(queue: asyncio.Queue[str | None]) -> str | None:
    """The text streamed since the last update, joined (None once the turn is over and all was sent): each update
    stores the whole task again, so one per model delta made a long answer quadratic (100 KB took 46 s)."""
    first = await queue.get()
    if first is None:
        return None
    parts = [first]
    while not queue.empty():
        nxt = queue.get_nowait()
        if nxt is None:
            queue.put_nowait(None)  # the end: next time
            break
        parts.append(nxt)
    return "".join(parts)


def _executor(pool: ConversationPool) -> Any:
    from a2a.helpers import get_message_text, new_task_from_user_message, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types import Role

    class HermesExecutor(AgentExecutor):
        """One A2A message = one untrusted turn of the conversation of its context id."""

        async def execute(self, context: Any, event_queue: Any) -> None:
            task = context.current_task
            if task is None:
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            # team mode: the person who sent it (their role's tools, their own conversations), as on /v1
            person = context.call_context.state.get("person") if context.call_context else None
            conv = await pool.get(f"a2a-{task.context_id}", person)
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[str | None] = asyncio.Queue()
            artifact = uuid.uuid4().hex

            def sink(event: Event) -> None:
                if isinstance(event, TextDelta) and event.text:
                    loop.call_soon_threadsafe(queue.put_nowait, event.text)

            turn = asyncio.ensure_future(pool.run(conv, get_message_text(context.message), None, sink,
                                                  untrusted=UNTRUSTED))
            turn.add_done_callback(lambda _: loop.call_soon_threadsafe(queue.put_nowait, None))
            streamed = False
            while (chunk := await _pieces(queue)) is not None:
                await updater.add_artifact([new_text_part(chunk)], artifact_id=artifact, name="answer",
                                           append=streamed)
                streamed = True
            result = await turn
            # the whole answer as one part, replacing the streamed pieces (append=False), so a fetched task
            # holds it whole
            await updater.add_artifact([new_text_part(result.text or "")], artifact_id=artifact, name="answer",
                                       append=False, last_chunk=True)
            reply = new_text_message(result.text or "", role=Role.ROLE_AGENT, context_id=task.context_id,
                                     task_id=task.id)
            await updater.complete(reply)

        async def cancel(self, context: Any, event_queue: Any) -> None:
            task = context.current_task
            if task is not None:
                await TaskUpdater(event_queue, task.id, task.context_id).cancel()

    return HermesExecutor()


def install(app: web.Application, pool: ConversationPool, base_url: str, name: str) -> None:
    """Add the card and the JSON-RPC endpoint to the API server's app (behind its auth middleware)."""
    from a2a.server.request_handlers import DefaultRequestHandler

    from hermes_agent.api import a2a_push, a2a_store
    from hermes_agent.storage.a2a_tasks import A2aTaskFile

    card = _card(base_url, name)
    rules = a2a_store.caller_rules(pool.settings)  # a wrong entry stops the start with one line
    rows = A2aTaskFile(a2a_store.tasks_path(pool.settings.home))
    sender = a2a_push.push_sender(rows)
    app["a2a_card"] = card
    app["a2a_handler"] = DefaultRequestHandler(
        agent_executor=_executor(pool), task_store=a2a_store.task_store(rows), agent_card=card,
        push_config_store=a2a_store.push_store(rows), push_sender=sender, push_url_validator=a2a_push.url_validator)

    stop_pruning = threading.Event()

    async def recover(_: web.Application) -> None:  # tasks a stopped server was running: failed, and told so
        for _owner, task in a2a_store.recover(rows):
            await sender.send_notification(task.id, task)
        a2a_store.start_retention(rows.path, pool.settings, stop_pruning, rules)

    async def close(_: web.Application) -> None:
        stop_pruning.set()
        await app["a2a_handler"].aclose()
        rows.close()

    app.on_startup.append(recover)
    app.on_cleanup.append(close)
    app.router.add_get(CARD_PATH, _serve_card)
    app.router.add_post(RPC_PATH, _rpc)


async def _serve_card(request: web.Request) -> web.Response:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.types import AgentCard

    card = AgentCard()
    card.CopyFrom(request.app["a2a_card"])
    # the address the caller reached us at (its Host already passed the middleware's checks), not the bind
    # address (0.0.0.0 is no URL)
    for interface in card.supported_interfaces:
        interface.url = f"{request.scheme}://{request.host}{RPC_PATH}"
    return web.json_response(agent_card_to_dict(card))


def _rpc_error(rid: RpcId, code: int, message: str) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


async def _rpc(request: web.Request) -> web.StreamResponse:
    from hermes_agent.api import a2a_v03

    try:
        body = await request.json(loads=safe_loads)
    except ValueError:
        return _rpc_error(None, -32700, "request body is not valid JSON")
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
        return _rpc_error(None, -32600, "not a JSON-RPC 2.0 request")
    raw_id = body.get("id")
    rid: RpcId = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    raw_params = body.get("params")
    params: dict = raw_params if isinstance(raw_params, dict) else {}
    ctx = _context(request, body["method"])
    try:
        if body["method"] in a2a_v03.METHODS:
            served = await a2a_v03.handle(request, request.app["a2a_handler"], rid, body, ctx)
            if served is not None:
                return served
        if body["method"] == "tasks/list":
            listed = await _list_tasks(request, a2a_v03.list_params(params), ctx)
            return web.json_response({"jsonrpc": "2.0", "id": rid, "result": a2a_v03.list_tasks_result(listed)})
        method: str = _ALIASES.get(body["method"]) or body["method"]
        return await _dispatch(request, rid, method, params, ctx)
    except Exception as exc:  # an SDK A2AError (task not found, ...) or bad params: a JSON-RPC error
        return _error_of(rid, exc)


def _context(request: web.Request, method: str) -> Any:
    """The SDK's call context: in team mode the person is the owner of the tasks they create (others' task
    ids are not found for them); otherwise every caller with the key is the one owner ""."""
    from a2a.auth.user import User
    from a2a.server.context import ServerCallContext

    person = request.get("person")
    if person is None:
        return ServerCallContext(state={"method": method})

    class Member(User):
        is_authenticated = True
        user_name = str(getattr(person, "key", ""))

    return ServerCallContext(state={"method": method, "person": person}, user=Member())


def _error_of(rid: RpcId, exc: Exception) -> web.Response:
    from a2a.server.request_handlers import build_error_response
    from a2a.utils.errors import A2AError

    if isinstance(exc, A2AError):
        return web.json_response(build_error_response(rid, exc))
    if type(exc).__name__ == "ParseError":
        return _rpc_error(rid, -32602, f"invalid params: {exc}")
    log.exception("a2a request failed")
    return _rpc_error(rid, -32603, f"internal error: {type(exc).__name__}")


async def _list_tasks(request: web.Request, params: dict, ctx: Any) -> Any:
    from a2a.types import ListTasksRequest
    from google.protobuf.json_format import ParseDict

    return await request.app["a2a_handler"].on_list_tasks(ParseDict(params, ListTasksRequest(),
                                                                    ignore_unknown_fields=True), ctx)


def _unary() -> dict[str, tuple[Any, str]]:
    """v1.0 method -> (its request type, the handler's method)."""
    from a2a import types as t

    return {"GetTask": (t.GetTaskRequest, "on_get_task"), "CancelTask": (t.CancelTaskRequest, "on_cancel_task"),
            "CreateTaskPushNotificationConfig": (t.TaskPushNotificationConfig,
                                                 "on_create_task_push_notification_config"),
            "GetTaskPushNotificationConfig": (t.GetTaskPushNotificationConfigRequest,
                                              "on_get_task_push_notification_config"),
            "ListTaskPushNotificationConfigs": (t.ListTaskPushNotificationConfigsRequest,
                                                "on_list_task_push_notification_configs"),
            "DeleteTaskPushNotificationConfig": (t.DeleteTaskPushNotificationConfigRequest,
                                                 "on_delete_task_push_notification_config")}


async def _dispatch(request: web.Request, rid: RpcId, method: str, params: dict, ctx: Any) -> web.StreamResponse:
    from a2a.types import SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task
    from google.protobuf.json_format import MessageToDict, ParseDict

    handler = request.app["a2a_handler"]
    ok = lambda result: web.json_response({"jsonrpc": "2.0", "id": rid, "result": result})  # noqa: E731
    if method in ("SendStreamingMessage", "SubscribeToTask"):
        if method == "SubscribeToTask":
            stream = handler.on_subscribe_to_task(ParseDict(params, SubscribeToTaskRequest(),
                                                            ignore_unknown_fields=True), ctx)
        else:
            stream = handler.on_message_send_stream(ParseDict(params, SendMessageRequest(),
                                                              ignore_unknown_fields=True), ctx)
        return await _sse(request, rid, stream)
    if method == "SendMessage":
        got = await handler.on_message_send(ParseDict(params, SendMessageRequest(), ignore_unknown_fields=True), ctx)
        wrapped = SendMessageResponse(task=got) if isinstance(got, Task) else SendMessageResponse(message=got)
        return ok(MessageToDict(wrapped))
    if method == "ListTasks":
        listed = MessageToDict(await _list_tasks(request, params, ctx), always_print_fields_with_no_presence=True)
        if not params.get("includeArtifacts"):
            for task in listed["tasks"]:
                task.pop("artifacts", None)
        return ok(listed)
    if method not in _unary():
        return _rpc_error(rid, -32601, f"method {method!r} is not supported here")
    kind, call = _unary()[method]
    result = await getattr(handler, call)(ParseDict(params, kind(), ignore_unknown_fields=True), ctx)
    if method in ("GetTask", "CancelTask") and result is None:
        return _rpc_error(rid, -32001, "task not found")
    return ok(MessageToDict(result) if result is not None else None)


async def _sse(request: web.Request, rid: RpcId, stream: AsyncIterator[Any]) -> web.StreamResponse:
    from a2a.utils import proto_utils
    from a2a.utils.errors import A2AError
    from google.protobuf.json_format import MessageToDict

    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    try:
        async for event in stream:
            data = {"jsonrpc": "2.0", "id": rid, "result": MessageToDict(proto_utils.to_stream_response(event))}
            await resp.write(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
    except A2AError as exc:
        from a2a.server.request_handlers import build_error_response

        await resp.write(f"data: {json.dumps(build_error_response(rid, exc))}\n\n".encode())
    return resp
