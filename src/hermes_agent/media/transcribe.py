"""Speech to text for voice notes, configured as Hermes users write it: `stt.enabled`, `stt.provider`
openai (the `/audio/transcriptions` endpoint; STT_OPENAI_BASE_URL or `stt.openai.base_url`; key
VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY) | groq (GROQ_API_KEY) | local (faster-whisper when installed, or
HERMES_LOCAL_STT_COMMAND with {input} and {output_dir} placeholders)."""

from __future__ import annotations

import mimetypes
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hermes_agent.config.schema import switch
from hermes_agent.media.http import MediaError, call_json, multipart

MAX_FILE = 25 * 1024 * 1024
# Whisper model names a local engine knows: a legacy flat stt.model naming an API model (whisper-1) is not one.
_LOCAL_MODELS = frozenset({"tiny", "tiny.en", "base", "base.en", "small", "small.en", "medium", "medium.en", "large",
                           "large-v1", "large-v2", "large-v3", "large-v3-turbo", "turbo", "distil-large-v2",
                           "distil-large-v3", "distil-large-v3.5", "distil-medium.en", "distil-small.en"})


def transcribe(path: Path, conf: Mapping, env: Mapping[str, str]) -> str:
    """The transcript of an audio file (MediaError with one clear line when it cannot be made)."""
    if not switch(conf.get("enabled"), True):
        raise MediaError("voice transcription is off (stt.enabled: false)")
    if path.stat().st_size > MAX_FILE:
        raise MediaError(f"audio file too large for transcription ({path.stat().st_size // 2**20} MB > 25 MB)")
    provider = str(conf.get("provider") or "").lower() or _default(env)
    sub = conf.get(provider) if isinstance(conf.get(provider), Mapping) else {}
    legacy = conf.get("model")  # 0.19.0's flat stt.model, which today's Hermes moves to stt.<provider>.model
    if legacy and not sub.get("model") and (provider != "local" or str(legacy) in _LOCAL_MODELS):
        sub = {**sub, "model": legacy}
    if provider in ("openai", "groq"):
        return _api(provider, path, sub, env)
    if provider == "local":
        return _local(path, sub, env)
    raise MediaError(f"unknown stt.provider {provider!r} (local, openai, groq)")


def _default(env: Mapping[str, str]) -> str:
    if env.get("HERMES_LOCAL_STT_COMMAND") or _has_faster_whisper():
        return "local"
    if env.get("GROQ_API_KEY"):
        return "groq"
    return "openai"


def _has_faster_whisper() -> bool:
    import importlib.util

    return importlib.util.find_spec("faster_whisper") is not None


def _api(provider: str, path: Path, sub: Mapping, env: Mapping[str, str]) -> str:
    if provider == "groq":
        key = env.get("GROQ_API_KEY", "")
        base = sub.get("base_url") or env.get("GROQ_BASE_URL") or "https://api.groq.com/openai/v1"
        model = sub.get("model") or "whisper-large-v3-turbo"
    else:
        key = env.get("VOICE_TOOLS_OPENAI_KEY") or env.get("OPENAI_API_KEY") or ""
        base = sub.get("base_url") or env.get("STT_OPENAI_BASE_URL") or "https://api.openai.com/v1"
        model = sub.get("model") or env.get("STT_OPENAI_MODEL") or "whisper-1"
    if not key and "base_url" not in sub and not env.get("STT_OPENAI_BASE_URL"):
        raise MediaError(f"stt.provider {provider} needs {'GROQ_API_KEY' if provider == 'groq' else 'OPENAI_API_KEY'}")
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    body, ctype = multipart({"model": str(model), "response_format": "json"}, "file", path, mime)
    out = call_json(f"{str(base).rstrip('/')}/audio/transcriptions", headers={"Authorization": f"Bearer {key}"},
                    data=body, content_type=ctype, timeout=120)
    text = str(out.get("text") or "").strip()
    if not text:
        raise MediaError("the transcription came back empty")
    return text


def _local(path: Path, sub: Mapping, env: Mapping[str, str]) -> str:
    command = env.get("HERMES_LOCAL_STT_COMMAND", "")
    if command:
        with tempfile.TemporaryDirectory() as out_dir:
            cmd = command.format(input=shlex.quote(str(path)), output_dir=shlex.quote(out_dir),
                                 language=shlex.quote(str(sub.get("language") or "en")),
                                 model=shlex.quote(str(sub.get("model") or "base")))
            res = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=600)  # noqa: S602 - the user's own command
            texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path(out_dir).glob("*.txt"))]
            text = ("\n".join(texts) or res.stdout).strip()
            if res.returncode != 0 or not text:
                raise MediaError(f"HERMES_LOCAL_STT_COMMAND failed: {(res.stderr or '').strip()[:200] or 'no text'}")
            return text
    if not _has_faster_whisper():
        raise MediaError("no local transcription engine: pip install faster-whisper, set HERMES_LOCAL_STT_COMMAND, "
                         "or set stt.provider: openai with OPENAI_API_KEY")
    from faster_whisper import WhisperModel

    model = WhisperModel(str(sub.get("model") or "base"), device="cpu", compute_type="int8")
    segments, _ = model.transcribe(str(path), language=sub.get("language") or None)
    return " ".join(s.text.strip() for s in segments).strip()
