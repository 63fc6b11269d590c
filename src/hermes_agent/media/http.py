"""Small HTTP calls to media APIs the user configured (images, speech, transcription): JSON or multipart in,
bytes out, with a timeout, a size cap and one clear error line. stdlib only (urllib honours the proxy env)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hermes_agent.errors import HermesError
from hermes_agent.messages import safe_loads

MAX_BYTES = 50 * 1024 * 1024


class MediaError(HermesError):
    """A media backend failed; the message is what the model and the user see."""


def call(url: str, *, headers: dict[str, str] | None = None, json_body: object = None, data: bytes | None = None,
         content_type: str | None = None, timeout: float = 120.0, method: str | None = None) -> tuple[bytes, str]:
    """(body, content-type) of a 2xx answer; MediaError naming the status and the API's message otherwise."""
    hdrs = dict(headers or {})
    if json_body is not None:
        data = json.dumps(json_body).encode()
        hdrs["Content-Type"] = "application/json"
    elif content_type:
        hdrs["Content-Type"] = content_type
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=data, headers=hdrs, method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - a URL the user configured
            body = resp.read(MAX_BYTES + 1)
            if len(body) > MAX_BYTES:
                raise MediaError(f"{_host(url)} sent more than {MAX_BYTES // 2**20} MB")
            return body, resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        raise MediaError(f"{_host(url)} answered HTTP {exc.code}: {_api_message(exc.read(4000))}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise MediaError(f"cannot reach {_host(url)}: {reason}") from None


def call_json(url: str, **kw: object) -> dict:
    body, _ = call(url, **kw)  # type: ignore[arg-type]
    try:
        out = safe_loads(body)
    except ValueError:
        raise MediaError(f"{_host(url)} sent a body that is not JSON") from None
    if not isinstance(out, dict):
        raise MediaError(f"{_host(url)} sent unexpected JSON")
    return out


def multipart(fields: dict[str, str], file_field: str, path: Path, mime: str) -> tuple[bytes, str]:
    """A multipart/form-data body with `fields` and one file; returns (body, content type)."""
    boundary = "hermes" + os.urandom(12).hex()
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append((f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{path.name}"\r\n'
                  f"Content-Type: {mime}\r\n\r\n").encode() + path.read_bytes() + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).netloc or url


def _api_message(raw: bytes) -> str:
    try:
        obj = safe_loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace").strip()[:300] or "(no body)"
    err = obj.get("error", obj) if isinstance(obj, dict) else obj
    if isinstance(err, dict):
        err = err.get("message") or err.get("detail") or err
    return str(err)[:300]
