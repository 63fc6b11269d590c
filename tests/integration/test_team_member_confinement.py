"""Team mode, red-team round 6 a08: a member's session (API server, own key, `X-Hermes-User`) sees only what
is theirs: their own folder, the shared team folder, tool directories. The owner's HOME (a 0600 diary, project
.env files) and the Hermes home (files people sent in chat) are unreadable to the terminal and the file tools
alike, under either sandbox mechanism; the owner's own sessions still read them."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from hermes_agent.terminal.sandbox.launcher import bwrap_problem, landlock_problem
from tests.helpers import HERMES, model_config
from tests.integration.test_api_server import KEY, _free_port
from tests.integration.test_api_team import _post
from tests.integration.test_gateway_team import _text

pytest.importorskip("aiohttp")
BOB = "bob-key-0123456789abcdef"
SECRETS = ("OWNER-DIARY-41", "OWNERDBPASS-41", "OWNER-SENT-DOC-41")


def _brain(body: dict) -> dict:
    """`run CMD` -> terminal, `read PATH` -> read_file, `write PATH TEXT` -> write_file; a tool result is echoed."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": "tool said: " + _text(last)[:1500]}
    text = _text(last).strip().splitlines()[-1]
    verb, _, rest = text.partition(" ")
    if verb == "run":
        return {"tool_calls": [{"name": "terminal", "arguments": {"command": rest}}]}
    if verb == "read":
        return {"tool_calls": [{"name": "read_file", "arguments": {"path": rest}}]}
    if verb == "schedule":
        return {"tool_calls": [{"name": "cronjob", "arguments": {"action": "create", "schedule": "every 1h",
                                                                  "prompt": rest, "name": "bobs"}}]}
    if verb == "write":
        path, _, content = rest.partition(" ")
        return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}
    return {"content": "echo: " + text}


@pytest.fixture(params=[
    pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="no bwrap")),
    pytest.param("landlock", marks=pytest.mark.skipif(landlock_problem() is not None, reason="no Landlock"))])
def owner(request, scripted, tmp_path):
    """An owner's HOME with private files, a team with member bob, and `hermes api` running as that owner."""
    home = tmp_path / "owner"
    hh = home / ".hermes"
    (hh / "cache" / "documents").mkdir(parents=True)
    (home / "Documents").mkdir(parents=True)
    (home / "projects" / "app").mkdir(parents=True)
    diary = home / "Documents" / "diary.txt"
    diary.write_text(SECRETS[0] + "\n")
    diary.chmod(0o600)
    (home / "projects" / "app" / ".env").write_text(f"DB_PASSWORD={SECRETS[1]}\n")
    (hh / "cache" / "documents" / "doc_contract.txt").write_text(SECRETS[2] + "\n")
    (home / "team" / "shared").mkdir(parents=True)
    (home / "team" / "shared" / "plan.txt").write_text("SHARED-PLAN\n")
    scripted.default = _brain
    model_config(hh, scripted.url,
                 f"sandbox:\n  mechanism: {request.param}\n"
                 f"team:\n  people:\n    'api:bob': member\n  workspace_root: {home / 'team'}\n"
                 f"  shared: {home / 'team' / 'shared'}\n  api_keys:\n    bob: {BOB}\n")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    env.update(HOME=str(home), HERMES_HOME=str(hh), API_SERVER_PORT=str(port), API_SERVER_KEY=KEY)
    proc = subprocess.Popen([HERMES, "api"], env=env, cwd=home,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "listening on" in proc.stdout.readline()
    yield home, f"http://127.0.0.1:{port}/v1", request.param
    proc.terminate()
    proc.wait(timeout=20)


def test_a_member_reads_only_what_is_theirs(owner):
    home, url, _ = owner
    mine = home / "team" / "api_bob"
    files = f"{home}/Documents/diary.txt {home}/projects/app/.env {home}/.hermes/cache/documents/doc_contract.txt"
    status, reply, _ = _post(url, f"run pwd; cat {files}; ls {home}/projects", "bob", BOB)
    assert status == 200 and str(mine) in reply, reply
    assert not any(s in reply for s in SECRETS), reply
    assert _post(url, "run echo BOB > mine.txt", "bob", BOB)[0] == 200
    assert (mine / "mine.txt").read_text() == "BOB\n"
    for path in (f"{home}/Documents/diary.txt", f"{home}/projects/app/.env",
                 f"{home}/.hermes/cache/documents/doc_contract.txt", "~/Documents/diary.txt"):
        status, reply, _ = _post(url, f"read {path}", "bob", BOB)
        assert status == 200 and not any(s in reply for s in SECRETS), reply
        assert "private" in reply or "denied" in reply.lower(), reply
    # what is theirs: their folder and the shared team folder (read and write)
    assert "SHARED-PLAN" in _post(url, f"read {home}/team/shared/plan.txt", "bob", BOB)[1]
    status, reply, _ = _post(url, f"run cat {home}/team/shared/plan.txt && echo NOTE >> {home}/team/shared/plan.txt",
                             "bob", BOB)
    assert "SHARED-PLAN" in reply and (home / "team" / "shared" / "plan.txt").read_text() == "SHARED-PLAN\nNOTE\n"
    assert "BOB" in _post(url, f"read {mine}/mine.txt", "bob", BOB)[1]


def test_the_owners_sessions_are_unchanged(owner):
    home, url, _ = owner
    status, reply, _ = _post(url, f"read {home}/Documents/diary.txt", None, KEY)
    assert status == 200 and SECRETS[0] in reply, reply
    status, reply, _ = _post(url, f"run cat {home}/projects/app/.env", None, KEY)
    assert status == 200 and SECRETS[1] in reply, reply
    assert json.dumps(reply)  # well-formed


def test_a_members_cron_job_stays_theirs_after_a_promotion(owner, scripted):
    """Bob (member) schedules a job; the owner then makes him an admin in config and runs the job in HOME: the
    run is still confined as the member who made it (his folder; the owner's files hidden)."""
    home, url, mech = owner
    status, reply, _ = _post(url, "schedule run pwd; cat ~/Documents/diary.txt", "bob", BOB)
    assert status == 200 and "created" in reply, reply
    job = json.loads((home / ".hermes" / "cron" / "jobs.json").read_text())["jobs"][0]
    assert job["created_by"] == "api:bob" and job["confinement"]["role"] == "member"
    cfg = home / ".hermes" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("'api:bob': member", "'api:bob': admin"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HOME=str(home), HERMES_HOME=str(home / ".hermes"))
    ran = subprocess.run([HERMES, "cron", "run", job["id"], "--now"], env=env, cwd=home, capture_output=True,
                         text=True, timeout=120)
    assert "tool said" in ran.stdout, ran.stdout + ran.stderr
    assert str(home / "team" / "api_bob") in ran.stdout and SECRETS[0] not in ran.stdout, ran.stdout
