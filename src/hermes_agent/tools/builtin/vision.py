"""vision_analyze: an image (http(s) URL, local file or data: URL) described by the auxiliary vision
model (`auxiliary.vision.*` in config; the main model when none is set). URLs obey the private-address
rule of the web tools, every redirect included; local files obey the path policy of the file tools."""

from __future__ import annotations

import json

from hermes_agent.errors import HermesError
from hermes_agent.tools.builtin import _images
from hermes_agent.tools.builtin._fileio import FileToolError
from hermes_agent.tools.builtin._urlguard import allow_private, url_problem
from hermes_agent.tools.registry import registry

SCHEMA = {
    "name": "vision_analyze",
    "description": "Ask a vision model a question about an image.",
    "parameters": {
        "type": "object",
        "properties": {
            "image_url": {"type": "string", "description": "http(s) URL, local file path or data: URL"},
            "question": {"type": "string", "description": "be specific"},
        },
        "required": ["image_url", "question"],
    },
}

_DOWNLOAD_CAP = 20 * 1024 * 1024
_MAX_REDIRECTS = 5


def _vision_row(ctx: object) -> dict:
    row = ctx.settings.cfg.auxiliary.get("vision")  # type: ignore[attr-defined]
    return row if isinstance(row, dict) else {}


def _download(ctx: object, url: str) -> bytes:
    """The image at `url` through the web tools' guarded client: every hop's host is resolved, checked and the
    connection pinned to the checked address (a second DNS answer cannot switch it to a private one)."""
    from hermes_agent.tools.builtin._webnet import FetchError, Limits, fetch

    cfg, env = ctx.settings.cfg, ctx.settings.env  # type: ignore[attr-defined]
    allowed = allow_private(env, cfg.security.allow_private_urls, cfg.browser.allow_private_urls)
    problem = url_problem(url, allowed)
    if problem:
        raise _images.ImageError(problem)
    limits = Limits(timeout=float(_vision_row(ctx).get("download_timeout") or 30), max_bytes=_DOWNLOAD_CAP + 1,
                    max_redirects=_MAX_REDIRECTS, allow_private=allowed)
    try:
        resp = fetch(url, limits, headers={"Accept": "image/*"})
    except FetchError as exc:
        raise _images.ImageError(str(exc)) from None
    if resp.status >= 400:
        raise _images.ImageError(f"downloading the image failed: HTTP {resp.status}")
    if resp.truncated or len(resp.body) > _DOWNLOAD_CAP:
        raise _images.ImageError(f"the image is over {_DOWNLOAD_CAP // 1048576} MB")
    return resp.body


def _local(ctx: object, path: str) -> bytes:
    from hermes_agent.tools.builtin._pathguard import guarded

    path = path.removeprefix("file://")
    try:
        return guarded(ctx).read_bytes(path, _DOWNLOAD_CAP + 1)  # type: ignore[attr-defined]
    except FileNotFoundError:
        raise _images.ImageError(f"no such file: {path}") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise _images.ImageError(f"cannot read {path}: {exc.strerror}") from None


def load(ctx: object, image_url: str) -> str:
    """The image as a data URL, downscaled to the cap."""
    source = image_url.strip()
    if not source:
        raise _images.ImageError("image_url is empty")
    if source.startswith("data:"):
        data = _images.decode_data_url(source)
    elif source.startswith(("http://", "https://")):
        data = _download(ctx, source)
    else:
        data = _local(ctx, source)
    return _images.data_url(*_images.shrink(data))


def _handle(args: dict, **kw: object) -> str:
    ctx = kw["ctx"]
    question = str(args.get("question") or "").strip() or "Describe this image."
    try:
        image = load(ctx, str(args.get("image_url") or ""))
        prompt = f"Describe everything relevant in this image, then answer the question.\n\nQuestion: {question}"
        analysis = _images.ask(ctx, prompt, image)
    except (_images.ImageError, FileToolError) as exc:
        return json.dumps({"success": False, "error": str(exc)}, ensure_ascii=False)
    except HermesError as exc:  # the vision model's endpoint failed
        return json.dumps({"success": False, "error": f"vision model call failed: {exc}"}, ensure_ascii=False)
    return json.dumps({"success": True, "analysis": analysis or "The vision model returned no text."},
                      ensure_ascii=False)


registry.register("vision_analyze", "vision", SCHEMA, _handle, emoji="👁️", needs={"vision"},
                  preview_arg="image_url", untrusted_output=True)
