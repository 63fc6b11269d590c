"""Hermes Agent: the self-improving personal AI agent. Nothing heavy is imported here."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["AIAgent", "__version__"]


def __getattr__(name: str):  # lazy: `from hermes_agent import AIAgent` without import-time cost
    if name == "AIAgent":
        from hermes_agent.bootstrap import AIAgent

        return AIAgent
    raise AttributeError(name)
