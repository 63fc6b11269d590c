"""The `rl` toolset through the real `hermes chat -q`: environments listed, training refused with what it
needs, a rollout-only run (`hermes batch run` over the environment's prompts, against the scripted model)
whose trajectories are scored by the environment's scorer, then its status and results."""

from __future__ import annotations

import json
import time

from tests.helpers import model_config, run_hermes


def _rollout_answer(text: str) -> str:
    """The rollout agents' model: right on every sum but 9 + 91."""
    nums = [int(w) for w in text.replace("?", " ").split() if w.isdigit()]
    return "99" if nums == [9, 91] else f"The answer is {sum(nums)}"


def _responder(body: dict) -> dict:
    msgs = body["messages"]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if "rl_start_training" not in tools:  # a rollout agent
        return {"content": _rollout_answer(next(m["content"] for m in msgs if m["role"] == "user"))}
    asked = next(m["content"] for m in msgs if m["role"] == "user")
    done = [json.loads(m["content"]) for m in msgs if m["role"] == "tool"]
    if asked.startswith("status "):
        run_id = asked.split()[1]
        steps = [("rl_check_status", {"run_id": run_id}), ("rl_get_results", {"run_id": run_id}), ("rl_list_runs", {})]
    else:
        steps = [("rl_list_environments", {}), ("rl_start_training", {"environment": "arithmetic", "mode": "train"}),
                 ("rl_start_training", {"environment": "arithmetic", "mode": "rollout", "toolsets": ["todo"]})]
    if len(done) < len(steps):
        name, args = steps[len(done)]
        return {"tool_calls": [{"name": name, "arguments": args}]}
    return {"content": "finished"}


def _tool_results(scripted) -> list[dict]:
    msgs = scripted.requests[-1]["body"]["messages"]
    return [json.loads(m["content"]) for m in msgs if m["role"] == "tool"]


def _last_outer(scripted) -> list[dict]:
    for req in reversed(scripted.requests):
        if "rl_start_training" in {t["function"]["name"] for t in req["body"].get("tools") or []}:
            return [json.loads(m["content"]) for m in req["body"]["messages"] if m["role"] == "tool"]
    return []


def test_rollout_run_scored_and_reported(scripted, hermes_home, tmp_path):
    scripted.default = _responder
    model_config(hermes_home, scripted.url, "  api_max_retries: 0\nrl:\n  workers: 2\n")
    out = run_hermes("chat", "-q", "start rollouts", "-t", "rl", home=hermes_home, input="", cwd=str(tmp_path),
                     timeout=120)
    assert out.returncode == 0, out.stderr
    envs, train, started = _last_outer(scripted)
    assert "arithmetic" in [e["name"] for e in envs["environments"]]
    assert "atroposlib is not installed" in envs["note"]
    assert "not available here: training needs the Tinker training service" in train["error"]
    assert started["status"] == "running" and started["prompts"] == 4
    run_dir = hermes_home / "rl" / "runs" / started["run_id"]
    deadline = time.monotonic() + 180
    while json.loads((run_dir / "run.json").read_text())["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "completed", (run_dir / "batch.log").read_text()[-2000:]
    scored = [json.loads(ln) for ln in (run_dir / "scored.jsonl").read_text().splitlines()]
    assert sorted(s["score"] for s in scored) == [0.0, 1.0, 1.0, 1.0]
    assert {s["answer"] for s in scored if s["score"] == 0.0} == {"100"}
    assert all(s["conversations"][-1]["from"] == "gpt" for s in scored)
    out = run_hermes("chat", "-q", f"status {started['run_id']}", "-t", "rl", home=hermes_home, input="",
                     cwd=str(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr
    status, results, runs = _last_outer(scripted)
    assert status["status"] == "completed" and status["prompts_done"] == 4 and status["result"]["mean_score"] == 0.75
    assert results["rollouts"] == 4 and results["correct"] == 3 and results["weights"] is None
    assert runs["runs"] == [{"run_id": started["run_id"], "environment": "arithmetic", "mode": "rollout",
                             "status": "completed", "prompts": 4, "prompts_done": 4, "mean_score": 0.75}]
