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


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("tools.tool_search.threshold_pct", 150, "tools.tool_search.threshold_pct must be a number >= 0 <= 100, got 150"),
    ("tools.tool_search.enabled", "sometimes", "tools.tool_search.enabled must be one of auto, on, off, got 'sometimes'"),
    ("plugins.enabled", "greeter", "plugins.enabled must be a list of strings, got 'greeter'"),
    ("plugins.entries", ["a"], "plugins.entries must be a mapping, got ['a']"),
    ("mcp_servers", "github", "mcp_servers must be a mapping, got 'github'"),
    ("fallback_providers", ["openrouter"], "fallback_providers must be a list of mappings, got ['openrouter']"),
    ("agent.retry_base_delay", -1, "agent.retry_base_delay must be a number >= 0, got -1"),
    ("display.tool_progress", "loud", "display.tool_progress must be one of all, new, verbose, log, off, got 'loud'"),
    ("toolsets", [{"a": 1}], "toolsets must be a list of strings, got [{'a': 1}]"),
])
def test_newly_modelled_keys_are_checked(key, value, expected):
    with pytest.raises(ConfigError) as err:
        build_config(_with(key, value))
    assert str(err.value) == expected


@pytest.mark.parametrize(("key", "value", "read"), [
    # the spellings the released Hermes accepts for the same meaning
    ("approvals.mode", False, "off"),  # YAML 1.1 `mode: off`
    ("approvals.mode", "", "manual"),
    ("approvals.cron_mode", "allow", "approve"),
    ("approvals.cron_mode", "yes", "approve"),
    ("display.tool_progress", False, "off"),
    ("tools.tool_search.enabled", True, "on"),
    ("tools.tool_search.enabled", "no", "off"),
    ("display.streaming", "yes", True),  # YAML 1.1 booleans, which ruamel (YAML 1.2) reads as words
    ("checkpoints.enabled", "off", False),
    ("terminal.docker_network", "on", True),
])
def test_hermes_spellings_are_accepted(key, value, read):
    cfg = build_config(_with(key, value))
    section, _, name = key.rpartition(".")
    node = cfg
    for part in section.split("."):
        node = getattr(node, part)
    assert getattr(node, name) == read


def test_legacy_tool_search_bool_and_nulls_take_the_defaults():
    assert build_config(_with("tools.tool_search", False)).tools.tool_search.enabled == "off"
    assert build_config(_with("tools.tool_search", True)).tools.tool_search.enabled == "auto"
    cfg = build_config(_with("terminal.timeout", None))
    assert cfg.terminal.timeout == DEFAULT_CONFIG["terminal"]["timeout"]
    assert build_config(_with("plugins", None)).plugins.enabled == []
    assert build_config(_with("context_file_max_chars", None)).context_file_max_chars is None  # null is meaningful


def test_unknown_keys_are_ignored():
    data = _with("agent.coding_context", "auto")
    data["security"] = {"redact_secrets": True}
    data["terminal"]["modal_mode"] = "auto"
    assert build_config(data).agent.max_turns == DEFAULT_CONFIG["agent"]["max_turns"]


def test_free_form_sections_keep_their_insides():
    data = _with("mcp_servers", {"gh": {"command": "npx", "args": ["-y", "server"]}})
    data["fallback_providers"] = [{"provider": "openrouter", "model": "m"}]
    cfg = build_config(data)
    assert cfg.mcp_servers == {"gh": {"command": "npx", "args": ["-y", "server"]}}
    assert cfg.fallback_providers == [{"provider": "openrouter", "model": "m"}]
