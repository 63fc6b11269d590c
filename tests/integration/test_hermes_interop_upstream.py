"""What a Hermes user set up keeps working here, both ways, against the real released Hermes 0.19.0
($HERMES_REF_BIN, its own venv) and, where it differs, the upstream-tracking build ($HERMES_UPSTREAM_BIN):
cron script jobs and skills, checkpoints, bundled skills, a Telegram chat's session. Each test skips when
the program it needs is not installed."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import warnings
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import other_hermes_skip, run_hermes

REF = os.environ.get("HERMES_REF_BIN") or "/work/ci/hermes-ref/bin/hermes"
UPSTREAM = os.environ.get("HERMES_UPSTREAM_BIN") or "/work/ci/hermes-upstream/bin/hermes"
needs_ref = pytest.mark.skipif(bool(other_hermes_skip(REF)), reason=f"the released Hermes: {other_hermes_skip(REF)}")
PROGRAMS = [pytest.param(REF, id="hermes-0.19.0", marks=needs_ref),
            pytest.param(UPSTREAM, id="hermes-upstream", marks=pytest.mark.skipif(
                bool(other_hermes_skip(UPSTREAM)), reason=f"the upstream-tracking Hermes: {other_hermes_skip(UPSTREAM)}"))]


def other(program: str, *args: str, home: Path, timeout: float = 240, cwd: Path | None = None,
          env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a Hermes (0.19.0 or upstream) with HERMES_HOME=home and a private HOME."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_"))}
    user_home = home.parent / "user-home"
    user_home.mkdir(exist_ok=True)
    clean.update(HERMES_HOME=str(home), HOME=str(user_home), NO_COLOR="1", **(env or {}))
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=timeout, env=clean,
                          cwd=str(cwd or home.parent))


def ok(proc: subprocess.CompletedProcess) -> str:
    if proc.returncode == -11 and "hermes --resume" in proc.stdout:
        # Seen once in CI under load: upstream's process segfaulted in interpreter teardown AFTER printing the whole
        # session summary (its work was done and saved). That is the other program's bug, not a home it cannot use.
        warnings.warn(f"{proc.args[0]} crashed (SIGSEGV) at exit after finishing: {proc.args[1:]}", stacklevel=2)
        return proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
    return proc.stdout


def python_of(program: str) -> str:
    return str(Path(program).parent / "python")


def write_config(home: Path, url: str, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  default: scripted-model\n  base_url: {url}\n  api_key: test-key\n"
        "auxiliary:\n  title_generation:\n    enabled: false\n" + extra, encoding="utf-8")


@pytest.fixture
def server():
    with ScriptedServer(default={"content": "ok"}) as s:
        yield s


@pytest.fixture
def home(tmp_path, server) -> Path:
    h = tmp_path / "home"
    write_config(h, server.url)
    (tmp_path / "work").mkdir()
    return h


def job_id(out: str) -> str:
    return re.search(r"Created job:? (\w+)", out).group(1)


def jobs(home: Path) -> list[dict]:
    return json.loads((home / "cron" / "jobs.json").read_text(encoding="utf-8"))["jobs"]


# -- 4. cron -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("program", PROGRAMS)
def test_no_agent_script_job_runs_sandboxed_without_a_model_call(program, home, server):
    scripts = home / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "wd.sh").write_text('echo "disk at 91%"\necho noise >&2\n'
                                   'touch ../planted.txt 2>/dev/null && echo WROTE-HOME || echo write-refused\n')
    ok(other(program, "cron", "create", "every 1h", "--no-agent", "--script", "wd.sh", "--name", "wd", home=home))
    (job,) = jobs(home)
    assert job["no_agent"] is True and job["script"] == "wd.sh"

    ran = run_hermes("cron", "run", job["id"], "--now", home=home, cwd=str(home.parent / "work"))
    assert ran.returncode == 0, ran.stderr
    assert "disk at 91%" in ran.stdout and "write-refused" in ran.stdout  # the script ran, inside the sandbox
    assert "noise" not in ran.stdout  # stdout is what is delivered, as Hermes does
    assert not (home / "planted.txt").exists()
    assert server.requests == []  # no model was asked
    (output,) = (home / "cron" / "output" / job["id"]).glob("*.md")
    assert "**Mode:** no_agent (script)" in output.read_text() and "disk at 91%" in output.read_text()
    assert jobs(home)[0]["last_status"] == "ok"

    runs = ok(other(program, "cron", "runs", home=home))  # Hermes's own history shows our run
    assert f"completed  job={job['id']}" in runs
    assert "ok" in ok(other(program, "cron", "list", home=home)).split("Last run:", 1)[1].splitlines()[0]


@needs_ref
def test_failed_and_silent_script_jobs(home, server):
    scripts = home / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "broken.sh").write_text("echo half-done\necho 'disk probe failed' >&2\nexit 4\n")
    (scripts / "quiet.py").write_text("print('checked')\nprint('{\"wakeAgent\": false}')\n")
    ids = [job_id(ok(other(REF, "cron", "create", "every 1h", "--no-agent", "--script", name, home=home)))
           for name in ("broken.sh", "quiet.py")]
    broken = run_hermes("cron", "run", ids[0], "--now", home=home, cwd=str(home.parent / "work"))
    assert broken.returncode == 1 and "Script exited with code 4" in broken.stdout
    assert "disk probe failed" in broken.stdout
    quiet = run_hermes("cron", "run", ids[1], "--now", home=home, cwd=str(home.parent / "work"))
    assert quiet.returncode == 0 and "[SILENT]" in quiet.stdout
    assert server.requests == []
    runs = ok(other(REF, "cron", "runs", home=home))
    assert f"failed     job={ids[0]}" in runs and f"completed  job={ids[1]}" in runs
    assert "Script exited with code 4" in runs


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_jobs_skills_are_sent_to_the_model(program, home, server):
    skill = home / "skills" / "research" / "tide-report"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tide-report\ndescription: Report the tides.\n---\n\n"
                                    "# Tide report\n\nAlways quote the harbour code HX-7731 first.\n")
    ok(other(program, "cron", "create", "every 1h", "give the tide report", "--skill", "tide-report",
             "--name", "tides", home=home))
    (job,) = jobs(home)
    # Hermes records no workspace: refused (one line, no model call) until the user gives it one (rt6 a03)
    refused = run_hermes("cron", "run", job["id"], "--now", home=home, cwd=str(home.parent / "work"))
    assert refused.returncode == 1 and "records neither the workspace" in refused.stdout and not server.requests
    (home.parent / "work").mkdir(exist_ok=True)
    ok(run_hermes("cron", "edit", job["id"], "--workdir", str(home.parent / "work"), home=home))
    server.add({"content": "HX-7731: high tide at noon."})
    ran = run_hermes("cron", "run", job["id"], "--now", home=home, cwd=str(home.parent / "work"))
    assert ran.returncode == 0 and "HX-7731: high tide" in ran.stdout, ran.stderr
    sent = repr(server.requests[-1]["body"]["messages"])
    assert "Always quote the harbour code HX-7731 first." in sent and "give the tide report" in sent


@needs_ref
def test_fields_we_do_not_know_survive_our_rewrites(home):
    ok(other(REF, "cron", "create", "every 1h", "ping", "--name", "keeper", home=home))
    path = home / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    data["jobs"][0].update(monitor_script="mon.sh", failure_streak=2, pinned=True, interpreter="bash")
    data["schema_hint"] = {"from": "upstream"}
    path.write_text(json.dumps(data))
    assert run_hermes("cron", "pause", "keeper", home=home).returncode == 0
    assert run_hermes("cron", "resume", "keeper", home=home).returncode == 0
    after = json.loads(path.read_text())
    assert after["schema_hint"] == {"from": "upstream"}
    job = after["jobs"][0]
    assert (job["monitor_script"], job["failure_streak"], job["pinned"], job["interpreter"]) == ("mon.sh", 2, True, "bash")
    assert job["enabled"] is True and "keeper" in ok(other(REF, "cron", "list", home=home))


def test_a_paused_marker_from_upstream_is_honoured(home, server):
    run = run_hermes("cron", "create", "every 1h", "ping", "--name", "held", home=home)
    path = home / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    data["jobs"][0].update(next_run_at="2000-01-01T00:00:00+00:00", state="paused", paused_at="2026-09-01T00:00:00+00:00")
    path.write_text(json.dumps(data))
    assert run.returncode == 0
    tick = run_hermes("cron", "daemon", "--once", home=home)
    assert tick.returncode == 0 and "job " not in tick.stdout and server.requests == []


# -- 7. bundled skills -----------------------------------------------------------------------------------


def _local_skills(listing: str) -> set[str]:
    """Names Hermes's `skills list` shows with source `local` (the user's own)."""
    names = set()
    for line in listing.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│") if c.strip()]
        if len(cells) >= 3 and cells[2] == "local":
            names.add(cells[0])
    return names


@pytest.mark.parametrize("program", PROGRAMS)
def test_our_bundled_skills_never_show_as_the_users_in_hermes(program, home, server, tmp_path):
    from hermes_agent.skills.bundled import MANIFEST, bundled_skills
    from hermes_agent.skills.fsutil import content_hash, copy_skill

    ours = {name for _, name, _ in bundled_skills()}
    skills = home / "skills"
    mine = skills / "notes" / "my-runbook"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: my-runbook\ndescription: How I deploy.\n---\n\nRun make deploy.\n")
    # a home an earlier version of ours used: its bundled skills copied into the shared folder
    lines = []
    for category, name, src in bundled_skills():
        copy_skill(src, skills / category / name)
        lines.append(f"{name}:{content_hash(src, 'md5')}\n")
    (skills / MANIFEST).write_text("".join(lines))
    assert ours <= _local_skills(ok(other(program, "skills", "list", home=home)))  # the problem being fixed

    server.add({"content": "hello"})
    assert run_hermes("chat", "-q", "hi", home=home, cwd=str(tmp_path / "work")).returncode == 0
    assert "git-workflow" in server.requests[-1]["body"]["messages"][0]["content"]  # ours still offer them

    assert _local_skills(ok(other(program, "skills", "list", home=home))) == {"my-runbook"}
    server.add({"content": "hello from hermes"})
    ok(other(program, "chat", "-q", "hi", home=home))
    hermes_prompt = server.requests[-1]["body"]["messages"][0]["content"]
    assert "my-runbook" in hermes_prompt and not [n for n in ours if n in hermes_prompt]


# -- 6. checkpoints --------------------------------------------------------------------------------------

HERMES_LIST = """
import json, sys
from tools.checkpoint_manager import CheckpointManager
print(json.dumps(CheckpointManager(enabled=True).list_checkpoints(sys.argv[1])))
"""
HERMES_RESTORE = """
import json, sys
from tools.checkpoint_manager import CheckpointManager
print(json.dumps(CheckpointManager(enabled=True).restore(sys.argv[1], sys.argv[2])))
"""


@contextlib.contextmanager
def sessions_set_aside(home: Path):
    """Upstream's state.db (schema v31) is not writable by this branch yet (issue 23 item 1, another
    branch): while ours chats on such a home, its sessions file is moved aside, and put back after."""
    if not (home / "state.db").exists() or run_hermes("sessions", "list", home=home).returncode == 0:
        yield
        return
    aside = home.parent / "state-aside"
    aside.mkdir()
    files = [p for p in home.glob("state.db*")]
    for p in files:
        p.rename(aside / p.name)
    try:
        yield
    finally:
        for p in home.glob("state.db*"):
            p.unlink()
        for p in files:
            (aside / p.name).rename(p)


def hermes_py(program: str, code: str, *args: str, home: Path) -> object:
    """Hermes's own checkpoint code (its venv), on this home."""
    return json.loads(ok(other(python_of(program), "-c", code, *args, home=home)).strip().splitlines()[-1])


