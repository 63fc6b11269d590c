"""A reply's MEDIA files to the chat: speech goes out as a voice message (OGG/Opus, e.g. Telegram's
sendVoice) when the platform has them and an encoder is here (ffmpeg or opus-tools' opusenc); otherwise as
a document, which the chat and the console are told once per gateway run."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from hermes_agent.gateway.base import PlatformAdapter

log = logging.getLogger(__name__)
NO_ENCODER = ("(Voice replies arrive as audio files: this gateway has no OGG/Opus encoder. "
              "Install ffmpeg or opus-tools for voice messages.)")
_told = False


async def send_media(adapter: PlatformAdapter, chat_id: str, path: Path) -> None:
    from hermes_agent.media.speech import AUDIO_SUFFIXES, to_voice

    send_voice = getattr(adapter, "send_voice", None)
    if send_voice is not None and path.suffix.lower() in AUDIO_SUFFIXES:
        voice = await asyncio.to_thread(to_voice, path)
        try:
            if voice is not None and await send_voice(chat_id, voice) is not None:
                return
        finally:
            if voice is not None and voice != path:  # to_voice's own HERMES_HOME/cache/voice-* folder
                import shutil

                shutil.rmtree(voice.parent, ignore_errors=True)
        if voice is None:
            await _tell_once(adapter, chat_id)
    await adapter.send_file(chat_id, path)


async def _tell_once(adapter: PlatformAdapter, chat_id: str) -> None:
    global _told
    if _told:
        return
    _told = True
    log.warning("no OGG/Opus encoder (ffmpeg or opusenc): speech is sent as a document")
    print("hermes gateway: no OGG/Opus encoder (install ffmpeg or opus-tools): voice replies are sent as "
          "documents", file=sys.stderr, flush=True)
    await adapter.send(chat_id, NO_ENCODER)
