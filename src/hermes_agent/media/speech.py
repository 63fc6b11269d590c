"""Text to speech, configured as Hermes users write it: `tts.provider` edge (free, needs the edge-tts package
and Microsoft's service) | openai | elevenlabs | espeak (offline). Whatever is chosen, the offline engine
(espeak-ng, or piper when `tts.piper.model` names a voice file) is the fallback that always works here.
Engines write only into the session's media folder under HERMES_HOME, which no sandbox can write; a copy
anywhere else (`place`) is written by hermes itself without following a symlink."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from hermes_agent import paths
from hermes_agent.media.choice import _edge_ready, _openai_key
from hermes_agent.media.http import MediaError, call

CAPS = {"openai": 4096, "elevenlabs": 5000, "edge": 10000, "espeak": 20000, "piper": 20000}


def synthesize(text: str, conf: Mapping, env: Mapping[str, str], scope: str = "local") -> tuple[Path, str, str]:
    """(file, provider used, note); the configured provider first, the offline engine when it fails. The file
    is in the session's media folder (paths.media_cache("audio", scope)), under a fresh name."""
    folder = paths.media_cache("audio", scope)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    output = folder / f"tts_{time.strftime('%Y%m%d_%H%M%S')}_{os.urandom(4).hex()}"
    chosen = str(conf.get("provider") or "edge").lower()
    order = [chosen] + [p for p in ("piper", "espeak") if p != chosen]
    errors: list[str] = []
    for provider in order:
        try:
            path = _run(provider, text[: CAPS.get(provider, 4096)], conf, env, output)
        except MediaError as exc:
            errors.append(f"{provider}: {exc}")
            continue
        note = f"{'; '.join(errors)}; used {provider} instead" if errors else ""
        return path, provider, note
    raise MediaError("; ".join(errors))


def _target(output: Path, suffix: str) -> Path:
    return output.with_suffix(suffix) if output.suffix.lower() != suffix else output


def final_name(requested: Path, made: Path) -> Path:
    """The name a copy of `made` gets at the user's `requested` path: its audio suffix is kept when it is the
    format made, else the made format's suffix replaces (or is added to) it. Decided before any check."""
    return requested if requested.suffix.lower() == made.suffix.lower() else requested.with_suffix(made.suffix)


def place(made: Path, target: str) -> None:
    """Copy `made` (hermes's own media file) to the resolved, already authorised `target`: a new file in
    the target's directory renamed over the name, never through a symlink there (nofollow.write_nofollow)."""
    from hermes_agent.nofollow import read_regular, write_nofollow

    write_nofollow(target, read_regular(made), create_parents=True)


def _run(provider: str, text: str, conf: Mapping, env: Mapping[str, str], output: Path) -> Path:
    sub = conf.get(provider) if isinstance(conf.get(provider), Mapping) else {}
    if provider == "openai":
        key = _openai_key(env)
        if not key and not sub.get("base_url"):
            raise MediaError("needs VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY")
        base = str(sub.get("base_url") or "https://api.openai.com/v1").rstrip("/")
        body, _ = call(f"{base}/audio/speech", headers={"Authorization": f"Bearer {key}"}, json_body={
            "model": sub.get("model") or "gpt-4o-mini-tts", "voice": sub.get("voice") or "alloy", "input": text,
            "response_format": "mp3"})
        return _write(_target(output, ".mp3"), body)
    if provider == "elevenlabs":
        key = env.get("ELEVENLABS_API_KEY", "")
        if not key:
            raise MediaError("needs ELEVENLABS_API_KEY")
        base = str(sub.get("base_url") or "https://api.elevenlabs.io").rstrip("/")
        voice = sub.get("voice_id") or "pNInz6obpgDQGcFmaJgB"
        body, _ = call(f"{base}/v1/text-to-speech/{voice}", headers={"xi-api-key": key, "Accept": "audio/mpeg"},
                       json_body={"text": text, "model_id": sub.get("model_id") or "eleven_multilingual_v2"})
        return _write(_target(output, ".mp3"), body)
    if provider == "edge":
        return _edge(text, str(sub.get("voice") or "en-US-AriaNeural"), _target(output, ".mp3"))
    if provider in ("espeak", "piper"):
        return _offline(provider, text, conf, _target(output, ".wav"))
    raise MediaError(f"unknown tts.provider {provider!r} (edge, openai, elevenlabs, espeak)")


