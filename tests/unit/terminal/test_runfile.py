"""Reaping what a killed run left: only process groups carrying that run's token, only hermes-term-* dirs."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from hermes_agent.terminal.runfile import TOKEN_VAR, reap_stale


def _record(directory, pid: int, token: str, dirs: list[str]) -> None:
    directory.mkdir(exist_ok=True)
    (directory / f"{pid}.json").write_text(json.dumps({"pid": pid, "token": token, "dirs": dirs}))


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_only_processes_carrying_the_dead_runs_token_are_killed(tmp_path):
    owner = _dead_pid()
    token = f"{owner}.123"
    ours = subprocess.Popen(["sleep", "30"], start_new_session=True, env={**os.environ, TOKEN_VAR: token})
    theirs = subprocess.Popen(["sleep", "30"], start_new_session=True)
    state = tempfile.mkdtemp(prefix="hermes-term-")
    other = tmp_path / "not-ours"
    other.mkdir()
    try:
        _record(tmp_path / "run", owner, token, [state, str(other)])
        done = reap_stale(tmp_path / "run")
        assert ours.wait(timeout=5) == -9
        assert theirs.poll() is None  # no token: not ours, whatever its pid
        assert not os.path.exists(state) and other.is_dir()
        assert done == [f"killed process group {ours.pid}", f"removed {state}"]
        assert list((tmp_path / "run").iterdir()) == []
    finally:
        for p in (ours, theirs):
            p.kill()
            p.wait()


def test_records_of_live_runs_are_left_alone(tmp_path):
    token = f"{os.getppid()}.0"  # a live pid with a start time that does not match: a reused pid
    _record(tmp_path / "run", os.getppid(), token, [])
    reap_stale(tmp_path / "run")
    assert list((tmp_path / "run").iterdir()) == []
    from hermes_agent.terminal.runfile import _start_ticks

    live = f"{os.getppid()}.{_start_ticks(os.getppid())}"
    _record(tmp_path / "run", os.getppid(), live, [])
    reap_stale(tmp_path / "run")
    assert [p.name for p in (tmp_path / "run").iterdir()] == [f"{os.getppid()}.json"]


def test_a_process_that_left_its_group_dies_with_the_backend(tmp_path):
    import time

    from hermes_agent.terminal.local import LocalBackend

    backend = LocalBackend(str(tmp_path))
    late = tmp_path / "LATE"
    out = backend.execute(f"setsid nohup sh -c 'sleep 1; touch {late}' >/dev/null 2>&1 & echo started")
    assert "started" in out.output
    backend.close()
    time.sleep(1.5)
    assert not late.exists()
