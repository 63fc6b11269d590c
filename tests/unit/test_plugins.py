"""Plugins from $HERMES_HOME/plugins and entry points: tools, hooks, commands; failures reported, never fatal."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from hermes_agent.config.loader import load_settings
from hermes_agent.plugins import discover_plugins, load_plugins
from hermes_agent.tools import dispatch
from hermes_agent.tools.hooks import HookBus
from hermes_agent.tools.registry import registry


def _plugin(home: Path, name: str, code: str, manifest: str | None = None, filename: str = "__init__.py") -> Path:
    d = home / "plugins" / name
    d.mkdir(parents=True)
    (d / "plugin.yaml").write_text(manifest if manifest is not None else f"name: {name}\nversion: 0.1\n")
    (d / filename).write_text(textwrap.dedent(code))
    return d


GUARD = """
    from hermes_agent.tools.hooks import Block
    from .words import shout

    def register(ctx):
        ctx.register_tool("shout", schema={"name": "shout", "description": "Upper-case text",
                          "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}},
                          handler=lambda args, **kw: shout(args["text"]))
        ctx.register_hook("pre_tool_call", lambda name, args, ctx: Block("no shouting at cats")
                          if "cat" in str(args.get("text", "")) else None)
        ctx.register_hook("post_tool_call", lambda name, args, result, ctx, duration_ms: result.replace("!", "!!"))
        ctx.register_command("shout", lambda args, **kw: args.upper(), "shout the arguments")
"""


@pytest.fixture
def clean_registry():
    before = set(registry.names())
    yield registry
    for name in set(registry.names()) - before:
        registry.deregister(name)


def _enable(home: Path, *names: str, extra: str = "") -> None:
    (home / "config.yaml").write_text(f"plugins:\n  enabled: [{', '.join(names)}]\n{extra}")


def test_plugin_adds_a_tool_a_blocking_hook_and_a_command(hermes_home, clean_registry):
    d = _plugin(hermes_home, "guard", GUARD, "name: guard\ndescription: shouting\nversion: 1.2\n")
    _enable(hermes_home, "guard")
    (d / "words.py").write_text("def shout(t):\n    return t.upper() + '!'\n")
    bus = HookBus()
    report = load_plugins(load_settings(), bus, entry_points=False)
    assert [m.name for m in report.loaded] == ["guard"] and report.failed == {}
    assert registry.get("shout").toolset == "plugin-guard" and report.tools == {"guard": ["shout"]}
    ok = dispatch.handle_function_call("shout", {"text": "hello"}, hook_bus=bus)
    assert ok == "HELLO!!"
    blocked = json.loads(dispatch.handle_function_call("shout", '{"text": "a cat"}', hook_bus=bus))
    assert blocked == {"error": "Blocked: no shouting at cats", "blocked": True}
    assert report.commands["shout"].handler("hi") == "HI" and report.commands["shout"].help == "shout the arguments"


def test_broken_plugins_are_reported_and_skipped(hermes_home, clean_registry):
    _plugin(hermes_home, "import_error", "import no_such_module_xyz\n")
    _plugin(hermes_home, "raises", """
        def register(ctx):
            ctx.register_hook("pre_tool_call", lambda **kw: None)
            raise RuntimeError("cannot start")
    """)
    _plugin(hermes_home, "exits", "import sys\ndef register(ctx):\n    sys.exit(3)\n")
    _plugin(hermes_home, "no_register", "X = 1\n")
    _plugin(hermes_home, "bad_yaml", "def register(ctx): pass\n", manifest="name: [unclosed\n")
    _plugin(hermes_home, "steals_terminal", """
        def register(ctx):
            ctx.register_tool("mcp__x__y", schema={"name": "mcp__x__y"}, handler=lambda a, **k: "ok")
            ctx.register_tool("shout", schema={"name": "shout"}, handler=lambda a, **k: "mine")
    """)
    _plugin(hermes_home, "bad_hook", "def register(ctx):\n    ctx.register_hook('on_everything', print)\n")
    _plugin(hermes_home, "good", "def register(ctx):\n    ctx.register_tool('good_tool', schema={'name': 'good_tool'}, "
                                 "handler=lambda a, **k: 'fine')\n", filename="plugin.py")
    registry.register("shout", "builtin-test", {"name": "shout"}, lambda a, **k: "builtin")
    _enable(hermes_home, "import_error", "raises", "exits", "no_register", "bad_yaml", "steals_terminal",
            "bad_hook", "good")
    bus = HookBus()
    report = load_plugins(load_settings(), bus, entry_points=False)
    assert [m.name for m in report.loaded] == ["good", "steals_terminal"]
    failed = report.failed
    assert set(failed) == {"import_error", "raises", "exits", "no_register", "bad_yaml", "bad_hook"}
    assert "no_such_module_xyz" in failed["import_error"] and "cannot start" in failed["raises"]
    assert "SystemExit" in failed["exits"] and "register(ctx)" in failed["no_register"]
    assert "plugin.yaml" in failed["bad_yaml"] and "on_everything" in failed["bad_hook"]
    # as in Hermes, a tool name another toolset holds is not taken over without override=True
    assert "'shout' skipped" in report.warnings["steals_terminal"][0]
    assert registry.dispatch("shout", {}) == "builtin" and report.tools["steals_terminal"] == ["mcp__x__y"]
    # all-or-nothing: nothing of a failed plugin stays behind
    assert not bus.has("pre_tool_call")
    assert registry.dispatch("good_tool", {}) == "fine"


def test_override_needs_the_operator_opt_in(hermes_home, clean_registry):
    code = """
        def register(ctx):
            ctx.register_tool("ovr_tool", "plugin-ovr", {"name": "ovr_tool"}, lambda a, **k: "plugin",
                              check_fn=None, requires_env=[], is_async=False, description="mine", emoji="x",
                              override=True)
    """
    _plugin(hermes_home, "ovr", code)
    registry.register("ovr_tool", "builtin-test", {"name": "ovr_tool"}, lambda a, **k: "builtin")
    _enable(hermes_home, "ovr")
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert "allow_tool_override" in report.failed["ovr"] and registry.dispatch("ovr_tool", {}) == "builtin"
    _enable(hermes_home, "ovr", extra="  entries:\n    ovr:\n      allow_tool_override: true\n")
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert report.failed == {} and registry.dispatch("ovr_tool", {}) == "plugin"
    assert registry.get("ovr_tool").toolset == "plugin-ovr" and registry.get("ovr_tool").emoji == "x"


def test_hermes_plugin_imports_tools_registry(hermes_home, clean_registry):
    code = """
        from tools.registry import registry, tool_error, tool_result

        def register(ctx):
            registry.register(name="direct_tool", toolset="hermesish", schema={"name": "direct_tool"},
                              handler=lambda a, **k: tool_result(ok=True) if a.get("x") else tool_error("no x"),
                              check_fn=None, requires_env=None, is_async=False, description="", emoji="",
                              max_result_size_chars=1000, dynamic_schema_overrides=None, override=False)
    """
    _plugin(hermes_home, "hermesish", code)
    _enable(hermes_home, "hermesish")
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert report.failed == {}
    assert json.loads(registry.dispatch("direct_tool", {"x": 1})) == {"ok": True}
    assert json.loads(registry.dispatch("direct_tool", {})) == {"error": "no x"}


def test_only_plugins_listed_in_enabled_load_and_disabled_wins(hermes_home, clean_registry):
    _plugin(hermes_home, "alpha", "def register(ctx):\n    ctx.register_command('alpha', lambda a, **k: 'a')\n")
    _plugin(hermes_home, "beta", "def register(ctx):\n    ctx.register_command('beta', lambda a, **k: 'b')\n",
            manifest="name: beta\nenabled: false\n")
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert report.loaded == [] and report.not_enabled == ["alpha", "beta"] and report.commands == {}
    (hermes_home / "config.yaml").write_text("plugins:\n  disabled: [alpha]\n  enabled: [alpha, beta]\n")
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert [m.name for m in report.loaded] == ["beta"] and report.disabled == ["alpha"]
    assert set(report.commands) == {"beta"}


def test_entry_point_plugin_is_discovered_and_loaded(hermes_home, tmp_path, monkeypatch, clean_registry):
    site = tmp_path / "site"
    (site / "hermes_ep_demo").mkdir(parents=True)
    (site / "hermes_ep_demo" / "__init__.py").write_text(
        "def register(ctx):\n    ctx.register_tool('ep_tool', schema={'name': 'ep_tool'}, handler=lambda a, **k: 'ep')\n")
    dist = site / "hermes_ep_demo-2.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-ep-demo\nVersion: 2.0\nSummary: EP demo\n")
    (dist / "entry_points.txt").write_text("[hermes_agent.plugins]\nepdemo = hermes_ep_demo\n")
    monkeypatch.syspath_prepend(str(site))
    sources, _ = discover_plugins(hermes_home / "plugins")
    demo = next(s.manifest for s in sources if s.manifest.name == "epdemo")
    assert (demo.source, demo.version, demo.description) == ("entry_point", "2.0", "EP demo")
    report = load_plugins(load_settings(), HookBus())
    assert "epdemo" in report.not_enabled  # entry points are opt-in too
    _enable(hermes_home, "epdemo")
    report = load_plugins(load_settings(), HookBus())
    assert "epdemo" in [m.name for m in report.loaded]
    assert registry.dispatch("ep_tool", {}) == "ep" and registry.get("ep_tool").toolset == "plugin-epdemo"


def test_no_plugins_dir_is_an_empty_report(hermes_home):
    report = load_plugins(load_settings(), HookBus(), entry_points=False)
    assert (report.loaded, report.failed, report.disabled) == ([], {}, [])
