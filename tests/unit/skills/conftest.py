"""Fixtures for skills tests: a ToolContext bound to the temp HERMES_HOME, and a tool caller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hermes_agent.tools.builtin.skills  # noqa: F401  (registers the tools)
from hermes_agent.config.loader import load_settings
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture
def call(hermes_home: Path):
    """call(tool, **args) -> parsed JSON result, dispatched through the real registry."""

    def _call(tool: str, **args: object) -> dict:
        ctx = ToolContext(settings=load_settings())
        return json.loads(registry.dispatch(tool, args, ctx=ctx, task_id="t"))

    return _call


def skill_md(name: str, description: str = "Does a thing well", body: str = "# Steps\n1. First.\n") -> str:
    """A minimal valid SKILL.md."""
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"
