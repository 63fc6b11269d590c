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


def _owners(path):
    with sqlite3.connect(path) as c:
        return sorted(c.execute("SELECT owner, id FROM a2a_tasks"))


def test_each_caller_is_capped_on_its_own_so_a_busy_one_cannot_push_the_others_out(tmp_path):
    path = tmp_path / "a2a_tasks.db"
    rows = A2aTaskFile(path)
    now = time.time_ns()
    for i in range(6):  # a busy caller: six 100 KB tasks, newer than the quiet caller's two
        rows.save("api:bot", f"bot{i}", "ctx", 3, now - (6 - i) * 1000, "1", b"b" * 100_000)
    for i in range(2):
        rows.save("api:alice", f"alice{i}", "ctx", 3, now - 10**9 - i, "1", b"a" * 100_000)
    rows.close()

    # one cap on all: the oldest go first, which are alice's
    assert prune(path, FINISHED, None, 500_000).tasks == 3
    assert [t for o, t in _owners(path) if o == "api:alice"] == []

    rows = A2aTaskFile(path)
    for i in range(2):
        rows.save("api:alice", f"alice{i}", "ctx", 3, now - 10**9 - i, "1", b"a" * 100_000)
    rows.close()
    done = prune(path, FINISHED, None, 500_000, owner_max_bytes=300_000)  # each caller's own cap first
    assert _owners(path) == [("api:alice", "alice0"), ("api:alice", "alice1"), ("api:bot", "bot3"),
                             ("api:bot", "bot4"), ("api:bot", "bot5")]
    assert done.tasks == 2


def test_a_caller_with_its_own_age_and_cap_keeps_those_the_others_keep_the_general_ones(tmp_path):
    from hermes_agent.storage.a2a_tasks import Keep

    path = tmp_path / "a2a_tasks.db"
    rows = A2aTaskFile(path)
    now = time.time_ns()
    for owner in ("", "api:ci", "api:archive"):
        for age in (1, 10, 100):
            rows.save(owner, f"{owner.removeprefix('api:') or 'anyone'}-{age}d", "ctx", 3, now - age * DAY_NS, "1", b"x" * 1000)
    rows.save("api:ci", "ci-running", "ctx", 2, now - 100 * DAY_NS, "1", b"x")  # running: never pruned
    rows.close()

    done = prune(path, FINISHED, now - 30 * DAY_NS, None,
                 owners={"api:ci": Keep(now - 5 * DAY_NS, None), "api:archive": Keep(None, 1500)})

    assert _owners(path) == [("", "anyone-10d"), ("", "anyone-1d"),  # the general 30 days
                             ("api:archive", "archive-1d"),  # no age limit, but 1,500 bytes: the newest one
                             ("api:ci", "ci-1d"), ("api:ci", "ci-running")]  # 5 days
    assert done.tasks == 5
