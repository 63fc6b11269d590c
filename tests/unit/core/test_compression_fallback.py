"""The deterministic cut: garbage summaries are refused, the task stays even with protect_first_n 0,
and the list of files touched is carried from one compaction note into the next."""

from __future__ import annotations

import json

from hermes_agent.core.compression import FILES_LINE, compress, describe, files_line
from hermes_agent.messages import Message, ToolCall


def _turns(start: int, n: int) -> list[Message]:
    out: list[Message] = []
    for i in range(start, start + n):
        call = ToolCall(f"c{i}", "read_file", json.dumps({"path": f"/srv/app/src/m{i}.py"}))
        out += [Message(role="assistant", content="", tool_calls=(call,)),
                Message(role="tool", content="x" * 3000, tool_call_id=f"c{i}", name="read_file")]
    return out


def test_noise_from_the_summarizer_is_refused_and_the_cut_says_why():
    msgs = [Message(role="system", content="sys"), Message(role="user", content="the task"), *_turns(0, 20)]
    for answer in ("", "ok", "### *** ~~~ ### *** ~~~ ###", "the the the the the"):
        res = compress(msgs, lambda _p, a=answer: a, protect_first_n=0, protect_last_n=4, target_tokens=1200)
        assert res.method == "truncate" and res.error and "no" in res.error
        assert res.messages[1].content == "the task"  # kept although protect_first_n is 0
        assert "summary failed" in describe(res) and f"dropped {res.dropped_count}" in describe(res)


def test_files_touched_survive_two_cuts():
    msgs = [Message(role="system", content="sys"), Message(role="user", content="the task"), *_turns(0, 20)]
    first = compress(msgs, None, protect_first_n=1, protect_last_n=4, target_tokens=1200)
    assert first.dropped_count > 0
    again = compress([*first.messages, *_turns(20, 20)], None, protect_first_n=1, protect_last_n=4,
                     target_tokens=1200)
    note = next(m.content for m in again.messages if FILES_LINE in (m.content or ""))
    assert "(under /srv/app/src): m0.py" in note and "m30.py" in note


def test_files_line_stays_short_and_counts_what_it_leaves_out():
    line = files_line([f"/home/u/proj/pkg/module_{i}.py" for i in range(500)])
    assert len(line) < 1300 and "module_0.py" in line and "module_499.py" in line and "more)" in line
