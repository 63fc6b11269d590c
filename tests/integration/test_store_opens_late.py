"""The session store opens while `chat -q`'s first model request is on its way (issue 24, speed14): what the user
said is held and written, in order, with the reply; a model call that fails still leaves the user's message in
its session; a store that cannot be opened gives one line and the answer is still shown."""

from __future__ import annotations

import sqlite3

import pytest

from tests.helpers import model_config, run_hermes


def _rows(home) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "state.db") as db:
        return db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()


def test_the_question_and_the_answer_are_saved_in_order(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "todo", "arguments": {"todos": [{"id": "1", "content": "x"}]}}]},
                 {"content": "DONE-ANSWER"})
    out = run_hermes("chat", "-q", "plan it", "-t", "todo", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0 and "DONE-ANSWER" in out.stdout, out.stderr
    rows = _rows(hermes_home)
    assert [r for r, _ in rows] == ["user", "assistant", "tool", "assistant"], rows
    assert rows[0][1] == "plan it" and rows[-1][1] == "DONE-ANSWER"
    with sqlite3.connect(hermes_home / "state.db") as db:
        prompt = db.execute("SELECT system_prompt FROM sessions").fetchone()[0]
    assert prompt == scripted.requests[0]["body"]["messages"][0]["content"]  # the system prompt as sent


def test_a_failed_model_call_still_leaves_the_question_in_its_session(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url, "  max_retries: 0\n")
    scripted.add({"error": {"status": 400, "message": "scripted refusal"}})
    out = run_hermes("chat", "-q", "KEEP-THIS-QUESTION", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode != 0
    assert ("user", "KEEP-THIS-QUESTION") in _rows(hermes_home), out.stderr


@pytest.mark.parametrize("quiet", [False, True])
def test_a_store_that_cannot_open_gives_one_line_and_the_answer_is_shown(scripted, hermes_home, tmp_path, quiet):
    model_config(hermes_home, scripted.url)
    garbage = b"this is not a database\n" * 200
    (hermes_home / "state.db").write_bytes(garbage)
    scripted.add({"content": "STILL-ANSWERED"})
    out = run_hermes("chat", "-q", "hello", *(["-Q"] if quiet else []), home=hermes_home, cwd=str(tmp_path))
    assert "STILL-ANSWERED" in out.stdout, out.stderr
    said = [line for line in out.stderr.splitlines() if "cannot save this conversation" in line]
    assert len(said) == 1 and "state.db" in said[0], out.stderr
    assert "Traceback" not in out.stderr
    assert (hermes_home / "state.db").read_bytes() == garbage  # left as it was
