"""The A2A v0.3 dialect of POST /a2a, as clients built on a2a-sdk 0.3.x speak it: `message/send`,
`message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`, `tasks/pushNotificationConfig/set|get|list|
delete`, with v0.3 payloads (`kind` on messages, parts, tasks and events; states like "completed"), answered
in the same shapes. a2a-sdk's own v0.3 conversions (a2a.compat.v0_3) map each call onto the v1.0 request
handler, so both dialects share one set of tasks. A v0.3 method name with a v1.0 payload (what this server
accepted before) is served as the v1.0 call: `handle` returns None for it. `tasks/list` (no JSON-RPC method
in v0.3) takes ListTasks' parameters and answers with v0.3 tasks."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

METHODS = ("message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
           "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
           "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete")
# the error codes a v0.3 client knows; a newer one reaches it as an internal error
_V03_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, *range(-32007, -32000)})


def _model(method: str) -> Any:
    from a2a.compat.v0_3 import types as t

    return {"message/send": t.SendMessageRequest, "message/stream": t.SendStreamingMessageRequest,
            "tasks/get": t.GetTaskRequest, "tasks/cancel": t.CancelTaskRequest,
            "tasks/resubscribe": t.TaskResubscriptionRequest,
            "tasks/pushNotificationConfig/set": t.SetTaskPushNotificationConfigRequest,
            "tasks/pushNotificationConfig/get": t.GetTaskPushNotificationConfigRequest,
            "tasks/pushNotificationConfig/list": t.ListTaskPushNotificationConfigRequest,
            "tasks/pushNotificationConfig/delete": t.DeleteTaskPushNotificationConfigRequest}[method]


def error(rid: Any, exc: Exception) -> dict:
    """A JSON-RPC error body a v0.3 client understands."""
    from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

    if isinstance(exc, A2AError):
        code = JSON_RPC_ERROR_CODE_MAP.get(type(exc), -32603)
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code if code in _V03_CODES else -32603,
                                                       "message": exc.message}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": f"internal error: {type(exc).__name__}"}}


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value.model_dump(mode="json", by_alias=True, exclude_none=True) if value is not None else None


async def handle(request: web.Request, handler: Any, rid: Any, body: dict, ctx: Any) -> web.StreamResponse | None:
    """Serve one v0.3 call, or None when its payload is not v0.3 (the caller then serves it as v1.0)."""
    from a2a.compat.v0_3.request_handler import RequestHandler03
    from pydantic import ValidationError

    method = body["method"]
    try:
        call = _model(method).model_validate(body)
    except ValidationError:
        return None
    ctx.state["dialect"] = "0.3"
    v03 = RequestHandler03(handler)
    if method in ("message/stream", "tasks/resubscribe"):
        stream = (v03.on_message_send_stream(call, ctx) if method == "message/stream"
                  else v03.on_subscribe_to_task(call, ctx))
        return await _sse(request, rid, stream)
    try:
        result = await _call(v03, method, call, ctx)
    except Exception as exc:  # an SDK A2AError (task not found, ...): a JSON-RPC error
        return web.json_response(error(rid, exc))
    return web.json_response({"jsonrpc": "2.0", "id": rid, "result": _dump(result)})


async def _call(v03: Any, method: str, call: Any, ctx: Any) -> Any:
    name = {"message/send": "on_message_send", "tasks/get": "on_get_task", "tasks/cancel": "on_cancel_task",
            "tasks/pushNotificationConfig/set": "on_create_task_push_notification_config",
            "tasks/pushNotificationConfig/get": "on_get_task_push_notification_config",
            "tasks/pushNotificationConfig/list": "on_list_task_push_notification_configs",
            "tasks/pushNotificationConfig/delete": "on_delete_task_push_notification_config"}[method]
    return await getattr(v03, name)(call, ctx)


async def _sse(request: web.Request, rid: Any, stream: Any) -> web.StreamResponse:
    from a2a.utils.errors import A2AError

    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)
    try:
        async for item in stream:  # SendStreamingMessageSuccessResponse, its id the request's
            data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
            data["id"] = rid
            await resp.write(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
    except A2AError as exc:
        await resp.write(f"data: {json.dumps(error(rid, exc))}\n\n".encode())
    return resp


def list_tasks_result(response: Any) -> dict:
    """ListTasks' answer with its tasks in v0.3 shape (`tasks/list`)."""
    from a2a.compat.v0_3.conversions import to_compat_task

    out: dict[str, Any] = {"tasks": [_dump(to_compat_task(t)) for t in response.tasks],
                           "totalSize": response.total_size, "pageSize": response.page_size}
    if response.next_page_token:
        out["nextPageToken"] = response.next_page_token
    return out


def list_params(params: dict) -> dict:
    """tasks/list parameters in ListTasks' terms: a v0.3 state name ("completed") becomes v1.0's."""
    state = params.get("status")
    if isinstance(state, str) and state and not state.startswith("TASK_STATE_"):
        params = {**params, "status": "TASK_STATE_" + state.upper().replace("-", "_")}
    return params
