"""Never hang, never balloon, never strand a session: stalled and oversized streams from the scripted
server, a reply cut by the token limit, and empty prompts, all through the real `hermes` CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

from tests.helpers import HERMES, model_config, run_hermes

_STALL = "  stream_notice_after: 0.4\n  stream_idle_timeout: 1.5\n"


# A small parent that forks hermes and reports its peak RSS: measuring from the test process would count
# the pytest process's own pages copied at fork (ru_maxrss survives exec), hundreds of MiB in a full run.
_MEASURE = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[2], sys.argv[2:])\n"
            "_, status, usage = os.wait4(pid, 0)\nopen(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
            "sys.exit(os.waitstatus_to_exitcode(status))\n")


def peak_rss_mib(args: list[str], home, tmp_path, **kw) -> tuple[subprocess.CompletedProcess, float]:
    """Run the real `hermes` and measure the peak RSS of it and its children (wait4's rusage)."""
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    rss_path = tmp_path / "maxrss"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", _MEASURE, str(rss_path), HERMES, *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", env=env,
                          timeout=300, **kw)
    return done, int(rss_path.read_text()) / 1024


def test_a_silent_stream_is_reported_then_abandoned_and_the_run_fails_with_one_line(scripted, hermes_home):
    model_config(hermes_home, scripted.url, _STALL + "  api_max_retries: 1\n")
    scripted.add({"content": "never", "stall": 60}, {"content": "never", "stall": 60})
    started = time.monotonic()
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=30)
    took = time.monotonic() - started
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "the model has sent nothing for 0s; still waiting" in out.stderr or "sent nothing for 1s" in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("hermes: error: ") and "the model sent nothing for 2s" in last, out.stderr
    assert "agent.stream_idle_timeout" in last
    assert len(scripted.requests) == 2  # the stalled attempt was retried once
    assert took < 10, took


def test_a_stream_that_stalls_once_is_retried_and_answers(scripted, hermes_home):
    model_config(hermes_home, scripted.url, _STALL)
    scripted.add({"content": "late", "stall": 60, "stall_after": 2}, {"content": "second try worked"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "second try worked\n"
    assert "still waiting" in out.stderr and "retrying" in out.stderr


def test_keep_alive_comments_are_not_progress_and_a_stream_sending_only_them_is_retried(scripted, hermes_home):
    """rt15b e03: an endpoint that sends `: keep-alive` every half second and nothing else held `chat -q` (and a
    gateway turn or cron job) forever; the idle watchdog now counts only events that carry something."""
    model_config(hermes_home, scripted.url, _STALL)
    scripted.add({"content": "late", "stall": 60, "stall_after": 2, "keepalive": True},
                 {"content": "second try worked"})
    started = time.monotonic()
    out = run_hermes("chat", "-q", "hi", home=hermes_home, timeout=40)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "second try worked\n"
    assert "retrying" in out.stderr and time.monotonic() - started < 20


def test_a_huge_reply_is_cut_at_the_cap_with_bounded_memory(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    piece = "0123456789" * 100 + "\n"  # 1001 chars
    scripted.add({"content": piece, "repeat": 100_000})  # ~100 MB streamed
    out, rss = peak_rss_mib(["chat", "-q", "hi"], hermes_home, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("the rest was discarded (agent.max_reply_chars)]")
    assert 1_000_000 <= len(out.stdout) < 1_001_000
    assert "truncated" in out.stderr
    assert rss < 150, f"peak RSS {rss:.0f} MiB"
    shown = run_hermes("sessions", "export", "-", home=hermes_home)
    if shown.returncode == 0:
        assert "reply truncated" in shown.stdout


def test_a_reply_cut_by_the_token_limit_is_flagged_to_the_user_and_the_model(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "The three steps are: one, two", "finish_reason": "length"}, {"content": "three"})
    out = run_hermes("chat", "-q", "list the steps", home=hermes_home)
    assert "the answer was cut off" in out.stderr and "output token limit" in out.stderr
    assert out.stdout.startswith("The three steps are: one, two")
    again = run_hermes("chat", "--continue", "-q", "go on", home=hermes_home)
    assert again.returncode == 0, again.stderr
    history = scripted.requests[1]["body"]["messages"]
    assert "[answer cut off" in history[-2]["content"]


def test_an_empty_prompt_is_refused_without_calling_the_model(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    for prompt in ("", "   \n"):
        out = run_hermes("chat", "-q", prompt, home=hermes_home)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "empty" in out.stderr
    assert run_hermes("-z", "", home=hermes_home).returncode == 2
    assert scripted.requests == []


def test_tool_arguments_nested_too_deep_are_an_error_for_the_model_and_the_session_goes_on(scripted, hermes_home):
    """rt7 a06: arguments nested 200,000 deep ended the session ("internal error: RecursionError")."""
    model_config(hermes_home, scripted.url)
    deep = "[" * 200_000 + "]" * 200_000
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": '{"command": ' + deep + "}"}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo still-here"}}]},
                 {"content": "finished"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, timeout=120)
    assert out.returncode == 0, out.stderr[-600:]
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    assert out.stdout.strip().endswith("finished")
    tool_msgs = [m for m in scripted.requests[1]["body"]["messages"] if m["role"] == "tool"]
    error = json.loads(tool_msgs[-1]["content"])["error"]
    assert "Invalid arguments for terminal" in error and "nested too deeply" in error
    later = [m for m in scripted.requests[2]["body"]["messages"] if m["role"] == "tool"]
    assert "still-here" in later[-1]["content"]


