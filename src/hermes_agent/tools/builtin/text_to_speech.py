"""`text_to_speech`: speech audio from text through `tts.provider` (media/speech.py), the offline engine as
the fallback; the file lands in HERMES_HOME/cache/audio (or output_path) with a MEDIA: line for chats."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_agent.media.http import MediaError
from hermes_agent.media.speech import synthesize
from hermes_agent.tools.builtin._checks import speech_engine_available
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

TTS_SCHEMA = {
    "name": "text_to_speech",
    "description": (
        "Speak text into an audio file; put the returned `media` line alone on a line of your reply to send it "
        "as audio in chats. Voice and provider are the user's settings."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "output_path": {"type": "string"},
        },
        "required": ["text"],
    },
}


def _handle(args: dict, **kw: object) -> str:
    ctx = kw["ctx"]
    settings = ctx.settings  # type: ignore[attr-defined]
    text = str(args.get("text") or "").strip()
    if not text:
        return tool_error("text is required")
    out = Path(str(args["output_path"])).expanduser() if args.get("output_path") else None
    if out is not None:  # the file tools' path policy: a write outside the workspace asks, a secret never
        from hermes_agent.tools.builtin._fileio import FileToolError
        from hermes_agent.tools.builtin._pathguard import authorize, guarded

        try:
            out = Path(authorize(ctx, guarded(ctx), [str(out)], "text_to_speech")[0])
        except FileToolError as exc:
            return tool_error(str(exc))
    try:
        path, provider, note = synthesize(text, settings.cfg.tts, settings.env, out,
                                          scope=ctx.media_scope)  # type: ignore[attr-defined]
    except MediaError as exc:
        return tool_error(f"speech failed: {exc}")
    result = {"success": True, "file_path": str(path), "media": f"MEDIA:{path}", "provider": provider}
    if note:
        result["note"] = note
    return json.dumps(result)


registry.register("text_to_speech", "tts", TTS_SCHEMA, _handle, check_fn=speech_engine_available, emoji="🔊")
