"""Retention of the A2A tasks file ($HERMES_HOME/api_server/a2a_tasks.db) on a real SQLite file: finished tasks
past the age go with their push configs, then the oldest finished ones over the size cap; tasks still running,
waiting for input or without a status time stay; the freed pages go back to the OS."""

from __future__ import annotations

import sqlite3
import threading
import time

from hermes_agent.storage.a2a_tasks import A2aTaskFile, prune

FINISHED = (3, 4, 5, 7)  # completed, failed, canceled, rejected (a2a TaskState numbers)
DAY_NS = 86400 * 10**9


def _ids(path):
    with sqlite3.connect(path) as c:
        return {r[0] for r in c.execute("SELECT id FROM a2a_tasks")}, {r[0] for r in c.execute("SELECT task_id FROM a2a_push")}


def test_old_finished_tasks_and_their_push_configs_go_running_ones_stay(tmp_path):
    path = tmp_path / "a2a_tasks.db"
    rows = A2aTaskFile(path)
    now = time.time_ns()
    for task_id, state, ts in (("old-done", 3, now - 40 * DAY_NS), ("old-failed", 4, now - 31 * DAY_NS),
                               ("old-working", 2, now - 40 * DAY_NS), ("old-input", 6, now - 40 * DAY_NS),
                               ("recent-done", 3, now - 2 * DAY_NS), ("no-time", 3, None)):
        rows.save("", task_id, "ctx", state, ts, "1", b"task " + task_id.encode())
    rows.push_set("", "old-done", "hook", "1.0", b"cfg")
    rows.push_set("", "old-working", "hook", "1.0", b"cfg")
    rows.close()

    done = prune(path, FINISHED, now - 30 * DAY_NS, None)

    assert done.tasks == 2
    assert _ids(path) == ({"old-working", "old-input", "recent-done", "no-time"}, {"old-working"})


def test_the_oldest_finished_tasks_go_while_over_the_size_cap_and_the_file_shrinks(tmp_path):
    path = tmp_path / "a2a_tasks.db"
    rows = A2aTaskFile(path)
    now = time.time_ns()
    for i in range(10):  # 10 finished tasks of 200 KB (their artifacts), oldest first
        rows.save("", f"t{i}", "ctx", 3, now - (10 - i) * 1000, "1", bytes([i]) * 200_000)
    rows.save("", "working", "ctx", 2, now - 10**6, "1", b"w" * 200_000)  # never counted, never pruned
    rows.close()
    before = path.stat().st_size

    done = prune(path, FINISHED, None, 700_000)

    assert _ids(path)[0] == {"t7", "t8", "t9", "working"}  # 3 x 200 KB <= 700 KB
    assert (done.tasks, done.bytes) == (7, 1_400_000) and done.pages_freed > 300
    assert path.stat().st_size < before - 1_300_000
    assert prune(path, FINISHED, None, 700_000).tasks == 0  # within the cap: nothing more


def test_a_stop_request_ends_the_prune_between_chunks(tmp_path):
    path = tmp_path / "a2a_tasks.db"
    rows = A2aTaskFile(path)
    for i in range(500):
        rows.save("", f"t{i}", "ctx", 3, 1000 + i, "1", b"x")
    rows.close()
    stop = threading.Event()
    stop.set()
    assert prune(path, FINISHED, 10**18, None, stop).tasks == 0
    assert prune(path, FINISHED, 10**18, None).tasks == 500
    assert prune(tmp_path / "missing.db", FINISHED, 10**18, None).tasks == 0 and not (tmp_path / "missing.db").exists()
