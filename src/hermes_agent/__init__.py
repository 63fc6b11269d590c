"""Hermes Agent: the self-improving personal AI agent. Nothing heavy is imported here."""

from __future__ import annotations

import sys as _sys

# `python -m hermes_agent` puts its working directory first on sys.path; a `dotenv.py` or `yaml.py` a command
# wrote into a workspace would then be imported, unconfined, in place of the real module (`-P` is the flag that
# prevents it; hermes's own helpers are started with it). The package itself is found by then.
if _sys.argv[:1] == ["-m"] and not _sys.flags.safe_path and _sys.path:
    del _sys.path[0]

__version__ = "0.1.0"
__all__ = ["AIAgent", "__version__"]


def __getattr__(name: str):  # lazy: `from hermes_agent import AIAgent` without import-time cost
    if name == "AIAgent":
        from hermes_agent.bootstrap import AIAgent

        return AIAgent
    raise AttributeError(name)
