"""A cron job runs with the confinement of the session that made it, whoever starts it (red-team round 6 a03: a
job made by a session confined to ~/ws ran later in the scheduler's cwd and overwrote ~/projects/thesis/ch1.tex).
Real `hermes chat -q` makes the job through the cronjob tool; `hermes cron run --now` and `hermes cron daemon
--once`, started in HOME, run it under the real sandbox."""

from __future__ import annotations

import json

import pytest

from hermes_agent.terminal.sandbox.launcher import bwrap_problem, landlock_problem
from tests.helpers import model_config, run_hermes

MECHANISMS = [pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
              pytest.param("landlock", marks=pytest.mark.skipif(landlock_problem() is not None, reason="no Landlock"))]
ATTACK = "pwd; echo WIPED > ~/projects/thesis/ch1.tex; echo OK > here.txt; echo CRON > ~/cron_was_here"


def _call(tool: str, **args: object) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": args}]}


@pytest.fixture
def user(tmp_path):
    home = tmp_path / "home"
    (home / "projects" / "thesis").mkdir(parents=True)
    (home / "projects" / "thesis" / "ch1.tex").write_text("precious\n")
    (home / "ws").mkdir()
    (home / ".hermes").mkdir()
    return home


def _hermes(home, *args, cwd):
    return run_hermes(*args, home=home / ".hermes", cwd=str(cwd), env={"HOME": str(home)}, timeout=120)


def _jobs(home) -> list[dict]:
    return json.loads((home / ".hermes" / "cron" / "jobs.json").read_text())["jobs"]


@pytest.mark.parametrize("mech", MECHANISMS)
@pytest.mark.parametrize("starter", ["run-now", "daemon"])
def test_a_job_runs_in_the_workspace_of_the_session_that_made_it(scripted, user, mech, starter):
    model_config(user / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mech}\n")
    scripted.add(_call("cronjob", action="create", schedule="every 1h", prompt="tidy up", name="tidy"))
    scripted.add({"content": "scheduled"})
    made = _hermes(user, "chat", "-q", "schedule tidy", "--yolo", cwd=user / "ws")
    assert made.returncode == 0, made.stderr
    (job,) = _jobs(user)
    assert job["confinement"]["workspace"] == str((user / "ws").resolve())
    # the user later widens the sandbox: the job keeps the narrower one it was made with
    model_config(user / ".hermes", scripted.url,
                 f"sandbox:\n  mechanism: {mech}\n  writable_paths: [{user / 'projects'}]\n")
    scripted.add(_call("terminal", command=ATTACK))
    scripted.add({"content": "tidied"})
    if starter == "run-now":
        ran = _hermes(user, "cron", "run", job["id"], "--now", cwd=user)
    else:
        _hermes(user, "cron", "run", job["id"], cwd=user)
        ran = _hermes(user, "cron", "daemon", "--once", cwd=user)
    assert "tidied" in ran.stdout or f"job {job['id']}: ok" in ran.stdout, ran.stdout + ran.stderr
    tool_out = json.dumps(scripted.requests[-1]["body"]["messages"][-1])
    assert str((user / "ws").resolve()) in tool_out, tool_out
    assert (user / "projects" / "thesis" / "ch1.tex").read_text() == "precious\n"
    assert not (user / "cron_was_here").exists()
    assert (user / "ws" / "here.txt").read_text() == "OK\n"  # its own workspace is writable


