"""`image_generate`: text to image through the configured backend (media/images.py); the file lands in
HERMES_HOME/cache/images and the result names it, with a MEDIA: line chats deliver as the image."""

from __future__ import annotations

import json

from hermes_agent.media.http import MediaError
from hermes_agent.media.images import ASPECTS, backend, generate
from hermes_agent.tools.builtin._checks import image_backend_configured
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

IMAGE_SCHEMA = {
    "name": "image_generate",
    "description": (
        "Generate an image from a text prompt. Returns the saved file's path in `image`; to show it, put "
        "the `media` line in your reply on its own line. Backend and model are user-configured."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "Detailed description of the image"},
            "aspect_ratio": {"type": "string", "enum": list(ASPECTS), "description": "Default landscape (16:9)"},
        },
        "required": ["prompt"],
    },
}


def _handle(args: dict, **kw: object) -> str:
    settings = kw["ctx"].settings  # type: ignore[attr-defined]
    prompt = str(args.get("prompt") or "").strip()
    if not prompt:
        return tool_error("prompt is required")
    be = backend(settings.cfg.image_gen, settings.env)
    if be is None:
        return tool_error("no image backend configured: set FAL_KEY, or OPENAI_API_KEY / image_gen.base_url")
    try:
        path = generate(be, prompt, str(args.get("aspect_ratio") or "landscape"),
                        scope=kw["ctx"].media_scope)  # type: ignore[attr-defined]
    except MediaError as exc:
        return tool_error(f"image generation failed: {exc}")
    return json.dumps({"success": True, "image": str(path), "media": f"MEDIA:{path}",
                       "provider": be.provider, "model": be.model})


registry.register("image_generate", "image_gen", IMAGE_SCHEMA, _handle, check_fn=image_backend_configured, emoji="🎨")
