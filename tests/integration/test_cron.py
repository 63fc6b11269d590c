"""Cron through the real `hermes` CLI: two daemons against one home run each due tick once, a restart
neither repeats nor drops a due run, failures are recorded, Hermes's own jobs file is read."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config, other_hermes_skip, run_hermes

HERMES_REF = Path(os.environ.get("HERMES_REF_BIN") or "/work/hermes-ref/bin/hermes")


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    return {**env, "HERMES_HOME": str(home)}


def _job_id(out: str) -> str:
    return out.split("Created job ", 1)[1].split()[0]


def _runs_of(scripted, prompt: str) -> list[float]:
    """Arrival times of model requests whose last user message is `prompt` (one per job run)."""
    times = []
    for req in scripted.requests:
        users = [m for m in req["body"].get("messages", []) if m.get("role") == "user"]
        if users and users[-1].get("content") == prompt:
            times.append(req["time"])
    return times


def _jobs(home: Path) -> list[dict]:
    return json.loads((home / "cron" / "jobs.json").read_text())["jobs"]


def test_two_daemons_run_each_tick_exactly_once(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    job = _job_id(run_hermes("cron", "create", "every 3s", "tick prompt", "--name", "fast", home=hermes_home).stdout)
    daemons = [subprocess.Popen([HERMES, "cron", "daemon", "--interval", "0.2"], env=_env(hermes_home),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    try:
        time.sleep(2)
        assert "running (pid" in run_hermes("cron", "status", home=hermes_home).stdout
        time.sleep(9.5)
    finally:
        for d in daemons:
            d.send_signal(signal.SIGTERM)
        outs = [d.communicate(timeout=30)[0] for d in daemons]
    runs = _runs_of(scripted, "tick prompt")
    assert 2 <= len(runs) <= 4, (runs, outs)
    reported = sum(o.count(f"job {job}: ok") for o in outs)
    saved = _jobs(hermes_home)[0]
    assert saved["repeat"]["completed"] == reported == len(runs) and saved["last_status"] == "ok"
    files = list((hermes_home / "cron" / "output" / job).glob("*.md"))
    assert len(files) == len(runs)
    started = sorted(datetime.fromisoformat(f.read_text().split("**Run Time:** ")[1].split()[0]) for f in files)
    gaps = [(b - a).total_seconds() for a, b in zip(started, started[1:], strict=False)]
    assert min(gaps) >= 2.9, gaps  # a second scheduler claiming the same tick would start a run ~0 s later


def test_restart_runs_a_missed_job_once_and_never_repeats(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    job = _job_id(run_hermes("cron", "create", "every 1h", "restart prompt", home=hermes_home).stdout)
    run_hermes("cron", "run", job, home=hermes_home)  # due now
    assert "job " + job + ": ok" in run_hermes("cron", "daemon", "--once", home=hermes_home).stdout
    assert len(_runs_of(scripted, "restart prompt")) == 1
    store = hermes_home / "cron" / "jobs.json"  # the scheduler was down for two due times (no sleep: the
    data = json.loads(store.read_text())      # clock is moved, so a slow machine cannot make it due again)
    data["jobs"][0]["next_run_at"] = (datetime.now(UTC) - timedelta(hours=2, minutes=1)).isoformat()
    store.write_text(json.dumps(data))
    first = run_hermes("cron", "daemon", "--once", home=hermes_home).stdout
    again = run_hermes("cron", "daemon", "--once", home=hermes_home).stdout
    assert first.count(f"job {job}: ok") == 1 and job not in again
    assert len(_runs_of(scripted, "restart prompt")) == 2
    output = sorted((hermes_home / "cron" / "output" / job).glob("*.md"))[-1].read_text()
    assert "## Response\n\nok" in output and "restart prompt" in output


def test_failing_job_is_recorded_as_a_failure(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"error": {"status": 401, "message": "bad key for cron"}})
    job = _job_id(run_hermes("cron", "create", "every 1h", "doomed", "--deliver", "telegram:123",
                             home=hermes_home).stdout)
    res = run_hermes("cron", "run", job, "--now", home=hermes_home)
    assert res.returncode == 1 and "FAILED" in res.stdout and "bad key for cron" in res.stdout
    listing = run_hermes("cron", "list", home=hermes_home).stdout
    assert "error" in listing and "bad key for cron" in listing
    saved = _jobs(hermes_home)[0]
    assert saved["last_status"] == "error" and "telegram:123" in saved["last_delivery_error"]
    assert "## FAILED" in next((hermes_home / "cron" / "output" / job).glob("*.md")).read_text()


def test_one_shot_runs_once_then_completes(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    job = _job_id(run_hermes("cron", "create", "in 20m", "once only", home=hermes_home).stdout)
    assert _jobs(hermes_home)[0]["schedule"]["kind"] == "once"
    run_hermes("cron", "run", job, home=hermes_home)
    run_hermes("cron", "daemon", "--once", home=hermes_home)
    run_hermes("cron", "daemon", "--once", home=hermes_home)
    assert len(_runs_of(scripted, "once only")) == 1
    assert _jobs(hermes_home)[0]["state"] == "completed"
    assert job not in run_hermes("cron", "list", home=hermes_home).stdout


def test_pause_resume_edit_remove(hermes_home):
    job = _job_id(run_hermes("cron", "create", "0 8 * * *", "inbox", "--name", "morning", home=hermes_home).stdout)
    run_hermes("cron", "pause", "morning", home=hermes_home)
    assert "[paused]" in run_hermes("cron", "list", home=hermes_home).stdout
    run_hermes("cron", "resume", job, home=hermes_home)
    run_hermes("cron", "edit", job, "--schedule", "every 2h", home=hermes_home)
    listing = run_hermes("cron", "list", home=hermes_home).stdout
    assert "[scheduled]" in listing and "every 120m" in listing
    assert run_hermes("cron", "remove", job, home=hermes_home).returncode == 0
    assert "No scheduled jobs" in run_hermes("cron", "list", home=hermes_home).stdout
    bad = run_hermes("cron", "create", "whenever", "x", home=hermes_home)
    assert bad.returncode == 1 and "every 30m" in bad.stderr


@pytest.mark.skipif(bool(other_hermes_skip(HERMES_REF)), reason=f"the released Hermes: {other_hermes_skip(HERMES_REF)}")
def test_jobs_written_by_hermes_are_listed_and_run(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    res = subprocess.run([str(HERMES_REF), "cron", "create", "every 30m", "hermes made me", "--name", "theirs"],
                         env=_env(hermes_home), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    listing = run_hermes("cron", "list", home=hermes_home).stdout
    assert "theirs" in listing and "every 30m" in listing
    job = _jobs(hermes_home)[0]["id"]
    run_hermes("cron", "run", job, home=hermes_home)
    # Hermes records no workspace and no workdir: not run anywhere until the user gives it one (rt6 a03)
    refused = run_hermes("cron", "daemon", "--once", home=hermes_home).stdout
    assert f"job {job}: FAILED: cron job 'theirs' ({job}) records neither the workspace" in refused, refused
    assert f"hermes cron edit {job} --workdir DIR" in refused and scripted.requests == []
    assert run_hermes("cron", "edit", job, "--workdir", str(tmp_path), home=hermes_home).returncode == 0
    run_hermes("cron", "run", job, home=hermes_home)
    assert f"job {job}: ok" in run_hermes("cron", "daemon", "--once", home=hermes_home).stdout
    back = subprocess.run([str(HERMES_REF), "cron", "list"], env=_env(hermes_home), capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert "theirs" in back.stdout and shutil.which("true")


def test_a_run_over_its_timeout_is_stopped_and_recorded(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "too late", "stall": 30})
    job = _job_id(run_hermes("cron", "create", "every 1h", "slow job", home=hermes_home).stdout)
    t0 = time.monotonic()
    res = run_hermes("cron", "run", job, "--now", home=hermes_home, env={"HERMES_CRON_TIMEOUT": "1"})
    assert res.returncode == 1 and "timed out after 1s" in res.stdout
    assert time.monotonic() - t0 < 20  # the answer would take 30 s
    assert _jobs(hermes_home)[0]["last_error"] == "timed out after 1s"


def test_a_job_whose_maker_is_now_a_guest_does_not_run(scripted, hermes_home):
    model_config(hermes_home, scripted.url, "team:\n  people:\n    'telegram:1': owner\n    'telegram:3': guest\n")
    made = run_hermes("cron", "create", "every 1h", "do the thing", home=hermes_home)
    job_id = made.stdout.split()[2]
    jobs_file = hermes_home / "cron" / "jobs.json"
    data = json.loads(jobs_file.read_text())
    data["jobs"][0]["created_by"] = "telegram:3"  # made by someone since demoted to guest
    jobs_file.write_text(json.dumps(data))
    out = run_hermes("cron", "run", job_id, "--now", home=hermes_home)
    assert out.returncode == 1 and out.stdout.startswith("FAILED: telegram:3 is a guest now and guests cannot have "
                                                         "cron jobs"), out.stdout + out.stderr
    assert scripted.requests == []  # no model call
    assert "owner: telegram:3 (guest)" in run_hermes("cron", "list", home=hermes_home).stdout
