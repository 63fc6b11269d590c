"""The typed Settings tree: every modelled key has a default, wrong types and values are one clear line."""

from __future__ import annotations

import copy

import pytest

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.loader import get_dotted
from hermes_agent.config.schema import build_config, modelled_keys
from hermes_agent.errors import ConfigError

_MISSING = object()


def test_every_modelled_key_has_a_default():
    missing = [k for k in modelled_keys() if get_dotted(DEFAULT_CONFIG, k, _MISSING) is _MISSING]
    assert missing == []


def test_defaults_build_and_are_typed():
    cfg = build_config(DEFAULT_CONFIG)
    assert isinstance(cfg.agent.max_turns, int) and isinstance(cfg.terminal.timeout, float)
    assert cfg.sandbox.mode == "workspace-write" and cfg.terminal.env_passthrough == []


def _with(key: str, value: object) -> dict:
    data = copy.deepcopy(DEFAULT_CONFIG)
    *parents, last = key.split(".")
    node = data
    for p in parents:
        node = node[p]
    node[last] = value
    return data


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("agent.max_turns", "lots", "agent.max_turns must be an integer >= 1, got 'lots'"),
    ("agent.max_turns", 0, "agent.max_turns must be an integer >= 1, got 0"),
    ("agent.max_turns", 2.5, "agent.max_turns must be an integer >= 1, got 2.5"),
    ("terminal.timeout", "abc", "terminal.timeout must be a number >= 0.01, got 'abc'"),
    ("terminal.backend", "dokcer", "terminal.backend must be one of local, docker, ssh"),
    ("terminal.env_passthrough", "GITHUB_TOKEN", "terminal.env_passthrough must be a list of strings"),
    ("approvals.mode", "yes", "approvals.mode must be one of manual, smart, off, got 'yes'"),
    ("checkpoints.enabled", "maybe", "checkpoints.enabled must be true or false, got 'maybe'"),
    ("terminal.ssh_port", 70000, "terminal.ssh_port must be an integer >= 1 <= 65535, got 70000"),
    ("compression", "on", "compression must be a mapping, got 'on'"),
])
def test_bad_values_name_key_value_and_expectation(key, value, expected):
    with pytest.raises(ConfigError) as err:
        build_config(_with(key, value))
    assert expected in str(err.value)


def test_numeric_strings_from_the_environment_are_accepted():
    cfg = build_config(_with("terminal.timeout", "45"))
    assert cfg.terminal.timeout == 45.0
    assert build_config(_with("approvals.mode", "SMART")).approvals.mode == "smart"
