"""Which backend a media tool would use, decided from config and environment alone: no network code, cheap to
import (the tools' availability checks run before every first request: tools/builtin/_checks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hermes_agent import paths


@dataclass(frozen=True, slots=True)
class ImageBackend:
    """The configured image-generation endpoint."""

    provider: str  # "openai" | "fal"
    base_url: str
    api_key: str
    model: str


def image_backend(conf: Mapping, env: Mapping[str, str]) -> ImageBackend | None:
    """The configured backend, or None (then the tool is unavailable and says what to set)."""
    chosen = str(conf.get("provider") or "").lower()
    fal_key = env.get("FAL_KEY", "")
    if chosen == "fal" or (not chosen and fal_key):
        if not fal_key:
            return None
        return ImageBackend("fal", str(conf.get("fal_base_url") or "https://fal.run").rstrip("/"), fal_key,
                            str(conf.get("model") or "fal-ai/flux/schnell"))
    key = str(conf.get("api_key") or env.get("IMAGE_GEN_API_KEY") or env.get("OPENAI_API_KEY") or "")
    base = str(conf.get("base_url") or "")
    if chosen not in ("", "openai", "custom") or not (key or base):
        return None
    return ImageBackend("openai", (base or "https://api.openai.com/v1").rstrip("/"), key,
                        str(conf.get("model") or "gpt-image-1"))


def offline_engine(conf: Mapping) -> str | None:
    """'piper' (a voice model configured and the binary present), 'espeak', or None."""
    piper = conf.get("piper") if isinstance(conf.get("piper"), Mapping) else {}
    if piper.get("model") and paths.trusted_which("piper"):
        return "piper"
    return "espeak" if paths.trusted_which("espeak-ng") or paths.trusted_which("espeak") else None


def _edge_ready() -> bool:
    import importlib.util

    return importlib.util.find_spec("edge_tts") is not None


def speech_problem(conf: Mapping, env: Mapping[str, str]) -> str | None:
    """Why text_to_speech cannot work here, or None when it can."""
    if offline_engine(conf) or _edge_ready() or _openai_key(env) or env.get("ELEVENLABS_API_KEY"):
        return None
    return "no speech engine: install espeak-ng (apt install espeak-ng) or edge-tts, or set OPENAI_API_KEY / ELEVENLABS_API_KEY"


def _openai_key(env: Mapping[str, str]) -> str:
    return env.get("VOICE_TOOLS_OPENAI_KEY") or env.get("OPENAI_API_KEY") or ""