def _running(command: str) -> bool:
    """A live (not zombie) process runs `command` (pids inside the sandbox are its namespace's own)."""
    out = subprocess.run(["ps", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return any(line.split(None, 1)[1:] == [command] and not line.startswith("Z") for line in out.splitlines())


def test_kill_9_mid_tool_then_continue_closes_the_call_and_reaps_what_was_left(hermes_home, tmp_path):
    from hermes_agent.providers.scripted import ScriptedServer

    work = tmp_path / "work"
    work.mkdir()
    with ScriptedServer(strict_tools=True) as server:
        model_config(hermes_home, server.url)
        server.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo $$ > started; sleep 3031"}}]},
                   {"content": "continued fine"})
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env["HERMES_HOME"] = str(hermes_home)
        proc = subprocess.Popen([HERMES, "chat", "-q", "sleep a while"], cwd=work, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not (work / "started").exists() or not (work / "started").read_text().strip():
            assert time.monotonic() < deadline and proc.poll() is None, "the tool never started"
            time.sleep(0.05)
        shell_pid = int((work / "started").read_text())
        proc.kill()
        proc.wait()
        assert shell_pid > 0  # (a pid of the sandbox's own namespace under bwrap: processes are found by command)
        leftovers = [d for d in (hermes_home / "run").glob("*.json")]
        assert len(leftovers) == 1
        import json

        state_dirs = json.loads(leftovers[0].read_text())["dirs"]
        assert state_dirs and all(os.path.isdir(d) for d in state_dirs)  # ... and its state dir

        out = run_hermes("chat", "--continue", "-q", "go on", home=hermes_home, cwd=str(work))
        assert out.returncode == 0, out.stderr
        assert out.stdout == "continued fine\n"
        sent = server.requests[-1]["body"]["messages"]
        closing = [m for m in sent if m["role"] == "tool"]
        assert len(closing) == 1 and "interrupted" in closing[0]["content"]
        assert not _running("sleep 3031")  # gone: with hermes (bwrap's pid namespace) or reaped by the next start
        assert not any(os.path.isdir(d) for d in state_dirs)  # ... and removed the state dir
        assert list((hermes_home / "run").glob("*.json")) == []

        again = run_hermes("chat", "--continue", "-q", "and again", home=hermes_home, cwd=str(work))
        assert again.returncode == 0, again.stderr  # the interrupted result was stored, not re-made
        assert [m["role"] for m in server.requests[-1]["body"]["messages"]].count("tool") == 1


def test_read_file_of_a_200_mb_line_stays_small_in_memory(scripted, hermes_home, tmp_path):
    import json

    work = tmp_path / "work"
    work.mkdir()
    with open(work / "huge.txt", "wb") as fh:
        block = b"abcdefghij" * 100_000
        for _ in range(200):
            fh.write(block)
        fh.write(b"\nsecond line\n")
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "huge.txt"}}]}, {"content": "read it"})
    out, rss = peak_rss_mib(["chat", "-q", "read huge.txt"], hermes_home, tmp_path, cwd=work)
    assert out.returncode == 0, out.stderr
    result = json.loads(scripted.requests[1]["body"]["messages"][-1]["content"])
    first, second = result["content"].split("\n")
    assert first.startswith("    1|abcdefghij") and first.endswith("[line truncated: 199,998,000 more bytes]")
    assert second == "    2|second line"
    assert rss < 120, f"peak RSS {rss:.0f} MiB"  # ~44 MiB; reading the line whole costs > 400 MiB


def test_unknown_and_unusable_toolsets_are_named_in_one_warning_each(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "ok"}, {"content": "ok"})
    out = run_hermes("chat", "-q", "hi", "-t", "todo,nonsense", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert [ln for ln in out.stderr.splitlines() if "nonsense" in ln] == ["· unknown toolset ignored: nonsense"]
    assert [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]] == ["todo"]
    web = run_hermes("chat", "-q", "hi", "-t", "image_gen", home=hermes_home)
    assert web.returncode == 0, web.stderr
    assert sum("toolset 'image_gen' has no usable tool here" in ln for ln in web.stderr.splitlines()) == 1
    assert "image_generate unavailable, requirement not met: FAL_KEY, or an OpenAI-compatible images endpoint" \
        in web.stderr  # says what to set, as `hermes tools list` does
    assert "tools" not in scripted.requests[1]["body"]


def test_write_file_creates_files_with_the_umask_and_keeps_existing_modes(scripted, hermes_home, tmp_path):
    import stat

    work = tmp_path / "work"
    work.mkdir()
    (work / "script.sh").write_text("old\n")
    (work / "script.sh").chmod(0o750)
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "hi\n"}},
                                 {"name": "write_file", "arguments": {"path": "script.sh", "content": "new\n"}}]},
                 {"content": "written"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HERMES_HOME"] = str(hermes_home)
    out = subprocess.run(["sh", "-c", f"umask 027 && exec {HERMES} chat -q write"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert stat.S_IMODE((work / "new.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((work / "script.sh").stat().st_mode) == 0o750
    assert (work / "script.sh").read_text() == "new\n"


def test_repl_warns_about_a_cut_off_answer_and_prints_a_resume_hint_on_exit(start, scripted, hermes_home):
    from tests.integration.repl_driver import ANSI, PROMPT

    scripted.add({"content": "partial answer", "finish_reason": "length"})
    repl = start()
    repl.send("tell me everything")
    repl.expect(r"partial answer")
    repl.expect(r"the answer was cut off", anywhere=True)
    repl.expect(PROMPT)
    assert repl.exit() == 0
    tail = ANSI.sub("", repl.child.before or "") + repl.text
    session = re.search(r"hermes --resume (\S+)", tail)
    assert session and "Resume this session with:" in tail and "hermes chat --continue" in tail
    back = run_hermes("chat", "--resume", session.group(1), "-q", "go on", home=hermes_home)
    assert back.returncode == 0, back.stderr
