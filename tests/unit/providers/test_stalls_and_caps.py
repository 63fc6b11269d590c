"""The idle watchdog and the reply cap against the scripted server over real HTTP."""

from __future__ import annotations

import time

import pytest

from hermes_agent.errors import ProviderError, StreamStalledError
from hermes_agent.messages import Message
from hermes_agent.providers.base import ChatRequest
from hermes_agent.providers.http import IdlePolicy
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.providers.retry import RetryingProvider

REQ = ChatRequest((Message("user", "hi"),))


def test_silence_is_noticed_once_then_abandoned_and_the_connection_is_reusable(scripted):
    notices: list[float] = []
    p = OpenAIChatProvider(scripted.url, "k", "m", idle=IdlePolicy(0.2, 0.8, notices.append))
    scripted.add({"content": "never", "stall": 30}, {"content": "fine now"})
    started = time.monotonic()
    with pytest.raises(StreamStalledError, match="sent nothing for 1s"):
        p.complete(REQ)
    assert 0.7 < time.monotonic() - started < 3 and len(notices) == 1 and notices[0] >= 0.2
    assert p.complete(REQ).content == "fine now"


def test_a_slow_but_steady_stream_is_not_abandoned(scripted):
    p = OpenAIChatProvider(scripted.url, "k", "m", idle=IdlePolicy(0.3, 0.6))
    scripted.add({"content": "one two three four five six", "chunk_delay": 0.2})  # 1.6 s in all
    assert p.complete(REQ).content == "one two three four five six"


def test_stalled_attempts_are_retried_only_within_the_budget(scripted):
    inner = OpenAIChatProvider(scripted.url, "k", "m", idle=IdlePolicy(10, 0.5))
    retrying = RetryingProvider(inner, max_retries=5, base_delay=0.01, stall_budget=1.4)
    scripted.add(*[{"content": "x", "stall": 30}] * 6)
    with pytest.raises(StreamStalledError):
        retrying.complete(REQ)
    assert len(scripted.requests) == 2  # a third silent attempt would end past 1.4 s


def test_a_reply_over_the_cap_is_cut_with_a_note_and_the_rest_is_not_read(scripted):
    p = OpenAIChatProvider(scripted.url, "k", "m", max_reply_chars=1000)
    scripted.add({"content": "x" * 100, "repeat": 50_000}, {"content": "next"})
    deltas: list[str] = []
    msg = p.complete(REQ, lambda kind, text: deltas.append(text))
    assert msg.content.startswith("x" * 1000) and msg.content[1000:].startswith("\n\n[reply truncated")
    assert msg.finish_reason == "truncated" and len("".join(deltas)) == 1000
    assert p.complete(REQ).content == "next"  # a fresh connection after the abandoned one


def test_a_non_streamed_reply_is_cut_too_and_a_huge_one_is_refused_unread(scripted):
    p = OpenAIChatProvider(scripted.url, "k", "m", stream=False, max_reply_chars=1000)
    scripted.add({"content": "y" * 20_000}, {"content": "z" * 1_100_000}, {"content": "after"})
    assert p.complete(REQ).content.startswith("y" * 1000 + "\n\n[reply truncated")
    with pytest.raises(ProviderError, match="larger than 1 MB; not read"):
        p.complete(REQ)
    assert p.complete(REQ).content == "after"
