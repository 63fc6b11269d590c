"""The rules' name for `hermes_agent.lazyre` (importing the rules compiles nothing: ARCHITECTURE.md rule 3)."""

from __future__ import annotations

from hermes_agent.lazyre import LazyPattern as LazyRe
from hermes_agent.lazyre import compile as lazy

__all__ = ["LazyRe", "lazy"]
