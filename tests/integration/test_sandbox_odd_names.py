"""File names that are not UTF-8 (a Latin-1 `café` from an old archive, a name with a newline) are ordinary
work, not a way to break hermes (rt15 d07/d09: one `mkdir "$(printf 'caf\\351')/.git"` made every later
sandboxed call and session fail with UnicodeEncodeError). Through the real `hermes chat -q`, HOME outside /tmp,
under bwrap and Landlock: a nested repository with such a name, with a commit, then more calls and a new
session: every call runs and its output reaches the model."""

from __future__ import annotations

import json
import shutil

from tests.helpers import home_outside_tmp, model_config, run_hermes

MAKE = ("mkdir -p \"$(printf 'caf\\351')\" && cd \"$(printf 'caf\\351')\" && git init -q && "
        "printf 'x\\n' > \"$(printf 'r\\351sum\\351.txt')\" && printf 'y\\n' > \"$(printf 'two\\nlines')\" && "
        "git add -A && git -c user.name=U -c user.email=u@example.com commit -qm one && echo MADE-IT")


def _session(scripted, home, commands):
    scripted.add(*({"tool_calls": [{"name": "terminal", "arguments": {"command": c}}]} for c in commands),
                 {"content": "done"})
    out = run_hermes("chat", "-q", "work", "-t", "terminal", "--yolo", home=home / ".hermes",
                     env={"HOME": str(home)}, cwd=str(home / "proj"), timeout=180)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_names_that_are_not_utf8_do_not_break_the_sandbox(scripted, mechanism):
    home = home_outside_tmp("odd-names")
    (home / "proj").mkdir(parents=True)
    (home / ".hermes").mkdir()
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    try:
        first = _session(scripted, home, [MAKE, "echo SECOND-CALL", "ls | od -c | head -3"])
        assert "MADE-IT" in first[0].get("output", ""), first[0]
        assert "SECOND-CALL" in first[1].get("output", ""), first[1]
        assert "c   a   f 351" in first[2].get("output", ""), first[2]
        again = _session(scripted, home, ["echo NEXT-SESSION && git -C \"$(printf 'caf\\351')\" log --oneline"])
        assert "NEXT-SESSION" in again[0].get("output", "") and "one" in again[0]["output"], again[0]
    finally:
        shutil.rmtree(home, ignore_errors=True)
