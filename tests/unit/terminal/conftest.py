"""Fixtures for the terminal tools: a real BackendPool (local backend) behind a real ToolContext, and
`call(name, **args)` going through registry.dispatch exactly as the agent loop does."""

from __future__ import annotations

import json
import os

import pytest

import hermes_agent.tools.builtin.terminal  # noqa: F401  (registers the tools)
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.manager import BackendPool
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry


def make_settings(tmp_path, work, **sections) -> Settings:
    data = {**DEFAULT_CONFIG, "terminal": {**DEFAULT_CONFIG["terminal"], "cwd": str(work)}}
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Settings(data=data, env=dict(os.environ), home=tmp_path / "home")


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def pool(tmp_path, work):
    p = BackendPool(make_settings(tmp_path, work))
    yield p
    p.close_all()


@pytest.fixture
def ctx(pool):
    return ToolContext(settings=pool.settings, task_id="t", backend_factory=pool.get)


@pytest.fixture
def call(ctx):
    def _call(name: str, _ctx: ToolContext | None = None, **args) -> dict:
        c = _ctx or ctx
        return json.loads(registry.dispatch(name, args, ctx=c, task_id=c.task_id))
    return _call
