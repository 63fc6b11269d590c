"""Directories whose entries are mostly hidden (HOME's parent, /var, /run, /home) are closed, not hidden entry by
entry (bwrap.py `_closed_dirs`). Found by CI: other processes made and removed directories beside HOME all the
time, and bwrap failed to start ("Can't mkdir .../.hermes-test-X: Read-only file system") whenever one of the
entries the plan hid went away before bwrap mounted over it. Through the real `hermes chat -q`, HOME outside
/tmp: while siblings of HOME come and go by the hundred, every session starts, its commands run, and neither
a hidden sibling nor one made after the plan is visible from inside."""

from __future__ import annotations

import json
import shutil
import threading

from tests.helpers import home_outside_tmp, model_config, run_hermes


def _churn(parent, stop: threading.Event) -> None:
    """Siblings of HOME made and removed as fast as the machine allows (other users' temp dirs, test runs)."""
    n = 0
    while not stop.is_set():
        path = parent / f"churn-{n % 40}"
        try:
            path.mkdir()
            path.rmdir()
        except OSError:
            pass
        n += 1


def test_sessions_start_while_entries_beside_home_come_and_go(scripted, mechanism):
    outer = home_outside_tmp("closed")
    home = outer / "home"
    (home / "proj").mkdir(parents=True)
    (home / ".hermes").mkdir()
    (outer / "sibling-keys").mkdir()
    (outer / "sibling-keys" / "id").write_text("SIBLING-SECRET\n")
    for i in range(40):  # present at plan time, each removed and made again all through the run
        (outer / f"churn-{i}").mkdir()
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    stop = threading.Event()
    churner = threading.Thread(target=_churn, args=(outer, stop), daemon=True)
    try:
        churner.start()
        for _ in range(3):  # three sessions, each planning and starting its own sandbox
            (outer / "made-after-plan").mkdir(exist_ok=True)
            scripted.add({"tool_calls": [{"name": "terminal", "arguments": {
                "command": f"ls -a {outer}; cat {outer}/sibling-keys/id; echo RAN-INSIDE"}}]},
                         {"content": "done"})
            out = run_hermes("chat", "-q", "look around", "-t", "terminal", "--yolo", home=home / ".hermes",
                             env={"HOME": str(home)}, cwd=str(home / "proj"), timeout=180)
            assert out.returncode == 0, out.stderr
            result = json.loads([m["content"] for m in scripted.requests[-1]["body"]["messages"]
                                 if m["role"] == "tool"][0])
            text = result.get("output", "") + result.get("error", "")
            assert "RAN-INSIDE" in text, result
            assert "SIBLING-SECRET" not in text
            listed = text.split("\n")
            assert not [n for n in listed if n.startswith(("churn-", "sibling-keys", "made-after"))], text
            shutil.rmtree(outer / "made-after-plan")
    finally:
        stop.set()
        churner.join()
        shutil.rmtree(outer, ignore_errors=True)
