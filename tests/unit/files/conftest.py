"""Fixtures for the file tools: a real LocalBackend rooted in a temp work dir, a real ToolContext whose
checkpoint hook feeds a real CheckpointStore, and `call(name, **args)` through registry.dispatch."""

from __future__ import annotations

import json
import os

import pytest

import hermes_agent.tools.builtin.files  # noqa: F401  (registers the tools)
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.storage.checkpoints import CheckpointStore
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def store(hermes_home):
    return CheckpointStore()


def make_ctx(work, store=None, **data) -> ToolContext:
    backend = LocalBackend(cwd=str(work))
    settings = Settings(data={**DEFAULT_CONFIG, **data}, env={"PATH": os.environ.get("PATH", "")})
    snap = (lambda wd, why: store.snapshot(wd, why)) if store is not None else None
    return ToolContext(settings=settings, backend_factory=lambda _task: backend, checkpoint=snap)


@pytest.fixture
def ctx(work, store):
    return make_ctx(work, store)


@pytest.fixture
def call(ctx):
    def _call(name: str, _ctx: ToolContext | None = None, **args) -> dict:
        return json.loads(registry.dispatch(name, args, ctx=_ctx or ctx, task_id="t"))
    return _call