def _write(target: Path, body: bytes) -> Path:
    if not body:
        raise MediaError("the speech API returned no audio")
    target.write_bytes(body)
    return target


def _edge(text: str, voice: str, target: Path) -> Path:
    if not _edge_ready():
        raise MediaError("the edge-tts package is not installed (pip install edge-tts)")
    import asyncio

    import edge_tts

    try:
        asyncio.run(asyncio.wait_for(edge_tts.Communicate(text, voice).save(str(target)), 60))
    except Exception as exc:  # a third-party client talking to a remote service: report, fall back
        raise MediaError(f"{type(exc).__name__}: {exc}") from None
    return target


def _offline(engine: str, text: str, conf: Mapping, target: Path) -> Path:
    if engine == "piper":
        piper = conf.get("piper") if isinstance(conf.get("piper"), Mapping) else {}
        exe = paths.trusted_which("piper")
        if not (piper.get("model") and exe):
            raise MediaError("piper is not installed or tts.piper.model is not set")
        cmd = [exe, "--model", str(piper["model"]), "--output_file", str(target)]
    else:
        exe = paths.trusted_which("espeak-ng") or paths.trusted_which("espeak")
        if exe is None:
            raise MediaError("espeak-ng is not installed (apt install espeak-ng)")
        sub = conf.get("espeak") if isinstance(conf.get("espeak"), Mapping) else {}
        cmd = [exe, "-v", str(sub.get("voice") or "en"), "-w", str(target), "--stdin"]
    import subprocess

    try:
        res = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MediaError(f"{engine} failed: {exc}") from None
    if res.returncode != 0 or not target.is_file() or target.stat().st_size == 0:
        raise MediaError(f"{engine} failed: {(res.stderr or '').strip()[:200] or 'no audio written'}")
    return target


AUDIO_SUFFIXES = (".wav", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".flac", ".aac")


def voice_encoder() -> str | None:
    """The OGG/Opus encoder here: ffmpeg (reads any audio) or opusenc (opus-tools: WAV, FLAC, AIFF), or None."""
    return paths.trusted_which("ffmpeg") or paths.trusted_which("opusenc")


def _is_ogg_opus(path: Path) -> bool:
    from hermes_agent.nofollow import read_regular

    try:
        head = read_regular(path, 64)
    except OSError:
        return False
    return head.startswith(b"OggS") and b"OpusHead" in head


def to_voice(path: Path) -> Path | None:
    """An OGG/Opus file for a voice message (messaging apps play only that as a voice note): `path` itself
    when it already is one, else a new file in HERMES_HOME/cache/voice (never beside `path`, which may be a
    folder the sandbox writes: the encoder reads the audio on its stdin and writes only there); None when no
    encoder here can read it."""
    if _is_ogg_opus(path):
        return path
    exe = voice_encoder()
    if exe is None or (Path(exe).name == "opusenc" and path.suffix.lower() not in (".wav", ".flac", ".aiff")):
        return None
    import subprocess
    import tempfile

    from hermes_agent.nofollow import read_regular

    try:
        audio = read_regular(path, 50 * 1024 * 1024)
        (paths.hermes_home() / "cache").mkdir(parents=True, exist_ok=True)
        target = Path(tempfile.mkdtemp(prefix="voice-", dir=paths.hermes_home() / "cache")) / f"{path.stem}.ogg"
    except OSError:
        return None
    if Path(exe).name == "ffmpeg":
        cmd = [exe, "-n", "-loglevel", "error", "-i", "pipe:0", "-vn", "-ac", "1", "-c:a", "libopus",
               "-b:a", "32k", str(target)]
    else:
        cmd = [exe, "--quiet", "--bitrate", "32", "-", str(target)]
    try:
        res = subprocess.run(cmd, input=audio, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return target if res.returncode == 0 and _is_ogg_opus(target) else None
