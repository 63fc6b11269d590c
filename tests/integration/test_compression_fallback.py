"""A 200-turn run through the real `hermes chat -q` with a small window, so compression triggers again
and again, while the summary model fails, times out, answers nothing or answers noise: the run keeps going,
the task and the latest turns reach the model verbatim, the files touched are still listed, and the user
is told what was dropped."""

from __future__ import annotations

import json

from hermes_agent.core.compression import SUMMARY_PREFIX
from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import model_config, run_hermes

TURNS = 200
TASK = "Read every notes file and tell me which one mentions the blue whale."
BAD_SUMMARIES = [
    {"error": {"status": 400, "message": "summary model refused"}},
    {"delay": 5, "content": "## Goal\nlate summary that arrives after the deadline"},
    {"content": ""},
    {"content": "#### ~~~ ### ~~~ ***"},
]


def _last_note(messages: list[dict]) -> str:
    return next((str(m["content"]) for m in messages if str(m.get("content") or "").startswith(SUMMARY_PREFIX)), "")


def test_two_hundred_turns_survive_failing_summaries(scripted, hermes_home, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for i in range(TURNS):
        (work / f"notes{i}.txt").write_text(f"note {i}: " + "lorem ipsum dolor " * 60 + "\n", encoding="utf-8")
    aux = ScriptedServer(BAD_SUMMARIES * 60).start()
    try:
        model_config(hermes_home, scripted.url,
                     "  max_turns: 400\n"
                     f"auxiliary:\n  compression:\n    base_url: {aux.url}\n    api_key: k\n    model: summarizer\n"
                     "    timeout: 0.5\n"
                     "compression:\n  protect_first_n: 1\n  protect_last_n: 6\n")
        cfg = (hermes_home / "config.yaml").read_text()
        (hermes_home / "config.yaml").write_text(cfg.replace("  api_key: test-key\n",
                                                             "  api_key: test-key\n  context_length: 6000\n", 1))
        scripted.add(*[{"tool_calls": [{"id": f"c{i}", "name": "read_file",
                                        "arguments": {"path": str(work / f"notes{i}.txt")}}]}
                       for i in range(TURNS)],
                     {"content": "None of them mentions a whale."})
        out = run_hermes("chat", "-q", TASK, "--yolo", home=hermes_home, cwd=str(work), timeout=300)
    finally:
        aux.stop()

    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == "None of them mentions a whale.\n"
    bodies = [r["body"]["messages"] for r in scripted.requests]
    assert len(bodies) == TURNS + 1  # every turn reached the model, none was lost to a failed summary
    assert len(aux.requests) >= 8  # compression ran many times and asked for a summary each time
    notices = [ln for ln in out.stderr.splitlines() if "compressed context" in ln]
    assert len(notices) >= 8
    assert any("summary failed" in ln and "dropped" in ln for ln in notices)
    assert any("TimeoutError" in ln for ln in notices) and any("no text" in ln for ln in notices)
    assert any("no usable text" in ln for ln in notices)
    last = bodies[-1]
    assert last[0]["role"] == "system" and last[1] == {"role": "user", "content": TASK}  # the task survives
    assert len(json.dumps(last)) // 4 < 6000  # it fits the window
    calls = [tc["id"] for m in last for tc in m.get("tool_calls") or []]
    assert calls[-3:] == [f"c{i}" for i in range(TURNS - 3, TURNS)]  # the latest turns survive verbatim
    assert f"note {TURNS - 1}:" in last[-1]["content"]
    note = _last_note(last)
    assert "Files touched:" in note and "notes0.txt" in note and f"notes{TURNS - 20}.txt" in note
    for body in bodies[1:]:  # never a request without the task, however often it was compressed
        assert body[1] == {"role": "user", "content": TASK}
