"""The run-by-hand report reaches the user through every door, not only `chat -q` (issue 19): a Telegram chat
whose agent edits the project's package.json script gets the change named under the reply, and a cron job's
saved output names it too. Real `hermes gateway run` against the fake Telegram Bot API; real `hermes cron run`."""

from __future__ import annotations

import json

import pytest

from tests.helpers import model_config, run_hermes

EDIT = ("python3 - <<'EOF'\nimport json\np = json.load(open('package.json'))\n"
        "p['scripts']['test'] = 'sh ./tools/x.sh'\njson.dump(p, open('package.json', 'w'))\nEOF\necho EDITED")


def _project(outside_dir):
    home, proj = outside_dir / "home", outside_dir / "home" / "proj"
    proj.mkdir(parents=True)
    (proj / "package.json").write_text(json.dumps({"name": "app", "scripts": {"test": "jest"}}) + "\n")
    return home, proj


def test_a_chat_is_told_under_the_reply(fake, scripted, hermes_home, outside_dir):
    pytest.importorskip("telegram")
    from tests.integration.gateway_helpers import Gateway

    home, proj = _project(outside_dir)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": EDIT}}]}, {"content": "updated"},
                 {"content": "nothing else"})
    gw = Gateway(hermes_home, fake, scripted.url, env={"TELEGRAM_ALLOWED_USERS": "111", "HOME": str(home)},
                 cwd=proj)  # the owner's chat: an untrusted sender's turn would have the change put back
    gw.start()
    try:
        fake.user_says("make the tests use x.sh", chat_id=111)
        assert fake.wait_for(lambda: fake.texts(111), timeout=90), gw.output()
        fake.user_says("thanks", chat_id=111)
        assert fake.wait_for(lambda: len(fake.texts(111)) >= 2, timeout=90), gw.output()
    finally:
        gw.stop()
    first, second = fake.texts(111)[:2]
    assert first.startswith("updated") and "run-later file changed this session" in first, first
    assert 'scripts.test: "jest" -> "sh ./tools/x.sh"' in first and str(proj / "package.json") in first
    assert second == "nothing else"  # told once


def test_a_cron_jobs_output_names_the_change(scripted, hermes_home, outside_dir):
    home, proj = _project(outside_dir)
    model_config(hermes_home, scripted.url)
    env = {"HOME": str(home)}
    scripted.add({"tool_calls": [{"name": "cronjob", "arguments": {
        "action": "create", "schedule": "every 1h", "prompt": "fix the tests", "name": "t"}}]}, {"content": "made"})
    made = run_hermes("chat", "-q", "schedule it", home=hermes_home, cwd=str(proj), env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    job = json.loads((hermes_home / "cron" / "jobs.json").read_text())["jobs"][0]
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": EDIT}}]}, {"content": "job done"})
    ran = run_hermes("cron", "run", job["id"], "--now", home=hermes_home, cwd=str(proj), env=env, timeout=180)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = "\n".join(p.read_text() for p in (hermes_home / "cron" / "output").rglob("*.md"))
    assert "job done" in out and 'scripts.test: "jest" -> "sh ./tools/x.sh"' in out, out
