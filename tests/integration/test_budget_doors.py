"""Spending caps on the other doors, each a real `hermes` process against the scripted model that keeps calling
tools: the API server, a cron job run (budget.cron.*), a batch run (budget.batch.*) and the interactive REPL."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.helpers import HERMES, run_hermes
from tests.integration.test_budget import TOOL_STEP, _config, _spend, within_one_call


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    return {**env, "HERMES_HOME": str(home), **extra}


def test_api_server_turn_stops_at_the_session_cap(scripted, hermes_home):
    openai = pytest.importorskip("openai")
    pytest.importorskip("aiohttp")
    _config(hermes_home, scripted.url, "budget:\n  session_usd: 0.05\nplatform_toolsets:\n  api_server: [todo]\n")
    scripted.default = TOOL_STEP
    port, key = _free_port(), "test-key-0123456789abcdef"
    proc = subprocess.Popen([HERMES, "api"], env=_env(hermes_home, API_SERVER_PORT=str(port), API_SERVER_KEY=key),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert "listening on" in proc.stdout.readline()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key, max_retries=0, timeout=120)
        reply = client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "go"}])
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    text = reply.choices[0].message.content
    assert text.startswith("Budget reached: session cap $0.0500"), text
    within_one_call(text, hermes_home, 0.05)


def test_cron_run_stops_at_the_cron_cap(scripted, hermes_home):
    _config(hermes_home, scripted.url, "budget:\n  cron:\n    session_usd: 0.05\nplatform_toolsets:\n  cron: [todo]\n")
    scripted.default = TOOL_STEP
    out = run_hermes("cron", "create", "every 1h", "loop forever", "--name", "spender", home=hermes_home).stdout
    job = out.split("Created job ", 1)[1].split()[0]
    res = run_hermes("cron", "run", job, "--now", home=hermes_home, timeout=180)
    report = next((hermes_home / "cron" / "output" / job).glob("*.md")).read_text()
    assert "Budget reached: session cap $0.0500 (budget.cron.session_usd)" in report, res.stdout + report
    rows = _spend(hermes_home)
    assert rows and {r[1] for r in rows} == {"cron"}
    within_one_call(report, hermes_home, 0.05)


def test_batch_prompt_stops_at_the_batch_cap(scripted, hermes_home, tmp_path):
    _config(hermes_home, scripted.url, "budget:\n  batch:\n    session_usd: 0.05\n")
    scripted.default = TOOL_STEP
    data = tmp_path / "prompts.jsonl"
    data.write_text(json.dumps({"prompt": "loop forever"}) + "\n")
    res = subprocess.run([HERMES, "batch", "run", "--dataset", str(data), "--run-name", "b", "-t", "todo",
                          "--workers", "1"], cwd=tmp_path, env=_env(hermes_home, RAY_USAGE_STATS_ENABLED="0"),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr
    row = json.loads((tmp_path / "data/b/trajectories.jsonl").read_text().splitlines()[0])
    stopped = row["metadata"]["stopped"]
    assert row["partial"] and stopped.startswith("Budget reached: session cap $0.0500 (budget.batch.session_usd)")
    assert row["api_calls"] == 4 and "tool_response" in row["conversations"][-1]["value"]  # ends on a tool result
    rows = _spend(hermes_home)
    assert len(rows) == 4 and {r[1] for r in rows} == {"batch"}
    within_one_call(stopped, hermes_home, 0.05)


def test_dashboard_usage_page_shows_spend_against_each_cap(scripted, hermes_home):
    import http.cookiejar
    import urllib.request

    _config(hermes_home, scripted.url, "budget:\n  session_usd: 0.05\n  month_usd: 10\n")
    scripted.default = TOOL_STEP
    run_hermes("chat", "-q", "go", "-t", "todo", home=hermes_home, timeout=120)
    proc = subprocess.Popen([HERMES, "dashboard", "--port", "0", "--no-open"], env=_env(hermes_home),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        url = line.split("listening on ", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        opener.open(url, timeout=10).read()
        html = opener.open(url.split("/?", 1)[0] + "/usage", timeout=10).read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "<h2>Spending caps</h2>" in html, html[-2000:]
    assert "budget.session_usd" in html and "$0.0440" in html and "$0.0500" in html and "88%" in html
    assert "budget.month_usd" in html and "$10.00" in html