def test_an_old_job_runs_in_its_workdir_or_not_at_all(scripted, user):
    """A job without a record (an older file, or Hermes's): confined to its workdir; with neither, one line."""
    model_config(user / ".hermes", scripted.url)
    made = _hermes(user, "cron", "create", "every 1h", "tidy up", "--name", "old", cwd=user / "ws")
    (job,) = _jobs(user)
    assert made.returncode == 0 and job["confinement"]["workspace"] == str((user / "ws").resolve())
    data = json.loads((user / ".hermes" / "cron" / "jobs.json").read_text())
    del data["jobs"][0]["confinement"]
    (user / ".hermes" / "cron" / "jobs.json").write_text(json.dumps(data))
    refused = _hermes(user, "cron", "run", job["id"], "--now", cwd=user)
    assert refused.returncode == 1 and scripted.requests == []
    assert (f"cron job 'old' ({job['id']}) records neither the workspace of the session that made it nor a workdir"
            in refused.stdout), refused.stdout
    assert "Traceback" not in refused.stdout + refused.stderr
    assert _hermes(user, "cron", "edit", job["id"], "--workdir", str(user / "ws"), cwd=user).returncode == 0
    scripted.add(_call("terminal", command=ATTACK))
    scripted.add({"content": "tidied"})
    ran = _hermes(user, "cron", "run", job["id"], "--now", cwd=user)
    assert ran.returncode == 0 and "tidied" in ran.stdout, ran.stdout + ran.stderr
    assert (user / "projects" / "thesis" / "ch1.tex").read_text() == "precious\n"
    assert (user / "ws" / "here.txt").read_text() == "OK\n"


def test_a_session_that_changes_a_job_narrows_it_to_its_own_confinement(scripted, user):
    """The cronjob tool's update: the job then does what this session said, so it gets no wider than this session:
    a session in another folder cannot take it over; one in a folder inside the job's narrows it there."""
    model_config(user / ".hermes", scripted.url)
    (user / "other").mkdir()
    (user / "ws" / "sub").mkdir()
    made = _hermes(user, "cron", "create", "every 1h", "tidy up", "--name", "tidy", cwd=user / "ws")
    (job,) = _jobs(user)
    assert made.returncode == 0
    for where, step in ((user / "other", "refused"), (user / "ws" / "sub", "narrowed")):
        scripted.add(_call("cronjob", action="update", job_id=job["id"], prompt=f"new prompt {step}"))
        scripted.add({"content": step})
        assert _hermes(user, "chat", "-q", "change the job", "--yolo", cwd=where).returncode == 0
    said = [json.dumps(r["body"]["messages"][-1]) for r in scripted.requests if r["body"]["messages"][-1]["role"] == "tool"]
    assert "not updated: this job works in" in said[0] and "make a new job from here" in said[0], said[0]
    (after,) = _jobs(user)
    assert after["prompt"] == "new prompt narrowed"
    assert after["confinement"]["workspace"] == str((user / "ws" / "sub").resolve())


def test_a_hermes_job_whose_workdir_is_home_runs_read_only(scripted, user):
    """rt12 a21: Hermes's `cron create --workdir ~` (or `/`) writes a job whose workdir is only where its tools
    start; without our record it must not become a workspace the job may write (every project in HOME).
    It runs there read-only, says so in one line, and `cron edit --workdir` to a project dir lets it write."""
    model_config(user / ".hermes", scripted.url)
    made = _hermes(user, "cron", "create", "every 1h", "tidy up", "--name", "ref", cwd=user / "ws")
    assert made.returncode == 0, made.stderr
    data = json.loads((user / ".hermes" / "cron" / "jobs.json").read_text())
    del data["jobs"][0]["confinement"]  # as Hermes writes it
    data["jobs"][0]["workdir"] = str(user)
    (user / ".hermes" / "cron" / "jobs.json").write_text(json.dumps(data))
    job = data["jobs"][0]
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": ATTACK}},
                                 {"name": "write_file", "arguments": {"path": str(user / "projects/notes.txt"),
                                                                      "content": "x"}}]})
    scripted.add({"content": "tidied"})
    ran = _hermes(user, "cron", "run", job["id"], "--now", cwd=user)
    shown = ran.stdout + ran.stderr
    assert "Traceback" not in shown
    assert len(scripted.requests) >= 2, shown  # the agent ran, read-only
    assert (user / "projects" / "thesis" / "ch1.tex").read_text() == "precious\n"
    assert not (user / "cron_was_here").exists() and not (user / "here.txt").exists()
    assert not (user / "projects/notes.txt").exists()
    log = (user / ".hermes" / "logs").rglob("*.log")
    said = shown + "".join(p.read_text(errors="replace") for p in log)
    assert "too broad to be its workspace" in said and "runs read-only" in said, said[-2000:]
