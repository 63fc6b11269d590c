"""The default first request stays small whatever extras are installed (issue 24): bytes as sent against
bench/budgets.json, the browser family behind browser_navigate, process behind terminal, and no tool whose
requirement check fails."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import model_config, run_hermes

BUDGET = json.loads((Path(__file__).resolve().parents[2] / "bench" / "budgets.json").read_text())["first_request_bytes"]


def test_default_first_request_is_within_budget(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "hi"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home, cwd="/tmp")
    assert out.returncode == 0, out.stderr
    first = scripted.requests[0]
    names = [t["function"]["name"] for t in first["body"]["tools"]]
    assert first["bytes"] <= BUDGET, f"{first['bytes']} B > {BUDGET} B: {names}"
    assert [n for n in names if n.startswith("browser_")] in ([], ["browser_navigate"])
    assert "process" not in names and "terminal" in names
    listed = run_hermes("tools", "list", home=hermes_home)
    unavailable = {n.strip() for ln in listed.stdout.splitlines() if ln.strip().startswith("unavailable:")
                   for n in ln.split(":", 1)[1].split("—")[0].split(",")}
    assert "image_generate" in unavailable  # no image backend configured here: never sent
    assert not unavailable & set(names), listed.stdout
