"""Context compression: tool call/result pairs stay together, protected turns stay verbatim, the
summarizer gets a structured prompt, and without one the run still shrinks below its target."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_agent.config.settings import Settings
from hermes_agent.core.compression import (
    SUMMARY_PREFIX,
    AutoCompactor,
    compress,
    estimate_tokens,
    prompt_tokens_now,
    should_compress,
    split_protected,
    truncate_tool_outputs,
)
from hermes_agent.messages import Message, ToolCall


def _turn(i: int, n_calls: int = 1, out_chars: int = 3000) -> list[Message]:
    calls = tuple(ToolCall(f"c{i}_{k}", "read_file", json.dumps({"path": f"src/f{i}_{k}.py"}))
                  for k in range(n_calls))
    msgs = [Message("assistant", f"step {i}", tool_calls=calls)]
    msgs += [Message("tool", f"out{i}_{k} " + "x" * out_chars, tool_call_id=c.id, name=c.name)
             for k, c in enumerate(calls)]
    return msgs


def _conversation(n_turns: int = 30) -> list[Message]:
    msgs = [Message("system", "You are Hermes."), Message("user", "Refactor the parser module")]
    for i in range(n_turns):
        msgs += _turn(i, n_calls=1 + i % 3)
        if i % 7 == 6:
            msgs.append(Message("user", f"also check case {i}"))
    msgs.append(Message("assistant", "Working on it."))
    return msgs


def assert_pairs_intact(msgs: list[Message]) -> None:
    """Every tool result follows the assistant call that asked for it; every call has its result."""
    pending: set[str] = set()
    for m in msgs:
        if m.role == "tool":
            assert m.tool_call_id in pending, f"orphan tool result {m.tool_call_id}"
            pending.discard(m.tool_call_id)
            continue
        assert not pending, f"calls without results: {pending}"
        pending = {tc.id for tc in m.tool_calls}
    assert not pending


def test_estimate_and_trigger_use_api_usage_when_known():
    msgs = [Message("system", "s" * 400), Message("user", "u" * 400)]
    assert 200 <= estimate_tokens(msgs) <= 220
    assert not should_compress(None, msgs, context_length=1000)
    assert should_compress(None, msgs, context_length=400)
    # After a reply, the API figure for that request counts (it includes tool schemas the
    # estimate cannot see), plus an estimate of what was appended since.
    msgs += [Message("assistant", "ok", tool_calls=(ToolCall("a", "t"),))]
    assert not should_compress(900, msgs, context_length=2000)
    assert should_compress(1500, msgs, context_length=2000)
    msgs += [Message("tool", "r" * 4000, tool_call_id="a")]
    assert should_compress(900, msgs, context_length=2000)  # 900 + ~1000 new tokens
    # An endpoint that reports (almost) no usage cannot hide the growth.
    assert should_compress(10, msgs, context_length=2000)


def test_summary_keeps_protected_turns_verbatim_and_pairs_intact():
    msgs = _conversation()
    prompts: list[str] = []

    def summarize(prompt: str) -> str:
        prompts.append(prompt)
        return "## Goal\nRefactor the parser\n## Progress\nread 40 files"

    res = compress(msgs, summarize, protect_first_n=3, protect_last_n=20, todo_text="[ ] 1. ship it")
    assert res.method == "summary" and res.dropped_count > 0
    out = res.messages
    assert_pairs_intact(out)
    assert out[0] == msgs[0]
    system, head, _, tail = split_protected(msgs, 3, 20)
    assert out[1:1 + len(head)] == head and len(head) >= 3
    assert out[-len(tail):] == tail and len(tail) >= 20
    note = out[1 + len(head)]
    assert note.role == "user" and note.content.startswith(SUMMARY_PREFIX)
    assert "Refactor the parser" in note.content and note.content.endswith("[ ] 1. ship it")
    assert res.tokens_after < res.tokens_before // 2
    (prompt,) = prompts
    for section in ("## Goal", "## Progress", "## Decisions", "## Files touched", "## Open items"):
        assert section in prompt
    assert "-> called read_file" in prompt and "src/f5_0.py" in prompt


def test_boundaries_never_split_a_call_from_its_results():
    msgs = [Message("user", "go")] + _turn(0, n_calls=3) + _turn(1, n_calls=3) + _turn(2, n_calls=3)
    # first 2 would end between call 0 and its results; last 2 would start mid-results of call 2
    _, head, middle, tail = split_protected(msgs, 2, 2)
    assert head == msgs[:5] and tail == msgs[-4:] and middle == msgs[5:9]


def test_fallback_without_summarizer_first_clears_old_tool_outputs():
    msgs = _conversation()
    res = compress(msgs, None, protect_first_n=3, protect_last_n=20, target_tokens=20_000)
    assert res.method == "truncate" and res.dropped_count == 0 and res.cleared_outputs > 30
    assert res.tokens_after <= 20_000 < res.tokens_before
    assert len(res.messages) == len(msgs)  # every turn is still there, only old outputs shrank
    assert any(m.content.startswith('{"cleared": "old tool output cleared: ') for m in res.messages if m.role == "tool")
    _, _, _, tail = split_protected(msgs, 3, 20)
    assert res.messages[-len(tail):] == tail


def test_fallback_drops_oldest_middle_turns_with_a_deterministic_note():
    msgs = _conversation()
    system, head, middle, tail = split_protected(msgs, 3, 8)
    target = estimate_tokens(system + head + tail) + 1000  # room for the note and a few cleared turns
    res = compress(msgs, None, protect_first_n=3, protect_last_n=8, target_tokens=target)
    assert res.method == "truncate" and 0 < res.dropped_count < len(middle) and res.summary is not None
    assert_pairs_intact(res.messages)
    assert res.tokens_after <= target
    note = next(m for m in res.messages if (m.content or "").startswith(SUMMARY_PREFIX))
    assert f"{res.dropped_count} earlier messages were removed" in note.content
    assert "- also check case 6" in note.content
    assert "read_file x" in note.content and "src/f1_0.py" in note.content
    assert res.messages[1:1 + len(head)] == head and res.messages[-len(tail):] == tail
    assert compress(msgs, None, protect_first_n=3, protect_last_n=8, target_tokens=target) == res


def test_failing_summarizer_falls_back_and_reports_why():
    def boom(prompt: str) -> str:
        raise TimeoutError("aux model timed out")

    res = compress(_conversation(), boom, target_tokens=10_000)
    assert res.method == "truncate" and res.error == "TimeoutError: aux model timed out"
    assert res.tokens_after <= 10_000
    assert_pairs_intact(res.messages)


def test_huge_protected_tail_is_still_brought_under_target():
    msgs = [Message("system", "sys"), Message("user", "go")]
    for i in range(12):
        msgs += _turn(i, out_chars=40_000)
    res = compress(msgs, None, protect_first_n=1, protect_last_n=20, target_tokens=30_000)
    assert res.tokens_before > 100_000 and res.tokens_after <= 30_000
    assert_pairs_intact(res.messages)
    assert res.messages[-1].content == msgs[-1].content  # the latest result is kept whole


def test_a_tool_result_cut_to_fit_stays_json():
    """Red-team round 9 a07: a 1 MB error echoing a hostile tool name was cut as text, raw newlines inside a JSON
    string, and every later request carried a tool message that was not JSON."""
    msgs = [Message("system", "sys"), Message("user", "go")]
    for i in range(4):
        msgs += _turn(i, out_chars=10)
        msgs[-1] = msgs[-1].with_content(json.dumps({"error": f"Unknown tool: {'x' * 400_000}", "n": i}))
    res = compress(msgs, None, protect_first_n=1, protect_last_n=20, target_tokens=30_000)
    tools = [m.content for m in res.messages if m.role == "tool"]
    assert len(tools) == 4 and res.tokens_after <= 30_000
    for content in tools:
        value = json.loads(content)
        assert "cleared" in value or ("characters cut" in value["error"] and value["error"].startswith("Unknown"))


def test_small_conversation_is_left_alone():
    msgs = [Message("system", "s"), Message("user", "hi"), Message("assistant", "hello")]
    res = compress(msgs, lambda p: "summary", target_tokens=1000)
    assert res.method == "none" and res.messages == msgs and res.dropped_count == 0


def test_truncate_tool_outputs_keeps_the_last_n():
    msgs = _turn(0) + _turn(1) + _turn(2)
    out = truncate_tool_outputs(msgs, keep_last=1)
    tools = [m.content for m in out if m.role == "tool"]
    assert json.loads(tools[0]) == {"cleared": "old tool output cleared: 3,007 chars"}
    assert json.loads(tools[1])["cleared"].startswith("old tool output cleared")
    assert tools[2] == msgs[-1].content


@st.composite
def conversations(draw):
    msgs = [Message("system", "sys")]
    for i in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["user", "text", "calls"]))
        if kind == "user":
            msgs.append(Message("user", "u" * draw(st.integers(1, 500))))
        elif kind == "text":
            msgs.append(Message("assistant", "a" * draw(st.integers(1, 500))))
        else:
            msgs += _turn(i, draw(st.integers(1, 4)), draw(st.integers(0, 3000)))
    return msgs


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(0, 6), st.integers(0, 25), st.booleans(), st.integers(50, 5000))
def test_any_conversation_keeps_pairs_and_never_grows(msgs, first, last, with_summary, target):
    res = compress(msgs, (lambda p: "## Goal\nx") if with_summary else None,
                   protect_first_n=first, protect_last_n=last, target_tokens=target)
    assert_pairs_intact(res.messages)
    assert res.messages[0] == msgs[0]
    if res.method == "truncate":
        assert res.tokens_after <= res.tokens_before


def _settings(**compression):
    return Settings(data={"model": {"context_length": 20_000}, "compression": compression})


def test_auto_compactor_follows_the_compression_settings():
    msgs = _conversation()  # about 46K tokens
    small = msgs[:6]
    seen: list = []
    comp = AutoCompactor(_settings(threshold=0.5), None, on_result=seen.append)
    assert comp(small, None) is None and seen == []  # under 50% of 20K: untouched
    out = comp(msgs, None)
    assert out is not None and estimate_tokens(out) <= 6000  # 20K x 0.5 x 0.6
    assert seen[0].method == "truncate"
    assert AutoCompactor(_settings(enabled=False), None)(msgs, None) is None
    forced = AutoCompactor(_settings(enabled=False), None)(small, None, True)
    assert forced is not None and estimate_tokens(forced) < estimate_tokens(small)


def test_auto_compactor_does_not_thrash_when_protected_turns_stay_big():
    sys_prompt = Message("system", "S" * 60_000)  # 15K tokens of system prompt: nothing can fix that
    msgs = [sys_prompt, Message("user", "go")] + _turn(0) + _turn(1)
    seen: list = []
    comp = AutoCompactor(_settings(), None, on_result=seen.append)
    comp(msgs, None)
    comp(msgs, None)
    comp(msgs + [Message("assistant", "more")], None)
    assert len(seen) == 1  # retried only once the conversation grows by a further 10%


def test_the_compactor_measures_only_what_a_conversation_appended_and_agrees_with_a_full_count():
    """Its per-turn check counts new messages only (issue 24: per-turn cost), with the same figure as counting
    the whole conversation, also after the list was cut, rewound or replaced in place."""
    comp = AutoCompactor(_settings(enabled=False), None)
    whole = _conversation(12)
    live: list[Message] = []
    for i, m in enumerate(whole):
        live.append(m)
        for last in (None, 0, 1234):
            assert comp._tokens_now(last, live) == prompt_tokens_now(last, live), i
    live[:] = whole[:2] + whole[-5:]  # compacted in place: the same list object, other messages
    assert comp._tokens_now(500, live) == prompt_tokens_now(500, live)
    rewound = live[:3]  # /undo: a new, shorter list
    assert comp._tokens_now(500, rewound) == prompt_tokens_now(500, rewound)
    assert comp._tokens_now(500, []) == prompt_tokens_now(500, [])
