"""Image generation: an OpenAI-compatible images endpoint or FAL, chosen by `image_gen.provider`
(default: FAL when FAL_KEY is set, else OpenAI-compatible when a key or `image_gen.base_url` is set).
The image is saved under HERMES_HOME/cache/images and its path returned."""

from __future__ import annotations

import base64
import time
from pathlib import Path

from hermes_agent import paths
from hermes_agent.media.choice import ImageBackend
from hermes_agent.media.choice import image_backend as backend  # noqa: F401 - image_generate's name for it
from hermes_agent.media.http import MediaError, call, call_json

ASPECTS = ("landscape", "square", "portrait")
_OPENAI_SIZE = {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"}
_FAL_SIZE = {"landscape": "landscape_16_9", "square": "square_hd", "portrait": "portrait_16_9"}


def generate(be: ImageBackend, prompt: str, aspect: str, timeout: float = 180.0, scope: str = "local") -> Path:
    """Generate one image; returns the file saved in the session's media folder (paths.media_cache)."""
    aspect = aspect if aspect in ASPECTS else "landscape"
    data = _openai(be, prompt, aspect, timeout) if be.provider == "openai" else _fal(be, prompt, aspect, timeout)
    out = paths.media_cache("images", scope)
    out.mkdir(parents=True, exist_ok=True)
    suffix = ".jpg" if data[:3] == b"\xff\xd8\xff" else ".webp" if data[8:12] == b"WEBP" else ".png"
    target = out / f"image_{time.strftime('%Y%m%d_%H%M%S')}_{time.time_ns() % 10**6:06d}{suffix}"
    target.write_bytes(data)
    return target


def _openai(be: ImageBackend, prompt: str, aspect: str, timeout: float) -> bytes:
    headers = {"Authorization": f"Bearer {be.api_key}"} if be.api_key else {}
    body = {"model": be.model, "prompt": prompt, "n": 1, "size": _OPENAI_SIZE[aspect]}
    if not be.model.startswith("gpt-image"):
        body["response_format"] = "b64_json"  # dall-e and most compatible servers; gpt-image always sends b64
    out = call_json(f"{be.base_url}/images/generations", headers=headers, json_body=body, timeout=timeout)
    item = (out.get("data") or [{}])[0]
    if item.get("b64_json"):
        return base64.b64decode(item["b64_json"])
    if item.get("url"):
        return call(str(item["url"]), timeout=timeout)[0]
    raise MediaError("the images endpoint returned no image")


def _fal(be: ImageBackend, prompt: str, aspect: str, timeout: float) -> bytes:
    out = call_json(f"{be.base_url}/{be.model}", headers={"Authorization": f"Key {be.api_key}"},
                    json_body={"prompt": prompt, "image_size": _FAL_SIZE[aspect], "num_images": 1}, timeout=timeout)
    images = out.get("images") or []
    url = images[0].get("url") if images and isinstance(images[0], dict) else None
    if not url:
        raise MediaError("FAL returned no image")
    if str(url).startswith("data:"):
        return base64.b64decode(str(url).split(",", 1)[1])
    return call(str(url), timeout=timeout)[0]
