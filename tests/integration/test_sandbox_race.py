"""A session's first commands arriving in parallel (one model message with many terminal calls) all run
inside the sandbox: none may start before the session's sandbox runner exists (it once could, unconfined)."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import model_config, run_hermes


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
@pytest.mark.parametrize("run", range(3))
def test_parallel_first_commands_are_all_contained(scripted, hermes_home, tmp_path, run):
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "victim").mkdir(parents=True)
    work.mkdir()
    calls = [{"name": "terminal", "arguments": {"command": f"touch ~/victim/ESCAPED_{i}; echo tried {i}"}}
             for i in range(12)]
    scripted.add({"tool_calls": calls}, {"content": "done"})
    model_config(hermes_home, scripted.url, "sandbox:\n  shared_tmp: false\n")  # this HOME is under /tmp
    res = run_hermes("chat", "-q", "go", "-t", "terminal", home=hermes_home, cwd=str(work),
                     env={"HOME": str(home)}, timeout=120)
    assert res.returncode == 0, res.stderr
    assert list((home / "victim").iterdir()) == []
    results = [m["content"] for m in scripted.requests[1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == 12, results
    assert [r for r in results if "tried" not in r] == []  # they ran, inside the sandbox
