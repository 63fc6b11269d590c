"""Discord's 2000-char pieces: split_text's boundaries, code fences closed and reopened across a cut."""

from __future__ import annotations

import re

from hermes_agent.gateway.base import split_fenced
from hermes_agent.gateway.platforms.discord import MAX_LENGTH, _ids


def split_message(text: str) -> list[str]:
    return split_fenced(text, MAX_LENGTH)


def _fences_balanced(piece: str) -> bool:
    return len(re.findall(r"^```", piece, re.M)) % 2 == 0


def test_short_text_is_one_piece_as_is():
    assert split_message("hello **there**") == ["hello **there**"]


def test_a_cut_inside_a_fence_closes_and_reopens_it_with_its_language():
    code = "\n".join(f"x{i} = {i}" for i in range(600))
    pieces = split_message(f"intro\n\n```python\n{code}\n```\n\nafter")
    assert len(pieces) >= 3 and all(len(p) <= 2000 for p in pieces)
    assert all(_fences_balanced(p) for p in pieces)
    assert all(p.startswith("```python\n") for p in pieces[1:])
    assert pieces[-1].endswith("after")
    body = "\n".join(p.removeprefix("```python\n").removesuffix("\n```") for p in pieces)
    assert all(f"x{i} = {i}" in body for i in range(600))


def test_inline_code_and_closed_fences_are_left_alone():
    text = ("See ```inline``` and\n```\nblock\n```\n" + "word " * 500).strip()
    pieces = split_message(text)
    assert len(pieces) == 2 and all(_fences_balanced(p) for p in pieces)
    assert not pieces[1].startswith("```")


def test_channel_ids_from_config():
    assert _ids([123, "456"]) == {123, 456}
    assert _ids("123, 456,") == {123, 456}
    assert _ids(789) == {789}
    assert _ids(None) == set()
