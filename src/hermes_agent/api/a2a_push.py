"""A2A push notifications: the server POSTs a task's updates to the URL its client registered
(tasks/pushNotificationConfig/set, CreateTaskPushNotificationConfig, or the configuration of a sent message).
- URLs: http:// and https:// only (refused when set, with the reason); a host that resolves to a link-local,
  multicast, reserved or unspecified address (cloud metadata at 169.254.169.254, ...) is refused at delivery.
  Loopback and private addresses are allowed: the caller already passed the API server's key or peer check,
  and the user's own receivers live there.
- Redirects are never followed (a 3xx is a failed delivery): no hop to another host or scheme.
- Bounded retries: a connection error, a timeout, a 429 or a 5xx is tried again, 3 attempts in all, 0.5 s
  then 1 s apart, each attempt at most 5 s; a 4xx is final.
- Body: a v1.0 config gets the StreamResponse of the event (`{"task": ...}`, `{"statusUpdate": ...}`, ...); a
  config set in the v0.3 dialect gets the whole task in v0.3 shape, as a2a-sdk 0.3 servers send it. Pieces of
  a streamed answer (artifact updates before the last chunk) are not pushed; the whole answer follows them.
- The token goes in `X-A2A-Notification-Token`; `authentication` {scheme, credentials} in `Authorization`.
Deliveries of one task go out in order, off the task's event loop path (a slow receiver never stalls the
task)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import urllib.parse
from typing import Any

from hermes_agent.storage.a2a_tasks import A2aTaskFile

log = logging.getLogger(__name__)
ATTEMPTS = 3
BACKOFF_S = (0.5, 1.0)
TIMEOUT_S = 5.0


def url_problem(url: str) -> str:
    """Why `url` cannot receive push notifications ("" when it can, as far as its text says)."""
    try:
        parsed = urllib.parse.urlsplit(url)
        parsed.port  # noqa: B018 -- raises on a bad port
    except ValueError:
        return f"push notification URL {url!r} is not a valid URL"
    if parsed.scheme not in ("http", "https"):
        return f"push notification URL must be http:// or https://, not {parsed.scheme or 'no scheme'}: {url!r}"
    if not parsed.hostname:
        return f"push notification URL {url!r} names no host"
    return ""


async def url_validator(url: str) -> bool:
    """a2a-sdk's push_url_validator: refuses a bad URL with the reason (an InvalidParamsError)."""
    from a2a.utils.errors import InvalidParamsError

    if problem := url_problem(url):
        raise InvalidParamsError(message=problem)
    return True


def _blocked(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified


async def _resolves_safely(url: str) -> bool:
    parsed = urllib.parse.urlsplit(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parsed.hostname, port, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and not any(_blocked(str(info[4][0])) for info in infos)


def push_sender(rows: A2aTaskFile) -> Any:
    from a2a.server.tasks import PushNotificationSender
    from a2a.types import Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig

    class Sender(PushNotificationSender):
        def __init__(self) -> None:
            self._chains: dict[str, asyncio.Task[None]] = {}

        async def send_notification(self, task_id: str, event: Any) -> None:
            if isinstance(event, TaskArtifactUpdateEvent) and not event.last_chunk:
                return
            posts = []
            for owner, dialect, body in rows.push_of(task_id, None):
                config = TaskPushNotificationConfig.FromString(body)
                payload = _payload(rows, owner, task_id, dialect, event, Task)
                if payload is not None:
                    posts.append((config, payload))
            if posts:
                self._chain(task_id, posts)

        def _chain(self, task_id: str, posts: list[tuple[Any, dict]]) -> None:
            before = self._chains.get(task_id)

            async def run() -> None:
                if before is not None:
                    await asyncio.gather(before, return_exceptions=True)
                await asyncio.gather(*(deliver(config, payload) for config, payload in posts))

            job = self._chains[task_id] = asyncio.ensure_future(run())
            job.add_done_callback(lambda done: self._chains.pop(task_id, None) if self._chains.get(task_id) is done
                                  else None)

    return Sender()


def _payload(rows: A2aTaskFile, owner: str, task_id: str, dialect: str, event: Any, task_type: Any) -> dict | None:
    from google.protobuf.json_format import MessageToDict

    if dialect != "0.3":
        from a2a.utils.proto_utils import to_stream_response

        return MessageToDict(to_stream_response(event))
    from a2a.compat.v0_3.conversions import to_compat_task

    body = rows.get(owner, task_id)
    if body is None:
        return None
    return to_compat_task(task_type.FromString(body)).model_dump(mode="json", by_alias=True, exclude_none=True)


async def deliver(config: Any, payload: dict) -> bool:
    """POST `payload` to the config's URL with its token; True once a 2xx came back."""
    import httpx

    url = str(config.url)
    if url_problem(url) or not await _resolves_safely(url):
        log.warning("a2a push: %s refused (%s)", url, url_problem(url) or "resolves to a non-routable address")
        return False
    headers = {"X-A2A-Notification-Token": config.token} if config.token else {}
    if config.HasField("authentication") and config.authentication.credentials:
        headers["Authorization"] = f"{config.authentication.scheme or 'Bearer'} {config.authentication.credentials}"
    async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT_S, trust_env=False) as client:
        for attempt in range(ATTEMPTS):
            try:
                response = await client.post(url, json=payload, headers=headers)
            except httpx.HTTPError as exc:
                log.info("a2a push to %s failed (attempt %d): %s", url, attempt + 1, exc)
            else:
                if response.is_success:
                    return True
                log.info("a2a push to %s answered %d (attempt %d)", url, response.status_code, attempt + 1)
                if response.status_code != 429 and response.status_code < 500:
                    return False
            if attempt + 1 < ATTEMPTS:
                await asyncio.sleep(BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)])
    return False
