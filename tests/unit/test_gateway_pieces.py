"""Gateway pieces with no I/O: message splitting, MarkdownV2 escaping, pairing expiry and limits."""

from __future__ import annotations

import pytest

from hermes_agent.gateway.base import split_text
from hermes_agent.gateway.pairing import PairingStore


def test_split_prefers_paragraphs_then_lines_then_words():
    text = "a" * 3000 + "\n\n" + "b" * 3000
    assert split_text(text, 4096) == ["a" * 3000, "b" * 3000]
    words = " ".join(["word"] * 2000)
    pieces = split_text(words, 4096)
    assert all(len(p) <= 4096 for p in pieces) and " ".join(pieces).split() == words.split()
    assert split_text("x" * 5000, 4096) == ["x" * 4096, "x" * 904]
    assert split_text("short", 4096) == ["short"]


def test_markdown_v2_escaping_keeps_code_and_bold():
    pytest.importorskip("telegram")
    from hermes_agent.gateway.platforms.telegram import escape_markdown_v2

    assert escape_markdown_v2("**Done**. See `a_b.py` (v1.2)!") == "*Done*\\. See `a_b.py` \\(v1\\.2\\)\\!"
    assert escape_markdown_v2("```\nx = a*b\n```") == "```\nx = a*b\n```"
    assert escape_markdown_v2("odd ** star") == "odd \\*\\* star"


def test_pairing_code_expires_after_an_hour(tmp_path):
    now = [1000.0]
    store = PairingStore(tmp_path, clock=lambda: now[0])
    code = store.request("telegram", "7", "eve").code
    assert code and len(code) == 8 and code.isupper()
    assert store.request("telegram", "7").reason == "rate_limited"
    now[0] += 3601
    assert store.approve("telegram", code) is None
    assert store.list_pending("telegram") == []
    fresh = store.request("telegram", "7").code  # the 10-minute limit has passed too
    assert store.approve("telegram", fresh) == {"user_id": "7", "user_name": ""}
    assert store.is_approved("telegram", "7")


def test_chat_keys_are_hermes_routing_keys():
    from hermes_agent.gateway.base import Inbound
    from hermes_agent.gateway.session import session_key

    def ev(chat: str, dm: bool, user: str = "42") -> Inbound:
        return Inbound("telegram", 1, chat, user, "Ann", "hi", is_dm=dm)

    assert session_key(ev("111", True)) == "agent:main:telegram:dm:111"
    assert session_key(ev("-100", False)) == "agent:main:telegram:group:-100:42"
    assert session_key(ev("-100", False), per_user=False) == "agent:main:telegram:group:-100"
    assert session_key(ev("C1:1700.1", False)) == "agent:main:telegram:group:C1:1700.1"  # a thread is shared
