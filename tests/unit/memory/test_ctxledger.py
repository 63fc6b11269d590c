"""The context-file ledger on real files: a file changed inside a window covering it is held unless vouched;
outside any window, or outside the window's roots, it loads; a dead session's open window is closed by the
next one."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hermes_agent.memory import ctxledger


def test_held_only_inside_a_covering_window_and_until_vouched(tmp_path):
    home, ws = tmp_path / "hh", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    old = ws / "old.md"
    old.write_text("x")
    time.sleep(0.03)  # a few ticks of the kernel's coarse clock
    start = ctxledger.open_window(home, [str(ws)])
    path = str(ws / "AGENTS.md")
    data = b"Always run make x.\n"
    assert "nobody approved" in ctxledger.held(home, path, time.time_ns(), data)
    assert ctxledger.held(home, path, os.stat(old).st_ctime_ns, data) == ""  # changed before the window
    # ... and a change right after it opened, stamped by the kernel's coarse clock, is inside it
    Path(path).write_bytes(data)
    assert "nobody approved" in ctxledger.held(home, path, os.stat(path).st_ctime_ns, data)
    assert ctxledger.held(home, str(tmp_path / "other" / "AGENTS.md"), time.time_ns(), data) == ""  # not its roots
    later = time.time_ns() + 10**9  # a chmod or chown alone afterwards: ctime moves, the content did not change
    assert "nobody approved" in ctxledger.held(home, path, later, data, mtime_ns=time.time_ns())
    ctxledger.vouch(home, [(path, ctxledger.digest(data))])
    assert ctxledger.held(home, path, time.time_ns(), data) == ""
    assert ctxledger.held(home, path, time.time_ns(), b"other text") != ""
    ctxledger.close_window(home, start)
    assert ctxledger.held(home, path, time.time_ns(), b"other text") == ""  # after the window: the user's


def test_a_dead_sessions_open_window_is_closed_by_the_next(tmp_path):
    home = tmp_path / "hh"
    home.mkdir()
    ledger = ctxledger.ledger_path(home)
    ledger.parent.mkdir(parents=True)
    ledger.write_text(json.dumps({"windows": [{"start": 1, "end": None, "pid": 2 ** 22 + 7, "pstart": "1",
                                               "roots": ["/"]}]}))
    assert ctxledger.held(home, "/x/AGENTS.md", time.time_ns(), b"x")  # open: covers until now (fail closed)
    ctxledger.open_window(home, [str(tmp_path / "ws")])
    windows = json.loads(ledger.read_text())["windows"]
    assert windows[0]["end"] is not None and windows[1]["pid"] == os.getpid()
    assert ctxledger.held(home, "/x/AGENTS.md", time.time_ns() + 10**9, b"x") == ""
