"""A home Hermes wrote with `hermes config set terminal.cwd ~` (or `/`): for Hermes that is only where its tools
start; for us it must not become the writable workspace (rt12 a37: every project in HOME, and ~/bin, opened to
confined commands). Started in ~/proj, hermes works there; started in HOME itself, HOME is the workspace as
before (the user chose it by standing there)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import model_config, run_hermes

ATTACK = "touch ~/other/notes.txt && echo W1; mkdir -p ~/bin && touch ~/bin/tool && echo W2; pwd; echo ok > mine.txt"


@pytest.mark.parametrize("value", ["~", "/"])
def test_a_broad_terminal_cwd_from_the_config_is_not_a_workspace(scripted, tmp_path, value):
    home = tmp_path / "home"
    for d in ("proj", "other", ".hermes"):
        (home / d).mkdir(parents=True)
    model_config(home / ".hermes", scripted.url, f"terminal:\n  cwd: '{value}'\n")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": ATTACK}}]}, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(home / "proj"),
                     env={"HOME": str(home)}, timeout=180)
    assert out.returncode == 0, out.stderr
    result = json.dumps(scripted.requests[-1]["body"]["messages"][-1])
    assert not (home / "other/notes.txt").exists() and not (home / "bin/tool").exists(), result
    assert (home / "proj/mine.txt").read_text() == "ok\n", result  # the project hermes started in is the workspace
    assert str(home / "proj") in result, result


def test_started_in_home_with_terminal_cwd_home_works_in_home(scripted, tmp_path):
    home = tmp_path / "home"
    for d in ("notes", ".hermes"):
        (home / d).mkdir(parents=True)
    model_config(home / ".hermes", scripted.url, "terminal:\n  cwd: '~'\n")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "echo x > notes/a.txt; pwd"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(home), env={"HOME": str(home)},
                     timeout=180)
    assert out.returncode == 0, out.stderr
    assert (home / "notes/a.txt").read_text() == "x\n"
