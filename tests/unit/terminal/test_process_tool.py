"""Background processes: terminal(background=true) and the `process` tool, on the real local backend."""

from __future__ import annotations

import time

from hermes_agent.terminal.processes import ProcessManager, RollingBuffer, get_manager


def test_background_server_lifecycle(call, work):
    start = call("terminal", command="i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.05; done", background=True)
    assert start["status"] == "running" and start["id"].startswith("proc_")
    pid = start["id"]
    assert [p["id"] for p in call("process", action="list")["processes"]] == [pid]
    deadline = time.time() + 15  # the shell reads ~/.bashrc first: slow on a loaded machine
    poll = call("process", action="poll", id=pid)
    while "tick 1" not in poll["output_tail"] and time.time() < deadline:
        time.sleep(0.1)
        poll = call("process", action="poll", id=pid)
    assert poll["status"] == "running" and "tick 1" in poll["output_tail"]
    first = call("process", action="log", id=pid, offset=0)
    assert first["output"].startswith("tick 0\n") and first["next_offset"] == len(first["output"].encode())
    more = call("process", action="log", id=pid, offset=first["next_offset"])
    assert more["offset"] == first["next_offset"]
    waited = call("process", action="wait", id=pid, timeout=0.2)
    assert waited["wait_timed_out"] is True
    killed = call("process", action="kill", id=pid)
    assert killed["status"] == "killed"


def test_background_command_that_fails_at_once_reports_it(call):
    call("terminal", command="true")  # the first call of a shell also reads ~/.bashrc: not measured here
    out = call("terminal", command="echo boom >&2; exit 4", background=True)
    assert out["status"] == "exited" and out["exit_code"] == 4 and "boom" in out["output_tail"]


def test_write_and_close_stdin(call):
    pid = call("terminal", command="sort", background=True)["id"]
    call("process", action="write", id=pid, data="pear\napple\n")
    call("process", action="close", id=pid)
    done = call("process", action="wait", id=pid, timeout=10)
    assert done["status"] == "exited" and done["exit_code"] == 0
    assert done["output_tail"] == "apple\npear\n"
    assert "already exited" in call("process", action="write", id=pid, data="x")["error"]


def test_background_uses_the_shell_state(call, work):
    (work / "d").mkdir()
    call("terminal", command="cd d && export COLOR=blue")
    pid = call("terminal", command="echo $COLOR; pwd", background=True)["id"]
    out = call("process", action="wait", id=pid, timeout=10)
    assert out["output_tail"].split() == ["blue", str(work / "d")]


def test_process_errors_are_json(call):
    assert "no background process" in call("process", action="poll", id="proc_nope")["error"]
    assert "needs id" in call("process", action="kill")["error"]
    assert "unknown action" in call("process", action="dance", id="x")["error"]


def test_processes_are_per_task_and_cleaned_up(call, ctx, pool):
    pid = call("terminal", command="sleep 300", background=True)["id"]
    bp = get_manager().get(pid)
    other = ctx.__class__(settings=ctx.settings, task_id="other", backend_factory=pool.get)
    assert "no background process" in call("process", other, action="poll", id=pid)["error"]
    assert call("process", other, action="list")["processes"] == []
    pool.close("t")
    assert bp.proc.poll() is not None
    assert call("process", action="list")["processes"] == []


def test_rolling_buffer_keeps_the_tail_and_says_what_was_dropped():
    buf = RollingBuffer(limit=10)
    buf.append(b"0123456789")
    buf.append(b"abcde")
    assert buf.total == 15 and buf.dropped == 5
    assert buf.read(0, 100) == (b"56789abcde", 5)
    assert buf.read(12, 2) == (b"cd", 12)
    assert buf.tail(3) == (b"cde", 12)


def test_manager_log_notes_dropped_bytes(work):
    from hermes_agent.terminal.local import LocalBackend

    backend = LocalBackend(str(work))
    manager = ProcessManager(buffer_bytes=1000)
    bp = manager.start("m", backend, "head -c 5000 /dev/zero | tr '\\0' x")
    manager.wait(bp.id, timeout=10)
    time.sleep(0.1)
    log = manager.log(bp.id, offset=0)
    assert log["offset"] == 4000 and len(log["output"]) == 1000 and "dropped" in log["note"]
    manager.close_all()
    backend.close()


def test_a_sandbox_started_by_a_short_lived_thread_outlives_it(call):
    """A gateway turn or a file-tool worker may be the first to use the terminal, on a thread that then ends.
    The sandbox's death signal follows the thread that forked it: the session's background server must keep
    running after that thread is gone, and the next command runs once."""
    import threading

    started: dict = {}
    t = threading.Thread(target=lambda: started.update(call("terminal", command="sleep 30", background=True)))
    t.start()
    t.join()
    time.sleep(1.0)  # the dead thread's signal, if any, has arrived by now
    poll = call("process", action="poll", id=started["id"])
    assert poll["status"] == "running", poll
    out = call("terminal", command="echo once >> ran.txt; cat ran.txt")
    assert out["output"].splitlines() == ["once"]
    call("process", action="kill", id=started["id"])
