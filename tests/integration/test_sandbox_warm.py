"""The sandbox warmed during the first model call (bootstrap/warm.py), through the real `hermes chat -q`: while
the scripted model is still "thinking" about its first reply, the confined launcher is already running under
hermes; the command the model then asks for runs inside it (the secret stays hidden); a run whose tools include
no command tool starts none."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import CONFINED_TAG, landlock_problem
from tests.helpers import HERMES, model_config

KEY = "secret-key-material-4711"
THINK_S = 6.0  # the first reply's delay: the launcher must be up before it ends (it starts in ~0.3-2 s)



def _children(pid: int) -> dict[int, int]:
    """pid -> parent pid of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            out[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def _confined_under(root: int) -> list[str]:
    """The command lines of the confined launchers below `root` (their argv carries CONFINED_TAG)."""
    parents = _children(root)
    found = []
    for pid in parents:
        p, depth = pid, 0
        while p in parents and p != root and depth < 20:
            p, depth = parents[p], depth + 1
        if p != root or pid == root:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if CONFINED_TAG.encode() in argv:
            found.append(b" ".join(argv[:2]).decode(errors="replace"))
    return found


def _start(hermes_home: Path, home: Path, work: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), HOME=str(home))
    return subprocess.Popen([HERMES, "chat", "-q", "go", "--yolo", *args], env=env, cwd=str(work), text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _watch_while_thinking(proc: subprocess.Popen, scripted) -> list[str]:  # noqa: ANN001
    """Poll for confined launchers from the first request's arrival until its (delayed) reply is due."""
    deadline = time.monotonic() + 30
    while not scripted.requests and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert scripted.requests, "hermes sent no model request"
    reply_due = time.monotonic() + THINK_S - 0.5
    seen: list[str] = []
    while time.monotonic() < reply_due and not seen:
        seen = _confined_under(proc.pid)
        time.sleep(0.05)
    return seen


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY + "\n")
    work.mkdir()
    return home, work


def test_the_launcher_is_up_before_the_model_asks_for_a_command(tmp_path, hermes_home, scripted, mechanism):
    home, work = _dirs(tmp_path)
    model_config(hermes_home, scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    scripted.add({"delay": THINK_S, "tool_calls": [{"name": "terminal", "arguments": {
        "command": "cat ~/.ssh/id_rsa; echo ran-$((6*7))"}}]}, {"content": "done"})
    proc = _start(hermes_home, home, work)
    try:
        seen = _watch_while_thinking(proc, scripted)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert seen, "no confined launcher ran while the model was thinking"
    tool = [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tool) == 1 and "ran-42" in tool[0]["output"]
    assert KEY not in json.dumps([r["body"] for r in scripted.requests])  # the command ran inside the sandbox
    assert "done" in out


def test_no_launcher_when_no_command_tool_is_offered(tmp_path, hermes_home, scripted):
    if bwrap_problem() and landlock_problem():
        pytest.skip("no sandbox mechanism here")
    home, work = _dirs(tmp_path)
    model_config(hermes_home, scripted.url)
    scripted.add({"delay": THINK_S, "content": "just words"})
    proc = _start(hermes_home, home, work, "-t", "todo")
    try:
        seen = _watch_while_thinking(proc, scripted)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "just words" in out
    assert seen == []
    tools = {t["function"]["name"] for t in scripted.requests[0]["body"].get("tools", [])}
    assert not tools & {"terminal", "process", "execute_code"}


def test_a_start_under_way_is_aborted_at_close_and_nothing_runs_unconfined(tmp_path, monkeypatch):
    # in-process: the warm-up's start is caught while it waits for the launcher's answer, then the session closes
    import threading

    from hermes_agent.approval.policy import policy_for_settings
    from hermes_agent.terminal.manager import BackendPool
    from hermes_agent.terminal.sandbox import launcher as launcher_mod
    from hermes_agent.terminal.sandbox.launcher import SandboxError
    from tests.unit.terminal.conftest import make_settings

    if bwrap_problem() and landlock_problem():
        pytest.skip("no sandbox mechanism here")
    work = tmp_path / "work"
    work.mkdir()
    settings = make_settings(tmp_path, work)
    pool = BackendPool(settings, policy=policy_for_settings(settings))
    backend = pool.get("t")
    assert backend.contained
    waiting, pids, real = threading.Event(), [], launcher_mod.recv_frame

    def held(sock):  # noqa: ANN001, ANN202 - the start now waits for the launcher's "ready"
        pids.extend(p._proc.pid for p in [backend._runner._launcher] if p._proc is not None)
        waiting.set()
        time.sleep(0.3)  # the close comes meanwhile
        return real(sock)

    monkeypatch.setattr(launcher_mod, "recv_frame", held)
    failed: list[BaseException] = []

    def warm() -> None:
        try:
            backend.warm()
        except SandboxError as exc:
            failed.append(exc)

    thread = threading.Thread(target=warm)
    thread.start()
    assert waiting.wait(60), "the warm-up never reached the launcher's start"
    backend.abort_warm()
    thread.join(30)
    monkeypatch.setattr(launcher_mod, "recv_frame", real)
    try:
        assert not thread.is_alive()
        assert failed and "sandbox" in str(failed[0])
        assert pids and not Path(f"/proc/{pids[0]}").exists()  # the half-started launcher is gone (reaped)
        with pytest.raises(SandboxError):  # a command now is refused, never run outside the sandbox
            backend.execute("echo should-not-run")
    finally:
        pool.close_all()
