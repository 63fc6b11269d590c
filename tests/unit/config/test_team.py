"""config/team.py: roles from config and people.json, per-role toolsets, role caps."""

from __future__ import annotations

import json
import stat

import pytest

from hermes_agent.config.loader import load_settings
from hermes_agent.config.team import Team, caps_for


@pytest.fixture
def settings(hermes_home):
    (hermes_home / "config.yaml").write_text(
        "team:\n  owner: 'telegram:1'\n  people:\n    'telegram:2': member\n    'telegram:1': guest\n"
        "  roles:\n    guest:\n      budget: {day_usd: 0.5, session_tokens: 20000}\n"
        "    member:\n      disabled_toolsets: [messaging]\n", encoding="utf-8")
    return load_settings()


def test_roles_from_config_and_chat(settings, hermes_home):
    team = Team(settings)
    assert team.enabled
    assert team.person("telegram", "1").role == "owner"  # `owner` wins over a people entry
    assert team.person("telegram", "2").role == "member"
    assert team.person("telegram", "9").role == "guest"  # the default for anyone paired
    assert team.person("telegram", "9", trusted=True).role == "admin"  # allowlisted, not named
    assert not team.knows("telegram", "9")
    team.assign("telegram:9", "admin", by="telegram:1", name="Nine")
    team.assign("telegram:2", "guest", by="telegram:1")
    assert team.person("telegram", "9").role == "admin" and team.person("telegram", "9").name == "Nine"
    assert team.person("telegram", "2").role == "guest"  # /role wins over config
    assert team.knows("telegram", "9")
    path = hermes_home / "team" / "people.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["telegram:9"]["by"] == "telegram:1"
    with pytest.raises(ValueError):
        team.assign("telegram:2", "owner", by="telegram:1")
    assert [p.role for p in team.people()] == ["owner", "admin", "guest"]


def test_toolsets_and_caps_per_role(settings):
    team = Team(settings)
    assert "terminal" in team.disabled_toolsets("guest") and "messaging" in team.disabled_toolsets("guest")
    assert team.disabled_toolsets("member") == ("messaging",)
    assert team.disabled_toolsets("owner") == ()
    assert caps_for(settings, "telegram:77") == {"day_usd": 0.5, "session_tokens": 20000}
    assert caps_for(settings, "telegram:2") == {}
    assert caps_for(settings, "cron:job1") == {}


def test_off_without_a_team_section(hermes_home):
    team = Team(load_settings())
    assert not team.enabled and team.people() == []
    assert caps_for(load_settings(), "telegram:1") == {}


def test_a_roles_disabled_toolsets_stay_off_in_subagents():
    from hermes_agent.bootstrap.delegation import TaskSpec, child_tools
    from hermes_agent.tools.registry import discover_builtin_tools

    discover_builtin_tools(toolsets=["hermes-telegram"])
    _, free = child_tools(TaskSpec("look around"), ["hermes-telegram"])
    _, member = child_tools(TaskSpec("look around"), ["hermes-telegram"], ("file", "terminal"))
    assert {"read_file", "terminal"} <= free
    assert not member & {"read_file", "write_file", "terminal", "process"} and "web_search" in member
