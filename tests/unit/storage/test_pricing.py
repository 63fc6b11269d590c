"""Pricing table lookups by model name and the cost arithmetic."""

from __future__ import annotations

import pytest

from hermes_agent.messages import Usage
from hermes_agent.storage.pricing import PRICES, estimate_cost, price_for


@pytest.mark.parametrize(("model", "key"), [
    ("anthropic/claude-sonnet-4", "claude-sonnet-4"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
    ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
    ("gpt-4o", "gpt-4o"),
    ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("GPT-4.1-mini", "gpt-4-1-mini"),
    ("deepseek/deepseek-chat", "deepseek-chat"),
    ("google/gemini-2.5-flash-preview-05-20", "gemini-2-5-flash"),
    ("o3-mini", "o3-mini"),
])
def test_known_models_match(model, key):
    assert price_for(model) is PRICES[key]


@pytest.mark.parametrize("model", ["llama3.1:8b", "my-finetune", "", "o33", "xgpt-4o"])
def test_unknown_models_have_no_price(model):
    assert price_for(model) is None
    assert estimate_cost(model, Usage(1000, 1000)) is None


def test_unknown_variant_matches_its_family_at_a_dash_boundary():
    assert price_for("gpt-4o-audio-x") is PRICES["gpt-4o"]


def test_cost_arithmetic_with_cache():
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cache_read_tokens=500_000,
                  cache_write_tokens=100_000)
    expected = 0.4 * 3 + 0.5 * 0.3 + 0.1 * 3.75 + 1 * 15
    assert estimate_cost("claude-sonnet-4", usage) == pytest.approx(expected)


def test_cache_price_defaults_to_input_and_free_models_cost_nothing():
    assert estimate_cost("mistral-large", Usage(1_000_000, 0, 1_000_000)) == pytest.approx(2.0)
    assert estimate_cost("meta-llama/llama-3.3-70b-instruct:free", Usage(10**6, 10**6)) == 0.0
    assert estimate_cost(None, Usage(1, 1)) is None
