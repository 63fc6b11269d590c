"""`text_to_speech`: speech audio from text through `tts.provider` (media/speech.py), the offline engine as
the fallback; the file lands in HERMES_HOME/cache/audio with a MEDIA: line for chats, or is copied by hermes
to output_path (its final name checked by the path policy, written without following a symlink)."""

from __future__ import annotations

import json
import os
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
    try:
        path, provider, note = synthesize(text, settings.cfg.tts, settings.env,
                                          scope=ctx.media_scope)  # type: ignore[attr-defined]
    except MediaError as exc:
        return tool_error(f"speech failed: {exc}")
    if args.get("output_path"):
        from hermes_agent.tools.builtin._fileio import FileToolError

        try:
            path = _copy_to(ctx, path, Path(str(args["output_path"])).expanduser())
        except FileToolError as exc:
            return tool_error(str(exc))
        except (OSError, ValueError) as exc:
            return tool_error(f"speech made ({path}) but not copied to {args['output_path']}: "
                              f"{getattr(exc, 'strerror', None) or exc}")
    result = {"success": True, "file_path": str(path), "media": f"MEDIA:{path}", "provider": provider}
    if note:
        result["note"] = note
    return json.dumps(result)


def _copy_to(ctx: object, made: Path, requested: Path) -> Path:
    """`made` copied to the user's path: the final name (format suffix included) is decided first, then
    judged by the file tools' path policy (outside the workspace asks, a secret never), then written by
    hermes itself without following a symlink at that name (the sandbox may have planted one)."""
    from hermes_agent.media.speech import final_name, place
    from hermes_agent.tools.builtin._pathguard import authorize, guarded

    if not requested.is_absolute():
        requested = Path(guarded(ctx).cwd()) / requested  # type: ignore[attr-defined]
    final = final_name(requested, made)
    parent = os.path.realpath(final.parent)
    if os.path.islink(os.path.join(parent, final.name)):
        raise ValueError(f"{final} is a symbolic link; not written through")
    real = authorize(ctx, guarded(ctx), [os.path.join(parent, final.name)], "text_to_speech")[0]
    place(made, real)
    made.unlink(missing_ok=True)
    return Path(real)


registry.register("text_to_speech", "tts", TTS_SCHEMA, _handle, check_fn=speech_engine_available, emoji="🔊")