def _rewrite(path: Path, text: str) -> tuple[dict, ...]:
    """Model steps: read the file (upstream refuses to overwrite an unread one), write it, answer."""
    return ({"tool_calls": [{"name": "read_file", "arguments": {"path": str(path)}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": str(path), "content": text}}]},
            {"content": "written"})


@pytest.mark.parametrize("program", PROGRAMS)
def test_checkpoints_are_listed_and_restored_by_the_other_program(program, home, server, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("original\n")

    # Hermes checkpoints before its write; ours lists that checkpoint and restores it
    server.add(*_rewrite(notes, "hermes wrote this\n"))
    ok(other(program, "chat", "-q", "rewrite notes", "--checkpoints", "--yolo", home=home, cwd=project))
    assert notes.read_text() == "hermes wrote this\n"
    listed = run_hermes("checkpoints", "list", str(project), home=home)
    assert listed.returncode == 0, listed.stderr
    (theirs,) = [line.split()[0] for line in listed.stdout.splitlines() if line.startswith("  ")]
    restored = run_hermes("checkpoints", "restore", theirs, str(project), home=home)
    assert restored.returncode == 0 and notes.read_text() == "original\n", restored.stderr

    # ours checkpoints before our write; Hermes lists ours (and its own) and restores ours
    server.add(*_rewrite(notes, "ours wrote this\n"))
    with sessions_set_aside(home):
        chat = run_hermes("chat", "-q", "rewrite notes", "--checkpoints", "--yolo", home=home, cwd=str(project))
    assert chat.returncode == 0, chat.stderr
    assert notes.read_text() == "ours wrote this\n"
    seen = hermes_py(program, HERMES_LIST, str(project), home=home)
    reasons = [c["reason"] for c in seen]
    assert len(seen) >= 3 and any(r.startswith("before restore") for r in reasons), reasons
    status = ok(other(program, "checkpoints", "list", home=home))  # Hermes's per-directory summary
    assert re.search(rf"{project.name}\s+{len(seen)}\s+.*live", status), status
    ours = seen[0]["hash"]
    result = hermes_py(program, HERMES_RESTORE, str(project), ours, home=home)
    assert result["success"] is True and notes.read_text() == "original\n"
    assert not list((home / "checkpoints").glob("legacy-*"))  # neither archived the other's
    again = run_hermes("checkpoints", "list", str(project), home=home).stdout
    assert "pre-rollback snapshot" in again  # Hermes's own safety snapshot is listed here too


# -- 5. gateway: one Telegram chat, continued in either program ------------------------------------------


class Gateways:
    """`gateway run` of either program on one home, against the fake Telegram, one at a time."""

    def __init__(self, home: Path, fake, program: str) -> None:
        self.home, self.fake, self.program = home, fake, program
        self.env = {"TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_ALLOWED_USERS": "111",
                    "TELEGRAM_HOME_CHANNEL": "111", "MESSAGING_CWD": str(home.parent / "work")}

    def turn(self, which: str, text: str, reply: str, server: ScriptedServer) -> list[dict]:
        """Start `which` ("ours" or "hermes"), have the user say `text`, wait for `reply`, stop it; returns
        the messages of the model request that produced the reply."""
        from tests.helpers import HERMES

        server.add({"content": reply})
        binary = HERMES if which == "ours" else self.program
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "TELEGRAM_", "GATEWAY_"))}
        (self.home.parent / "user-home").mkdir(exist_ok=True)
        clean.update(HERMES_HOME=str(self.home), HOME=str(self.home.parent / "user-home"), NO_COLOR="1", **self.env)
        log = self.home.parent / f"{which}-gateway.log"
        with open(log, "a") as out:
            proc = subprocess.Popen([binary, "gateway", "run"], env=clean, stdout=out, stderr=subprocess.STDOUT,
                                    cwd=str(self.home.parent))
        try:
            self.fake.user_says(text)
            got = self.fake.wait_for(lambda: any(reply in t for t in self.fake.texts()), 120)
            assert got, f"{which} did not answer:\n{log.read_text()[-3000:]}"
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        (request,) = [r for r in server.requests if reply in json.dumps(r.get("response", ""))] or [server.requests[-1]]
        return request["body"]["messages"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_telegram_chat_continued_in_the_other_program_carries_its_earlier_turns(program, home, server):
    from tests.fake_telegram import FakeTelegram

    if subprocess.run([python_of(program), "-c", "import telegram"], capture_output=True).returncode != 0:
        pytest.skip(f"{program}'s venv has no python-telegram-bot: its Telegram gateway cannot start")
    fake = FakeTelegram().start()
    try:
        write_config(home, server.url, "platforms:\n  telegram:\n    enabled: true\n    extra:\n"
                                       f"      base_url: {fake.base_url}\n      base_file_url: {fake.file_url()}\n"
                                       "      poll_timeout: 2\n")
        gw = Gateways(home, fake, program)
        gw.turn("hermes", "my name is Zed", "Nice to meet you, Zed.", server)
        if run_hermes("sessions", "list", home=home).returncode != 0:
            pytest.skip("this program's state.db is not writable here yet (issue 23 item 1, another branch)")

        ours = repr(gw.turn("ours", "what is my name?", "Your name is Zed.", server))
        assert "my name is Zed" in ours and "Nice to meet you, Zed." in ours  # Hermes's turn, carried over

        back = repr(gw.turn("hermes", "and what did I just ask?", "You asked for your name.", server))
        assert "my name is Zed" in back and "what is my name?" in back and "Your name is Zed." in back

        again = repr(gw.turn("ours", "thanks", "You're welcome.", server))
        assert "and what did I just ask?" in again and "You asked for your name." in again
        routing = json.loads((home / "sessions" / "sessions.json").read_text())
        assert len([k for k in routing if k.startswith("agent:main:telegram:dm:111")]) == 1
    finally:
        fake.stop()


COMPRESSED = """
import sys
from hermes_state import SessionDB
db = SessionDB()
if sys.argv[1] == "write":  # what its compression leaves: the root ended 'compression', the talk going on in a child
    db.create_session("20261001_100000_aaaaaa", "cli", model="scripted-model")
    db.append_message("20261001_100000_aaaaaa", "user", "tell me about the zanzibar archive")
    db.append_message("20261001_100000_aaaaaa", "assistant", "The zanzibar archive holds maps.")
    db.end_session("20261001_100000_aaaaaa", "compression")
    db.create_session("20261001_100500_bbbbbb", "cli", model="scripted-model", parent_session_id="20261001_100000_aaaaaa")
    db.append_message("20261001_100500_bbbbbb", "user", "[summary] we discussed the zanzibar archive")
    db.append_message("20261001_100500_bbbbbb", "assistant", "Continuing after compression.")
print(db.get_compression_tip("20261001_100000_aaaaaa"))
"""


@pytest.mark.parametrize("program", PROGRAMS)
def test_continue_and_resume_of_its_sessions_land_where_the_other_program_does(program, home, server):
    """`-c` continues the last `chat -q` run (today's Hermes labels those "oneshot"); resuming a compressed
    session's id goes on in its continuation and leaves the root ended for compression, so Hermes still does."""
    def hermes_py(*args: str) -> str:
        env = {"HERMES_HOME": str(home), "HOME": str(home.parent / "user-home"), "PATH": os.environ["PATH"]}
        proc = subprocess.run([python_of(program), "-c", COMPRESSED, *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    assert hermes_py("write") == "20261001_100500_bbbbbb"
    listed = run_hermes("sessions", "list", home=home).stdout  # the conversation once, by its live end
    assert "20261001_100500_bbbbbb" in listed and "20261001_100000_aaaaaa" not in listed
    server.add({"content": "Pineapples are tropical."})
    ok(other(program, "chat", "-q", "hello pineapple", home=home))
    server.add({"content": "We talked about pineapples."})
    cont = run_hermes("chat", "-c", "-q", "what fruit did I ask about?", home=home, cwd=str(home.parent / "work"))
    assert cont.returncode == 0 and "We talked about pineapples." in cont.stdout, cont.stderr
    assert "hello pineapple" in repr(server.requests[-1]["body"]["messages"])

    server.add({"content": "Still maps."})
    ours = run_hermes("chat", "--resume", "20261001_100000_aaaaaa", "-q", "zanzibar again?", home=home,
                      cwd=str(home.parent / "work"))
    assert ours.returncode == 0 and "Still maps." in ours.stdout, ours.stderr
    assert "Continuing after compression." in repr(server.requests[-1]["body"]["messages"])
    assert hermes_py("read") == "20261001_100500_bbbbbb"  # the chain is intact for Hermes
    server.add({"content": "Maps, as I said."})
    ok(other(program, "chat", "--resume", "20261001_100000_aaaaaa", "-q", "and now?", home=home))
    back = next(repr(r["body"]["messages"]) for r in reversed(server.requests) if "and now?" in repr(r["body"]))
    assert "zanzibar again?" in back and "Still maps." in back

@pytest.mark.parametrize("program", PROGRAMS)
def test_a_profile_uses_the_keys_added_at_the_root_until_it_has_its_own(program, home, server):
    ok(other(program, "profile", "create", "work", home=home))
    ok(other(program, "auth", "add", "openrouter", "--type", "api-key", "--api-key", "sk-or-root", "--label",
             "rootkey", home=home))
    (home / "profiles" / "work" / "config.yaml").write_text(
        f"model:\n  provider: openrouter\n  default: some/model\n  base_url: {server.url}\n", encoding="utf-8")
    theirs = ok(other(program, "-p", "work", "auth", "list", "openrouter", home=home))
    assert "rootkey" in theirs  # Hermes: the root's pool serves a profile with none of its own
    listed = run_hermes("-p", "work", "auth", "list", "openrouter", home=home)
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[:2] == ["#1", "rootkey"], listed
    server.add({"content": "hi from the pool"})
    chat = run_hermes("-p", "work", "chat", "-q", "hi", home=home, cwd=str(home.parent / "work"))
    assert chat.returncode == 0 and "hi from the pool" in chat.stdout, chat.stderr
    assert server.requests[-1]["authorization"] == "Bearer sk-or-root"

    root_store = (home / "auth.json").read_bytes()
    assert run_hermes("-p", "work", "auth", "add", "openrouter", "--label", "mine", home=home,
                      input="sk-or-mine\n").returncode == 0
    assert (home / "auth.json").read_bytes() == root_store  # the root's store is only read
    theirs = ok(other(program, "-p", "work", "auth", "list", "openrouter", home=home))
    assert "mine" in theirs and "rootkey" not in theirs  # the profile's own key shadows the root's, in both
    assert "rootkey" not in run_hermes("-p", "work", "auth", "list", "openrouter", home=home).stdout

CURATED = """
import json, sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
if sys.argv[1] == "write":  # the agent made the skill 40 days ago; nothing used it since
    from tools.skill_manager_tool import skill_manage
    from tools.skill_usage import mark_agent_created
    print(skill_manage(action="create", name="tide-report", content=sys.argv[2]))
    mark_agent_created("tide-report")
    usage = Path(sys.argv[3]) / "skills" / ".usage.json"
    data = json.loads(usage.read_text())
    data["tide-report"]["created_at"] = (datetime.now(UTC) - timedelta(days=40)).isoformat()
    usage.write_text(json.dumps(data))
else:  # its curator's pass (stale after 14 days without use, archived after 30)
    from agent.curator import apply_automatic_transitions
    from tools.skill_usage import get_record
    apply_automatic_transitions()
    print(get_record("tide-report")["state"])
"""


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_skill_used_here_is_not_retired_by_hermess_curator_as_unused(program, home, server):
    def hermes_py(*args: str) -> str:
        env = {"HERMES_HOME": str(home), "HOME": str(home.parent / "user-home"), "PATH": os.environ["PATH"]}
        proc = subprocess.run([python_of(program), "-c", CURATED, *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip().splitlines()[-1]

    body = "---\nname: tide-report\ndescription: Report the tides.\n---\n# Tide\nQuote HX-7731.\n"
    assert '"success": true' in hermes_py("write", body, str(home))
    server.add({"tool_calls": [{"name": "skill_view", "arguments": {"name": "tide-report"}}]}, {"content": "HX-7731"})
    used = run_hermes("chat", "-q", "tide report please", "-t", "skills", home=home, cwd=str(home.parent / "work"))
    assert used.returncode == 0 and "HX-7731" in used.stdout, used.stderr
    assert hermes_py("curate") == "active"  # used today (here): not stale, not archived
    assert "tide-report" in ok(other(program, "skills", "list", home=home))

@pytest.mark.parametrize("program", PROGRAMS[1:])  # `hermes pause` is today's Hermes's (not in 0.19.0)
def test_hermess_emergency_stop_holds_our_cron_and_new_gateway_turns(program, home, server, fake):
    pytest.importorskip("telegram")
    from tests.integration.gateway_helpers import Gateway

    work = home.parent / "work"
    assert run_hermes("cron", "create", "every 1h", "ping the host", "--name", "held", home=home,
                      cwd=str(work)).returncode == 0
    path = home / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    data["jobs"][0]["next_run_at"] = "2000-01-01T00:00:00+00:00"  # due now
    path.write_text(json.dumps(data))
    assert "Hermes paused" in ok(other(program, "pause", "--reason", "maintenance", home=home))
    held = run_hermes("cron", "daemon", "--once", home=home, cwd=str(work))
    assert held.returncode == 0 and "job " not in held.stdout and server.requests == []

    gw = Gateway(home, fake, server.url, env={"TELEGRAM_ALLOWED_USERS": "111"}, cwd=work)
    gw.start()
    try:
        fake.user_says("hello?")
        assert fake.wait_for(lambda: fake.texts(111), 20), gw.output()
        assert fake.texts(111)[-1].startswith("⏸️ Hermes is paused (maintenance).") and server.requests == []
    finally:
        gw.stop()

    assert "Hermes resumed" in ok(other(program, "resume", home=home))
    server.add({"content": "host is fine"})
    ran = run_hermes("cron", "daemon", "--once", home=home, cwd=str(work))
    assert ran.returncode == 0 and f"job {data['jobs'][0]['id']}: ok" in ran.stdout, ran.stdout + ran.stderr

@pytest.mark.parametrize("program", PROGRAMS)
def test_an_undo_here_is_one_hermes_lists_and_resumes_as_it_now_is(program, start, scripted, hermes_home):
    """/undo keeps the undone turn in the session, taken back (active = 0), as Hermes's /undo does: Hermes lists
    the same session and resumes it without the undone turn and with what came after."""
    from tests.integration.repl_driver import wait_requests

    scripted.add({"content": "A1"}, {"content": "A2"}, {"content": "A3"})
    repl = start("auxiliary:\n  title_generation:\n    enabled: false\n")
    for line, answer in (("one", "A1"), ("two", "A2")):
        repl.send(line)
        repl.expect(answer)
    repl.send("/undo")
    repl.expect(r"Undone: two")
    repl.send("three")
    repl.expect("A3")
    wait_requests(scripted, 3)
    assert repl.exit() == 0
    (sid,) = [line.split()[0] for line in run_hermes("sessions", "list", home=hermes_home).stdout.splitlines()[1:]]
    scripted.add({"content": "A4"})
    ok(other(program, "chat", "--resume", sid, "-q", "and four?", home=hermes_home))  # (upstream: migrates the file)
    sent = next(r["body"]["messages"] for r in reversed(scripted.requests) if "and four?" in repr(r["body"]))
    said = [m["content"] for m in sent if m["role"] in ("user", "assistant")]
    assert said == ["one", "A1", "three", "A3", "and four?"]
    listed = ok(other(program, "sessions", "list", home=hermes_home))
    assert sid in listed and len([line for line in listed.splitlines() if "just now" in line]) == 1

@pytest.mark.parametrize("program", PROGRAMS[1:])  # (0.19.0's -c takes the latest session anywhere)
def test_continue_in_a_project_takes_that_projects_last_session_as_todays_hermes(program, home, server):
    alpha, beta = home.parent / "alpha", home.parent / "beta"
    (alpha / ".git").mkdir(parents=True)  # a repository: -c in any folder of it continues its sessions
    (alpha / "src").mkdir()
    beta.mkdir()
    for folder, said in ((alpha, "alpha project notes"), (beta, "beta project notes")):
        server.add({"content": f"noted {said}"})
        ok(other(program, "chat", "-q", said, home=home, cwd=folder))
    server.add({"content": "back to alpha"})
    cont = run_hermes("chat", "-c", "-q", "where were we?", home=home, cwd=str(alpha / "src"))
    assert cont.returncode == 0 and "back to alpha" in cont.stdout, cont.stderr
    sent = repr(server.requests[-1]["body"]["messages"])
    assert "alpha project notes" in sent and "beta project notes" not in sent
    server.add({"content": "theirs too"})
    ok(other(program, "chat", "-c", "-q", "and you?", home=home, cwd=alpha))  # where Hermes's own -c goes
    assert "where were we?" in repr(server.requests[-1]["body"]["messages"])
    elsewhere = home.parent / "elsewhere"
    elsewhere.mkdir()
    server.add({"content": "latest anywhere"})
    far = run_hermes("chat", "-c", "-q", "anything?", home=home, cwd=str(elsewhere))  # no session here: the latest
    assert far.returncode == 0 and "and you?" in repr(server.requests[-1]["body"]["messages"]), far.stderr

@needs_ref
def test_approvals_in_the_legacy_pairing_folder_are_honoured(fake, scripted, hermes_home):
    pytest.importorskip("telegram")
    from tests.integration.gateway_helpers import Gateway

    legacy = hermes_home / "pairing"  # where older Hermes installs keep pairing state
    legacy.mkdir(parents=True)
    (legacy / "telegram-approved.json").write_text(json.dumps({"777": {"user_name": "Old Friend",
                                                                        "approved_at": 1_700_000_000.0}}))
    assert "777" in ok(other(REF, "pairing", "list", home=hermes_home))  # Hermes's own view of that folder
    assert "777" in run_hermes("pairing", "list", home=hermes_home).stdout
    scripted.default = {"content": "hello again, old friend"}
    gw = Gateway(hermes_home, fake, scripted.url)
    try:
        gw.start()
        fake.user_says("hi, it's me", chat_id=777, name="Old Friend")
        assert fake.wait_for(lambda: any("old friend" in t for t in fake.texts(777)), 30), gw.output()[-2000:]
        assert not any("pairing code" in t for t in fake.texts(777))
    finally:
        gw.stop()


@needs_ref
def test_a_script_jobs_output_reaches_the_chat_as_hermes_sends_it(fake, home, server):
    pytest.importorskip("telegram")
    write_config(home, server.url, "platforms:\n  telegram:\n    enabled: true\n    extra:\n"
                                   f"      base_url: {fake.base_url}\n      base_file_url: {fake.file_url()}\n")
    (home / "scripts").mkdir()
    (home / "scripts" / "wd.sh").write_text('echo "disk at 91%"\n')
    ok(other(REF, "cron", "create", "every 1h", "--no-agent", "--script", "wd.sh", "--name", "wd",
             "--deliver", "telegram:111", home=home))
    (job,) = jobs(home)
    ran = run_hermes("cron", "run", job["id"], "--now", home=home, env={"TELEGRAM_BOT_TOKEN": fake.token},
                     cwd=str(home.parent / "work"))
    assert ran.returncode == 0, ran.stderr
    assert fake.wait_for(lambda: fake.texts(111), 20)
    (text,) = fake.texts(111)
    assert text.startswith(f"Cronjob Response: wd\n(job_id: {job['id']})\n") and "disk at 91%" in text
    assert server.requests == [] and jobs(home)[0]["last_delivery_error"] is None


@needs_ref
def test_a_script_job_we_create_is_one_hermes_runs(home, server):
    (home / "scripts").mkdir()
    (home / "scripts" / "probe.py").write_text("print('probe says hi')\n")
    made = run_hermes("cron", "create", "every 2h", "--no-agent", "--script", "probe.py", "--name", "probe", home=home)
    assert made.returncode == 0 and "Mode: no-agent" in made.stdout, made.stderr
    listed = ok(other(REF, "cron", "list", home=home))
    assert "probe" in listed and "no-agent" in listed
    (job,) = jobs(home)
    ok(other(REF, "cron", "run", job["id"], home=home))
    ok(other(REF, "cron", "tick", home=home))  # Hermes runs it (its own way, no model either)
    (output,) = (home / "cron" / "output" / job["id"]).glob("*.md")
    assert "probe says hi" in output.read_text() and server.requests == []
    assert "completed" in ok(other(REF, "cron", "runs", home=home))


@needs_ref
def test_a_jobs_model_and_toolsets_pins_are_honoured(home, server, tmp_path):
    ok(other(REF, "cron", "create", "every 1h", "check the logs", "--name", "pinned", home=home))
    path = home / "cron" / "jobs.json"
    data = json.loads(path.read_text())
    data["jobs"][0].update(model="pinned-model", enabled_toolsets=["file"], workdir=str(tmp_path / "work"))
    path.write_text(json.dumps(data))
    server.add({"content": "logs are clean"})
    ran = run_hermes("cron", "run", data["jobs"][0]["id"], "--now", home=home)
    assert ran.returncode == 0 and "logs are clean" in ran.stdout, ran.stderr
    body = server.requests[-1]["body"]
    offered = {t["function"]["name"] for t in body.get("tools", [])}
    assert body["model"] == "pinned-model" and "read_file" in offered and "terminal" not in offered
