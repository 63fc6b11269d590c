"""mixture_of_agents through `hermes chat -q`: references in parallel (one slow, one failing), one aggregator."""

from __future__ import annotations

import json

from tests.helpers import model_config, run_hermes

MOA = """moa:
  timeout: 1.5
  presets:
    default:
      reference_models:
        - {{provider: custom, model: ref-a, base_url: {url}}}
        - {{provider: custom, model: ref-b, base_url: {url}}}
        - {{provider: custom, model: ref-slow, base_url: {url}}}
        - {{provider: custom, model: ref-broken, base_url: {url}}}
      aggregator: {{provider: custom, model: agg, base_url: {url}}}
      max_tokens: 500
"""


def _answer(body: dict) -> dict:
    model, messages = body["model"], body["messages"]
    if model == "ref-a":
        return {"content": "Answer A: the sum is 42."}
    if model == "ref-b":
        return {"content": "Answer B: 42, by pairing terms."}
    if model == "ref-slow":
        return {"content": "too late", "delay": 6}
    if model == "ref-broken":
        return {"error": {"status": 500, "message": "backend exploded"}}
    if model == "agg":
        return {"content": "SYNTH from: " + messages[0]["content"][-200:].replace("\n", " ")}
    if messages[-1]["role"] == "tool":
        return {"content": "Main saw: " + messages[-1]["content"]}
    return {"tool_calls": [{"name": "mixture_of_agents", "arguments": {"user_prompt": "What is the sum?"}}]}


def test_moa_merges_the_answers_that_arrive_and_names_the_rest(scripted, hermes_home):
    scripted.default = _answer
    model_config(hermes_home, scripted.url, MOA.format(url=scripted.url))
    res = run_hermes("chat", "-q", "hard question", "-t", "moa", home=hermes_home, timeout=90)
    assert res.returncode == 0, res.stdout + res.stderr
    tool_msg = next(r["body"]["messages"][-1]["content"] for r in scripted.requests
                    if r["body"]["model"] == "scripted-model" and r["body"]["messages"][-1]["role"] == "tool")
    result = json.loads(tool_msg)
    assert result["response"].startswith("SYNTH from:") and "Answer A" in result["response"] \
        and "Answer B" in result["response"]
    assert sorted(result["models"]) == ["custom/ref-a", "custom/ref-b"]
    failed = " ".join(result["failed"])
    assert "ref-slow: no answer within 1.5s" in failed and "ref-broken" in failed
    assert result["seconds"] < 5
    refs = [r for r in scripted.requests if r["body"]["model"].startswith("ref-")]
    assert all(r["body"]["messages"] == [{"role": "user", "content": "What is the sum?"}] for r in refs)
    assert "Main saw:" in res.stdout


def test_moa_without_configured_models_is_not_offered_and_says_why(scripted, hermes_home):
    scripted.add({"content": "fine"})
    model_config(hermes_home, scripted.url)
    res = run_hermes("chat", "-q", "hard question", "-t", "moa,todo", home=hermes_home, timeout=60)
    offered = [t["function"]["name"] for t in scripted.requests[0]["body"].get("tools") or []]
    assert "todo" in offered and "mixture_of_agents" not in offered
    listed = run_hermes("tools", "list", home=hermes_home)
    assert "moa.presets.<active or default preset>.reference_models" in listed.stdout, res.stdout + res.stderr


def test_moa_rows_naming_the_main_custom_provider_use_its_endpoint(scripted, hermes_home):
    """`provider: custom` without a base_url, beside a custom main model: Hermes users write this."""
    scripted.default = _answer
    rows = "moa:\n  presets:\n    default:\n      reference_models:\n        - {provider: custom, model: ref-a}\n" \
           "      aggregator: {provider: custom, model: agg}\n"
    model_config(hermes_home, scripted.url, rows)
    res = run_hermes("chat", "-q", "hard question", "-t", "moa", home=hermes_home, timeout=90)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Main saw:" in res.stdout and "SYNTH from:" in res.stdout and "needs model.base_url" not in res.stdout


def test_a_preset_turned_off_as_hermes_users_write_it_says_so(scripted, hermes_home):
    """`enabled: no` is False for the released Hermes's YAML 1.1 loader: the same here, and the model is told."""
    scripted.default = _answer
    model_config(hermes_home, scripted.url, MOA.format(url=scripted.url) + "      enabled: no\n")
    res = run_hermes("chat", "-q", "hard question", "-t", "moa", home=hermes_home, timeout=90)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "the MoA preset 'default' is turned off (moa.presets.default.enabled)" in res.stdout
    assert not [r for r in scripted.requests if r["body"]["model"].startswith("ref-")]
