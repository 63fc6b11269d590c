"""image_generate and text_to_speech through `hermes chat -q` with the scripted model, against a local fake of
the media APIs (OpenAI images/speech, FAL, ElevenLabs) and the real espeak-ng; `hermes tools list` says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fake_media import PNG, FakeMedia
from tests.helpers import model_config, run_hermes


@pytest.fixture
def media():
    server = FakeMedia().start()
    yield server
    server.stop()


def _call_then_echo(scripted, name: str, args: dict) -> None:
    scripted.add({"tool_calls": [{"name": name, "arguments": args}]})
    scripted.default = lambda body: {"content": "RESULT " + body["messages"][-1]["content"]}


def _result(res) -> dict:  # type: ignore[no-untyped-def]
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout.split("RESULT ", 1)[1].strip().splitlines()[0])


def test_image_generate_through_an_openai_compatible_endpoint(scripted, hermes_home, media):
    model_config(hermes_home, scripted.url, f"image_gen:\n  base_url: {media.url}/v1\n  model: dall-e-3\n")
    _call_then_echo(scripted, "image_generate", {"prompt": "a lighthouse at dusk", "aspect_ratio": "portrait"})
    out = _result(run_hermes("chat", "-q", "draw", "-t", "image_gen", home=hermes_home,
                             env={"OPENAI_API_KEY": "sk-images"}))
    saved = Path(out["image"])
    assert saved.read_bytes() == PNG and saved.parent == hermes_home / "cache" / "images" / "local"  # the CLI session's media scope
    assert out["media"] == f"MEDIA:{saved}"
    req = media.requests[-1]
    assert req["path"] == "/v1/images/generations" and req["headers"]["authorization"] == "Bearer sk-images"
    assert req["body"] == {"model": "dall-e-3", "prompt": "a lighthouse at dusk", "n": 1, "size": "1024x1536",
                           "response_format": "b64_json"}


def test_image_generate_through_fal_and_a_failure_is_one_clear_line(scripted, hermes_home, media):
    model_config(hermes_home, scripted.url, f"image_gen:\n  provider: fal\n  fal_base_url: {media.url}/fal\n")
    _call_then_echo(scripted, "image_generate", {"prompt": "a cat"})
    out = _result(run_hermes("chat", "-q", "draw", "-t", "image_gen", home=hermes_home, env={"FAL_KEY": "fal-1"}))
    assert Path(out["image"]).read_bytes() == PNG
    assert media.requests[0]["headers"]["authorization"] == "Key fal-1"
    assert media.requests[0]["body"]["image_size"] == "landscape_16_9"
    media.fail["/fal/fal-ai/flux/schnell"] = 429
    _call_then_echo(scripted, "image_generate", {"prompt": "a dog"})
    err = _result(run_hermes("chat", "-q", "draw", "-t", "image_gen", home=hermes_home, env={"FAL_KEY": "fal-1"}))
    assert err["error"].startswith("image generation failed:") and "HTTP 429: scripted failure" in err["error"]


def test_without_a_backend_the_tools_list_says_what_to_set(hermes_home, scripted):
    model_config(hermes_home, scripted.url)
    res = run_hermes("tools", "list", home=hermes_home, env={"OPENAI_API_KEY": "", "FAL_KEY": ""})
    line = next(ln for ln in res.stdout.splitlines() if "image_generate" in ln)
    assert "FAL_KEY" in line, res.stdout


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt install espeak-ng)")
def test_text_to_speech_offline_and_a_failing_provider_falls_back(scripted, hermes_home, media):
    model_config(hermes_home, scripted.url, "tts:\n  provider: espeak\n")
    _call_then_echo(scripted, "text_to_speech", {"text": "Good morning. The build is green."})
    out = _result(run_hermes("chat", "-q", "say it", "-t", "tts", home=hermes_home))
    wav = Path(out["file_path"])
    assert out["provider"] == "espeak" and wav.read_bytes()[:4] == b"RIFF" and wav.stat().st_size > 10_000
    assert wav.parent == hermes_home / "cache" / "audio" / "local"
    model_config(hermes_home, scripted.url, f"tts:\n  provider: openai\n  openai:\n    base_url: {media.url}/v1\n")
    media.fail["/v1/audio/speech"] = 500
    _call_then_echo(scripted, "text_to_speech", {"text": "Fallback please."})
    out = _result(run_hermes("chat", "-q", "say it", "-t", "tts", home=hermes_home, env={"OPENAI_API_KEY": "sk-t"}))
    assert out["provider"] == "espeak" and "openai: " in out["note"] and "HTTP 500" in out["note"]


def test_text_to_speech_openai_and_elevenlabs_request_shapes(scripted, hermes_home, media):
    model_config(hermes_home, scripted.url, f"tts:\n  provider: openai\n  openai:\n    base_url: {media.url}/v1\n"
                                            "    voice: nova\n")
    _call_then_echo(scripted, "text_to_speech", {"text": "Hello there"})
    out = _result(run_hermes("chat", "-q", "say", "-t", "tts", home=hermes_home,
                             env={"VOICE_TOOLS_OPENAI_KEY": "sk-voice"}))
    assert out["provider"] == "openai" and Path(out["file_path"]).read_bytes()[:3] == b"ID3"
    req = media.requests[-1]
    assert req["headers"]["authorization"] == "Bearer sk-voice"
    assert req["body"] == {"model": "gpt-4o-mini-tts", "voice": "nova", "input": "Hello there", "response_format": "mp3"}
    model_config(hermes_home, scripted.url, f"tts:\n  provider: elevenlabs\n  elevenlabs:\n    base_url: {media.url}\n"
                                            "    voice_id: v42\n")
    _call_then_echo(scripted, "text_to_speech", {"text": "Hi"})
    out = _result(run_hermes("chat", "-q", "say", "-t", "tts", home=hermes_home, env={"ELEVENLABS_API_KEY": "el-1"}))
    assert out["provider"] == "elevenlabs"
    assert media.requests[-1]["path"] == "/v1/text-to-speech/v42" and media.requests[-1]["headers"]["xi-api-key"] == "el-1"


def test_stt_turned_off_with_hermes_yaml_words_is_off(tmp_path):
    """`stt: {enabled: no}` is False for the released Hermes (YAML 1.1): voice notes are not sent anywhere."""
    from hermes_agent.media.http import MediaError
    from hermes_agent.media.transcribe import transcribe

    note = tmp_path / "note.ogg"
    note.write_bytes(b"OggS" + b"\x00" * 100)
    for word in ("no", "off", "false", False):
        with pytest.raises(MediaError, match=r"voice transcription is off \(stt.enabled: false\)"):
            transcribe(note, {"enabled": word, "provider": "openai"}, {"OPENAI_API_KEY": "sk-x"})


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed (apt install espeak-ng)")
def test_text_to_speech_never_writes_through_a_link_the_sandbox_planted(scripted, hermes_home, outside_dir):
    """Red-team round 9 a14: the checked name was voice.mp3, the engine wrote voice.wav (a planted link to
    ~/.bashrc) unconfined. The final name is checked, and hermes writes it without following a link."""
    home, proj = outside_dir / "home", outside_dir / "home" / "proj"
    (home / ".ssh").mkdir(parents=True)
    proj.mkdir()
    (home / ".bashrc").write_text("# rc\n")
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    model_config(hermes_home, scripted.url, "tts:\n  provider: espeak\n")
    calls = [("terminal", {"command": "ln -s ~/.bashrc voice.wav; ln -s ~/.ssh/id_rsa voice2.wav; echo planted"}),
             ("text_to_speech", {"text": "hello", "output_path": str(proj / "voice.mp3")}),
             ("text_to_speech", {"text": "hello", "output_path": "voice2"}),
             ("text_to_speech", {"text": "hello", "output_path": "out/speech.wav"})]
    for name, args in calls:
        scripted.add({"tool_calls": [{"name": name, "arguments": args}]})
    scripted.add({"content": "done"})
    out = run_hermes("chat", "-q", "say it", "--yolo", "-t", "terminal,tts", home=hermes_home, cwd=str(proj),
                     env={"HOME": str(home)}, timeout=180)
    assert out.returncode == 0, out.stderr
    assert (home / ".bashrc").read_bytes() == b"# rc\n" and (home / ".ssh/id_rsa").read_bytes() == b"PRIVATE KEY\n"
    results = [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert "voice.wav is a symbolic link; not written through" in results[1]["error"], results[1]
    assert "voice2.wav is a symbolic link; not written through" in results[2]["error"], results[2]
    made = Path(results[3]["file_path"])
    assert made == proj / "out" / "speech.wav" and made.read_bytes()[:4] == b"RIFF", results[3]
    assert (proj / "voice.wav").is_symlink() and (proj / "voice2.wav").is_symlink()
