"""vision_analyze through the real `hermes chat -q`: local files (within the path policy) reach the
(scripted) vision model as images; what is missing, not an image, or a secret never does."""

from __future__ import annotations

import base64
import json

from hermes_agent.providers.scripted import ScriptedServer
from tests.fixtures.browser_site import png
from tests.helpers import model_config, run_hermes


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool_results(body: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def vision_requests(scripted) -> list[dict]:
    return [r["body"] for r in scripted.requests if not r["body"].get("tools")]


def test_vision_analyze_reads_local_files_within_the_path_policy(scripted, hermes_home, tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(png(rgb=(0, 0, 255)))
    (tmp_path / "notes.txt").write_text("just text")
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    model_config(hermes_home, scripted.url)
    scripted.add(call("vision_analyze", image_url=str(shot), question="Colour?"), {"content": "Blue."},
                 call("vision_analyze", image_url=str(tmp_path / "missing.png"), question="?"),
                 call("vision_analyze", image_url=str(tmp_path / "notes.txt"), question="?"),
                 call("vision_analyze", image_url=str(hermes_home / ".env"), question="?"),
                 {"content": "done"})
    out = run_hermes("chat", "-q", "look", "-t", "vision", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    seen, missing, text, secret = tool_results(scripted.requests[-1]["body"])
    assert seen == {"success": True, "analysis": "Blue."}
    (sent,) = vision_requests(scripted)
    image = next(p["image_url"]["url"] for p in sent["messages"][0]["content"] if p["type"] == "image_url")
    assert base64.b64decode(image.split(",", 1)[1]) == png(rgb=(0, 0, 255))
    assert missing["success"] is False and "no such file" in missing["error"]
    assert text["success"] is False and "not an image" in text["error"]
    assert secret["success"] is False and "Access denied" in secret["error"] and "sk-secret" not in json.dumps(secret)


def test_auxiliary_vision_model_answers_when_configured(scripted, hermes_home, tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(png())
    with ScriptedServer(default={"content": "A red square."}) as vision:
        model_config(hermes_home, scripted.url, extra=(
            f"auxiliary:\n  vision:\n    base_url: {vision.url}\n    model: eyes-1\n    api_key: k2\n"
            "    temperature: 0.3\n"))
        scripted.add(call("vision_analyze", image_url=str(shot), question="What?"), {"content": "done"})
        out = run_hermes("chat", "-q", "look", "-t", "vision", home=hermes_home, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        assert tool_results(scripted.requests[-1]["body"]) == [{"success": True, "analysis": "A red square."}]
        assert vision_requests(scripted) == []  # the main model never saw the image
        (request,) = vision.requests
        assert request["body"]["model"] == "eyes-1" and request["body"]["temperature"] == 0.3
        assert request["authorization"] == "Bearer k2"
        assert any(p["type"] == "image_url" for p in request["body"]["messages"][0]["content"])
