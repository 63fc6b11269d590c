"""List prices of well-known models (USD per million tokens) and estimate_cost(). Data plus one lookup.

Usage follows the OpenAI convention: prompt_tokens INCLUDES cache reads and writes, and
completion_tokens includes reasoning tokens. Unknown models cost None, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from hermes_agent import lazyre
from hermes_agent.messages import Usage

PRICING_VERSION = "2025-10"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens; cache prices default to the input price when the vendor has none."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


# Keys are matched against the model name after _normalise (provider prefix, dates and tags dropped).
PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4": Price(15, 75, 1.5, 18.75),
    "claude-opus-4-1": Price(15, 75, 1.5, 18.75),
    "claude-opus-4-5": Price(5, 25, 0.5, 6.25),
    "claude-sonnet-4": Price(3, 15, 0.3, 3.75),
    "claude-sonnet-4-5": Price(3, 15, 0.3, 3.75),
    "claude-3-7-sonnet": Price(3, 15, 0.3, 3.75),
    "claude-3-5-sonnet": Price(3, 15, 0.3, 3.75),
    "claude-haiku-4-5": Price(1, 5, 0.1, 1.25),
    "claude-3-5-haiku": Price(0.8, 4, 0.08, 1.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.03, 0.3),
    "claude-3-opus": Price(15, 75, 1.5, 18.75),
    # OpenAI
    "gpt-4o": Price(2.5, 10, 1.25),
    "gpt-4o-mini": Price(0.15, 0.6, 0.075),
    "gpt-4-1": Price(2, 8, 0.5),
    "gpt-4-1-mini": Price(0.4, 1.6, 0.1),
    "gpt-4-1-nano": Price(0.1, 0.4, 0.025),
    "gpt-5": Price(1.25, 10, 0.125),
    "gpt-5-mini": Price(0.25, 2, 0.025),
    "gpt-5-nano": Price(0.05, 0.4, 0.005),
    "o1": Price(15, 60, 7.5),
    "o3": Price(2, 8, 0.5),
    "o3-mini": Price(1.1, 4.4, 0.55),
    "o4-mini": Price(1.1, 4.4, 0.275),
    # Google
    "gemini-2-5-pro": Price(1.25, 10, 0.31),
    "gemini-2-5-flash": Price(0.3, 2.5, 0.075),
    "gemini-2-5-flash-lite": Price(0.1, 0.4, 0.025),
    "gemini-2-0-flash": Price(0.1, 0.4, 0.025),
    # DeepSeek (V3.2 list price)
    "deepseek-chat": Price(0.28, 0.42, 0.028),
    "deepseek-reasoner": Price(0.28, 0.42, 0.028),
    # xAI, Moonshot, Mistral
    "grok-4": Price(3, 15, 0.75),
    "grok-3-mini": Price(0.3, 0.5, 0.075),
    "kimi-k2": Price(0.6, 2.5, 0.15),
    "mistral-large": Price(2, 6),
    "mistral-small": Price(0.1, 0.3),
}

_TAIL = lazyre.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest|preview(-\d{2}-\d{2})?|exp)$")


def _normalise(model: str) -> str:
    name = model.strip().lower().split(":", 1)[0].rsplit("/", 1)[-1]
    name = name.replace(".", "-").replace("_", "-")
    while (stripped := _TAIL.sub("", name)) != name:
        name = stripped
    return name


@lru_cache(maxsize=256)
def price_for(model: str) -> Price | None:
    """The table row for a model name such as 'anthropic/claude-sonnet-4.5' or 'gpt-4o-2024-08-06'."""
    name = _normalise(model)
    if not name:
        return None
    if name in PRICES:
        return PRICES[name]
    framed = f"-{name}-"
    keys = [k for k in PRICES if f"-{k}-" in framed]
    return PRICES[max(keys, key=len)] if keys else None


def lookup(model: str | None, own: Mapping[str, Price] | None = None) -> Price | None:
    """The price of a model: the user's own (`model.pricing`, a fallback row's `pricing`: custom endpoints)
    first, then free for a ':free' name, then the table; None when nothing knows it."""
    if not model:
        return None
    if own and model in own:
        return own[model]
    if model.strip().lower().endswith(":free"):
        return Price(0, 0, 0, 0)
    return price_for(model)


def cost_at(price: Price, usage: Usage) -> float:
    """USD cost of one call's usage at `price`."""
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    uncached = max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    total = (uncached * price.input + usage.cache_read_tokens * read + usage.cache_write_tokens * write
             + usage.completion_tokens * price.output)
    return total / 1_000_000


def estimate_cost(model: str | None, usage: Usage, own: Mapping[str, Price] | None = None) -> float | None:
    """USD cost of one call's usage, or None when the model has no price (see lookup)."""
    price = lookup(model, own)
    return None if price is None else cost_at(price, usage)
