"""The frozen Settings object: merged config plus the effective environment, passed explicitly."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.config.schema import Config

_MISSING = object()


def deep_merge(base: dict, over: Mapping) -> dict:
    """Merge `over` into `base` recursively (mappings merge, everything else replaces)."""
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def apply_dotted(data: dict, dotted: str, value: object) -> None:
    """Set `data[a][b] = value` for `a.b`, creating intermediate mappings."""
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            node[part] = nxt
        node = nxt
    node[parts[-1]] = value


def get_dotted(data: Mapping, dotted: str, default: object = None) -> object:
    """Value at a dotted key such as `terminal.backend` in nested mappings, or `default`."""
    node: object = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The `model:` section, normalised."""

    provider: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    context_length: int = 128000
    max_tokens: int | None = None
    pricing: tuple[float, float, float | None, float | None] | None = None  # USD per 1M: in, out, cache r/w


def parse_pricing(raw: object, where: str = "model.pricing") -> tuple[float, float, float | None, float | None] | None:
    """`model.pricing` (or a fallback row's `pricing`) {input, output, cache_read, cache_write} (USD per 1M
    tokens), for custom endpoints."""
    if not raw:
        return None
    from hermes_agent.errors import ConfigError

    try:
        vals = [None if raw.get(k) is None else float(raw[k])  # type: ignore[union-attr]
                for k in ("input", "output", "cache_read", "cache_write")]
    except (AttributeError, TypeError, ValueError):
        raise ConfigError(f"{where} must map input/output/cache_read/cache_write to USD per 1M tokens, "
                          f"got {raw!r}") from None
    if vals[0] is None or vals[1] is None or any(v is not None and v < 0 for v in vals):
        raise ConfigError(f"{where} needs input and output prices (USD per 1M tokens, >= 0), got {raw!r}")
    return (vals[0], vals[1], vals[2], vals[3])


@dataclass(frozen=True, slots=True)
class Settings:
    """Merged configuration (defaults < config.yaml < .env < environment < CLI)."""

    data: Mapping = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    home: Path = Path(".")
    config_file: Path | None = None
    yolo: bool = False
    typed: Config | None = field(default=None, compare=False, repr=False)
    chosen: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # keys set by with_overrides

    @property
    def cfg(self) -> Config:
        """The typed, validated tree (built by the loader; built here for Settings made by hand)."""
        if self.typed is not None:
            return self.typed
        from hermes_agent.config.defaults import DEFAULT_CONFIG
        from hermes_agent.config.schema import build_config

        merged = deep_merge(copy.deepcopy(DEFAULT_CONFIG), self.data)
        typed = build_config(merged)
        object.__setattr__(self, "typed", typed)
        return typed

    def get(self, dotted: str, default: object = None) -> object:
        """Raw value at a dotted key the user named (`hermes config get KEY`), or `default`. Code reads
        settings through the typed tree, `settings.cfg.<section>.<key>` (tests/unit/config/test_typed_access.py)."""
        return get_dotted(self.data, dotted, default)

    def section(self, name: str) -> dict:
        """A deep copy of a mapping section (empty dict when absent)."""
        value = self.data.get(name)
        return copy.deepcopy(value) if isinstance(value, Mapping) else {}

    @property
    def model(self) -> ModelSettings:
        m = self.data.get("model") or {}
        ctx = m.get("context_length") or 128000
        return ModelSettings(
            provider=str(m.get("provider") or "auto"),
            model=str(m.get("default") or m.get("model") or ""),
            base_url=str(m.get("base_url") or ""),
            api_key=str(m.get("api_key") or ""),
            context_length=int(ctx),
            max_tokens=m.get("max_tokens"),
            pricing=parse_pricing(m.get("pricing")),
        )

    def with_overrides(self, overrides: Mapping[str, object]) -> Settings:
        """A copy with dotted keys replaced (used for per-session changes such as /model)."""
        data = copy.deepcopy(dict(self.data))
        for key, value in overrides.items():
            apply_dotted(data, key, value)
        out = Settings(data=data, env=self.env, home=self.home, config_file=self.config_file, yolo=self.yolo,
                       chosen=self.chosen | frozenset(overrides))
        out.cfg  # noqa: B018 - validate now, not at first use
        return out
