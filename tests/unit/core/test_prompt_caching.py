"""Anthropic cache breakpoints: system prompt + last three non-empty messages, Claude only."""

from __future__ import annotations

import copy

import pytest

from hermes_agent.providers.caching import apply_cache_breakpoints

EPHEMERAL = {"type": "ephemeral"}


def _wire():
    return [
        {"role": "system", "content": "You are Hermes."},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "a", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "a.txt b.txt"},
        {"role": "assistant", "content": "Two files."},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}},
                                     {"type": "text", "text": "and this?"}]},
    ]


def _marked(messages):
    out = []
    for i, m in enumerate(messages):
        parts = m["content"] if isinstance(m["content"], list) else []
        if any(isinstance(p, dict) and "cache_control" in p for p in parts):
            out.append(i)
    return out


@pytest.mark.parametrize("model, provider", [
    ("claude-sonnet-4-5", "anthropic"),
    ("anthropic/claude-opus-4.1", "openrouter"),
    ("anthropic/claude-3.5-haiku", "custom"),
])
def test_claude_gets_system_and_last_three(model, provider):
    wire = _wire()
    original = copy.deepcopy(wire)
    out = apply_cache_breakpoints(wire, model, provider)
    assert wire == original  # input untouched
    assert _marked(out) == [0, 3, 4, 5]  # the tool-calls-only assistant turn is skipped
    assert out[0]["content"] == [{"type": "text", "text": "You are Hermes.", "cache_control": EPHEMERAL}]
    assert out[3]["content"] == [{"type": "text", "text": "a.txt b.txt", "cache_control": EPHEMERAL}]
    assert out[5]["content"][0] == {"type": "image_url", "image_url": {"url": "data:"}}
    assert out[5]["content"][1]["cache_control"] == EPHEMERAL
    assert out[2] == original[2]


def test_one_hour_ttl():
    out = apply_cache_breakpoints(_wire(), "claude-sonnet-4-5", "anthropic", ttl="1h")
    assert out[0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


@pytest.mark.parametrize("model, provider", [
    ("gpt-4.1", "openai"),
    ("openai/gpt-4o", "openrouter"),
    ("hermes-4-70b", "nous"),
    ("claude-sonnet-4-5", "custom"),  # an unknown proxy may reject content parts
])
def test_other_models_are_unchanged(model, provider):
    wire = _wire()
    assert apply_cache_breakpoints(wire, model, provider) == _wire()
