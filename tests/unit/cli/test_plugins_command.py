"""`hermes plugins list|enable|disable` through the real executable."""

from __future__ import annotations

from tests.helpers import run_hermes, write_config


def _plugin(home, name, code, manifest=""):
    d = home / "plugins" / name
    d.mkdir(parents=True)
    (d / "plugin.yaml").write_text(manifest or f"name: {name}\nversion: 1.0\ndescription: the {name} plugin\n")
    (d / "__init__.py").write_text(code)


def test_list_shows_loaded_failed_disabled_and_skipped_plugins(hermes_home):
    write_config(hermes_home, "plugins:\n  enabled: [greeter, broken, quiet]\n  disabled: [quiet]\n")
    _plugin(hermes_home, "unlisted", "def register(ctx): pass\n")
    _plugin(hermes_home, "greeter", "def register(ctx):\n    ctx.register_tool('greet', schema={'name': 'greet'}, "
                                    "handler=lambda a, **k: 'hi')\n    ctx.register_command('hello', lambda a, **k: 'hi')\n")
    _plugin(hermes_home, "broken", "import not_installed_dep\n")
    _plugin(hermes_home, "quiet", "def register(ctx): pass\n", manifest="name: quiet\nenabled: false\n")
    out = run_hermes("plugins", "list", home=hermes_home)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert "enabled  tools: greet  commands: /hello - the greeter plugin" in lines["greeter"]
    assert "FAILED: ModuleNotFoundError: No module named 'not_installed_dep'" in lines["broken"]
    assert "disabled" in lines["quiet"]
    assert "not enabled (hermes plugins enable unlisted)" in lines["unlisted"]
    assert "Skipped (not in plugins.enabled): unlisted" in out.stdout


def test_enable_and_disable_edit_config_and_keep_comments(hermes_home):
    path = write_config(hermes_home, "# mine\nmodel: m  # keep\n")
    _plugin(hermes_home, "greeter", "def register(ctx): pass\n")
    _plugin(hermes_home, "quiet", "def register(ctx): pass\n", manifest="name: quiet\nenabled: false\n")
    assert run_hermes("plugins", "disable", "greeter", home=hermes_home).returncode == 0
    assert run_hermes("plugins", "enable", "quiet", home=hermes_home).returncode == 0
    text = path.read_text()
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(text)
    assert "# mine" in text and "# keep" in text
    assert data["plugins"] == {"disabled": ["greeter"], "enabled": ["quiet"]}
    listing = run_hermes("plugins", "list", home=hermes_home).stdout
    assert "greeter 1.0  disabled" in listing and "quiet        enabled" in listing
    assert run_hermes("plugins", "enable", "greeter", home=hermes_home).returncode == 0
    assert run_hermes("plugins", "disable", "quiet", home=hermes_home).returncode == 0
    plugins = YAML(typ="safe").load(path.read_text())["plugins"]
    assert plugins == {"disabled": ["quiet"], "enabled": ["greeter"]}
    unknown = run_hermes("plugins", "enable", "nope", home=hermes_home)
    assert unknown.returncode == 1 and "no plugin named 'nope'" in unknown.stderr
