"""The real `hermes` management commands: config, setup (in a pseudo-terminal), doctor, status, tools,
model, update/uninstall plans and completion, against the scripted model server."""

from __future__ import annotations

import os
import stat
import textwrap

import pexpect

from hermes_agent.config.loader import read_yaml_file
from hermes_agent.config.migrate import CURRENT_VERSION
from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config, run_hermes, write_config

COMMENTED = """\
# my settings
model:
  provider: custom
  default: scripted-model   # keep this comment
  base_url: {url}

# terminal section
terminal:
  backend: local
"""


def _spawn(home, *args: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), TERM="dumb", COLUMNS="120")
    return pexpect.spawn(HERMES, list(args), env=env, encoding="utf-8", timeout=20)


def test_config_set_get_unset_keep_comments(hermes_home):
    path = write_config(hermes_home, COMMENTED.format(url="http://127.0.0.1:9/v1"))
    out = run_hermes("config", "set", "terminal.timeout", "45", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert "terminal.timeout = 45" in out.stdout
    text = path.read_text()
    assert "# my settings" in text and "# keep this comment" in text and "# terminal section" in text
    assert read_yaml_file(path)["terminal"]["timeout"] == 45
    assert run_hermes("config", "get", "terminal.timeout", home=hermes_home).stdout == "45\n"
    assert run_hermes("config", "unset", "terminal.timeout", home=hermes_home).returncode == 0
    assert run_hermes("config", "get", "terminal.timeout", home=hermes_home).stdout == "180\n"  # the default
    bad = run_hermes("config", "get", "termnal.timeout", home=hermes_home)
    assert bad.returncode == 1 and "did you mean 'terminal.timeout'" in bad.stderr


def test_config_set_refuses_a_value_that_breaks_the_config(hermes_home):
    path = write_config(hermes_home, COMMENTED.format(url="http://127.0.0.1:9/v1"))
    before = path.read_text()
    out = run_hermes("config", "set", "model.context_length", "lots", home=hermes_home)
    assert out.returncode == 2 and "context_length must be a positive integer" in out.stderr
    assert path.read_text() == before


def test_config_set_env_key_goes_to_dotenv_0600_and_show_masks_it(hermes_home):
    write_config(hermes_home, COMMENTED.format(url="http://127.0.0.1:9/v1"))
    out = run_hermes("config", "set", "OPENAI_API_KEY", "sk-secret-value-123456", home=hermes_home)
    assert out.returncode == 0, out.stderr
    env = hermes_home / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert "OPENAI_API_KEY=sk-secret-value-123456" in env.read_text()
    assert "sk-secret" not in (hermes_home / "config.yaml").read_text()
    show = run_hermes("config", "show", home=hermes_home)
    assert show.returncode == 0
    assert "sk-secret-value-123456" not in show.stdout and "OPENAI_API_KEY=sk-s…3456" in show.stdout
    assert "default: scripted-model" in show.stdout
    paths = [run_hermes("config", a, home=hermes_home).stdout.strip() for a in ("path", "env-path")]
    assert paths == [str(hermes_home / "config.yaml"), str(env)]


def test_config_check_then_migrate(hermes_home):
    path = write_config(hermes_home, "# mine\nmodle: x\nterminal:\n  bakend: docker  # oops\n")
    check = run_hermes("config", "check", home=hermes_home)
    assert check.returncode == 1
    assert "modle  (did you mean 'model'?)" in check.stdout
    assert "terminal.bakend  (did you mean 'terminal.backend'?)" in check.stdout
    assert "  terminal.timeout = 180" in check.stdout and "agent.max_turns" not in check.stdout and f"config version: 0 (current {CURRENT_VERSION})" in check.stdout
    mig = run_hermes("config", "migrate", home=hermes_home)
    assert mig.returncode == 0, mig.stderr
    assert "config version 0 -> 0" in mig.stdout  # a file without a version gets none (Hermes stamps its own)
    assert "# mine" in path.read_text() and "bakend: docker  # oops" in path.read_text()
    assert "_config_version" not in read_yaml_file(path)
    again = run_hermes("config", "check", home=hermes_home)
    assert "missing options: none" in again.stdout and "modle" in again.stdout  # typos are the user's to fix


def _answer_wizard(child: pexpect.spawn, url: str) -> None:
    child.expect("Which provider serves your model")
    child.expect(r"Choose a number or name.*: ")
    child.sendline("custom")
    child.expect(r"Base URL of the endpoint.*: ")
    child.sendline(url)
    child.expect(r"API key \(OPENAI_API_KEY, optional\): ")
    child.sendline("sk-wizard-key-0123456789")
    child.expect("Models offered by")
    child.expect(r"2\. scripted-model")
    child.expect(r"Choose a number or name \[alpha-model\]: ")
    child.sendline("2")
    child.expect("Where should the agent run terminal commands")
    child.expect(r"Choose a number or name \[local\]: ")
    child.sendline("")


def test_setup_wizard_in_a_terminal_leaves_a_working_config(hermes_home):
    with ScriptedServer(models=("alpha-model", "scripted-model"), default={"content": "hello from setup"}) as srv:
        child = _spawn(hermes_home, "setup")
        _answer_wizard(child, srv.url)
        child.expect("Ready. Try:")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        cfg = read_yaml_file(hermes_home / "config.yaml")
        assert cfg["model"] == {"provider": "custom", "default": "scripted-model", "base_url": srv.url}
        assert cfg["terminal"]["backend"] == "local"
        assert cfg["_config_version"] == 50  # what today's Hermes stamps on a config it creates (not ours, 1)
        env = hermes_home / ".env"
        assert env.read_text() == "OPENAI_API_KEY=sk-wizard-key-0123456789\n"
        assert stat.S_IMODE(env.stat().st_mode) == 0o600
        assert "sk-wizard" not in (hermes_home / "config.yaml").read_text()
        out = run_hermes("chat", "-q", "hi", "-Q", home=hermes_home)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "hello from setup\n"
        assert srv.requests[-1]["body"]["model"] == "scripted-model"


def test_setup_rerun_keeps_values_on_enter(hermes_home, scripted):
    model_config(hermes_home, scripted.url)
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-old-key-0123456789\n")
    child = _spawn(hermes_home, "setup")
    child.expect(r"Choose a number or name \[custom\]: ")
    child.sendline("")
    child.expect(rf"Base URL of the endpoint .*\[{scripted.url}\]: ")
    child.sendline("")
    child.expect(r"\[keep sk-o…6789\]: ")
    child.sendline("")
    child.expect(r"Choose a number or name \[scripted-model\]: ")
    child.sendline("")
    child.expect(r"Choose a number or name \[local\]: ")
    child.sendline("docker")
    child.expect(r"Docker image \[nikolaik/python-nodejs:python3.11-nodejs20\]: ")
    child.sendline("python:3.12-slim")
    child.expect(r"predates this version of Hermes. Add the new options now\? \[Y/n\]: ")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    cfg = read_yaml_file(hermes_home / "config.yaml")
    assert cfg["model"]["default"] == "scripted-model" and cfg["model"]["base_url"] == scripted.url
    assert cfg["terminal"] == {"backend": "docker", "docker_image": "python:3.12-slim"}
    assert (hermes_home / ".env").read_text() == "OPENAI_API_KEY=sk-old-key-0123456789\n"


def test_setup_non_interactive_flags(hermes_home, scripted):
    out = run_hermes("setup", "--non-interactive", "--provider", "custom", "--base-url", scripted.url + "/",
                     "--model", "scripted-model", "--api-key", "sk-flag-key", "--backend", "local", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert read_yaml_file(hermes_home / "config.yaml")["model"]["base_url"] == scripted.url
    assert stat.S_IMODE((hermes_home / ".env").stat().st_mode) == 0o600
    assert run_hermes("chat", "-q", "hi", "-Q", home=hermes_home).stdout == "ok\n"
    bad = run_hermes("setup", "--non-interactive", "--provider", "nosuch", home=hermes_home)
    assert bad.returncode == 1 and "unknown provider 'nosuch'" in bad.stderr
    nothing = run_hermes("setup", home=hermes_home)
    assert nothing.returncode == 2 and "not a terminal" in nothing.stderr


_ACME_PLUGIN = '''
def _acme_binary():
    """the acme binary is on PATH"""
    return False


def _handler(args, **kw):
    return "{}"


SCHEMA = {"description": "demo", "parameters": {"type": "object", "properties": {}}}


def register(ctx):
    ctx.register_tool("acme_lookup", toolset="acme", schema=dict(SCHEMA, name="acme_lookup"), handler=_handler,
                      requires_env=["ACME_API_KEY"])
    ctx.register_tool("acme_run", toolset="acme", schema=dict(SCHEMA, name="acme_run"), handler=_handler,
                      check_fn=_acme_binary)
'''


def _install_plugins(home) -> None:
    good = home / "plugins" / "acme"
    good.mkdir(parents=True)
    (good / "__init__.py").write_text(textwrap.dedent(_ACME_PLUGIN))
    broken = home / "plugins" / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('boom at import')\n")


def test_doctor_healthy_setup_passes_and_warns_about_env_mode(hermes_home, scripted):
    model_config(hermes_home, scripted.url, extra=f"_config_version: {CURRENT_VERSION}\n")
    env = hermes_home / ".env"
    env.write_text("X=1\n")
    os.chmod(env, 0o644)
    out = run_hermes("doctor", home=hermes_home)
    assert out.returncode == 0, out.stdout
    assert "✓ python 3." in out.stdout and "✓ rich " in out.stdout
    assert f"✓ model scripted-model via custom at {scripted.url}: answered in" in out.stdout
    assert f"! {env} is readable by group/others (mode 0644): run chmod 600 {env}" in out.stdout


def test_doctor_reports_unavailable_tools_with_reasons_and_broken_plugins(hermes_home, scripted):
    model_config(hermes_home, scripted.url, extra="plugins:\n  enabled: [acme, broken]\n")
    _install_plugins(hermes_home)
    out = run_hermes("doctor", home=hermes_home)
    assert out.returncode == 1
    assert "tool acme_lookup unavailable: needs ACME_API_KEY" in out.stdout
    assert "tool acme_run unavailable: requirement not met: the acme binary is on PATH" in out.stdout
    assert "✗ plugin broken failed to load: RuntimeError: boom at import" in out.stdout
    fixed = run_hermes("doctor", home=hermes_home, env={"ACME_API_KEY": "k"})
    assert "acme_lookup unavailable" not in fixed.stdout


def test_doctor_unreachable_endpoint_fails(hermes_home):
    model_config(hermes_home, "http://127.0.0.1:9/v1")
    out = run_hermes("doctor", "--timeout", "2", home=hermes_home)
    assert out.returncode == 1
    assert "✗ model scripted-model via custom at http://127.0.0.1:9/v1: cannot reach" in out.stdout


def test_doctor_on_a_broken_config_names_file_and_problem(hermes_home):
    path = write_config(hermes_home, "model:\n  default: x\n   base_url: [oops\n")
    out = run_hermes("doctor", "--offline", home=hermes_home)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"✗ config: {path}: invalid YAML (line 3" in out.stdout
    assert "✓ python 3." in out.stdout  # the other checks still ran


def test_tools_disable_enable_round_trip_changes_what_the_model_sees(hermes_home, scripted):
    path = model_config(hermes_home, scripted.url, extra="# tools below\n")
    out = run_hermes("tools", "disable", "file", home=hermes_home)
    assert out.returncode == 0, out.stderr
    per = read_yaml_file(path)["platform_toolsets"]["cli"]
    assert "file" not in per and "terminal" in per and "hermes-cli" not in per
    assert "# tools below" in path.read_text()
    assert run_hermes("chat", "-q", "hi", "-Q", home=hermes_home).returncode == 0
    sent = {t["function"]["name"] for t in scripted.requests[-1]["body"]["tools"]}
    assert "read_file" not in sent and "terminal" in sent
    listing = run_hermes("tools", "list", home=hermes_home).stdout
    assert "[ ] file" in listing and "[x] terminal" in listing
    assert run_hermes("tools", "enable", "file", home=hermes_home).returncode == 0
    assert "file" in read_yaml_file(path)["platform_toolsets"]["cli"]
    run_hermes("chat", "-q", "hi", "-Q", home=hermes_home)
    assert "read_file" in {t["function"]["name"] for t in scripted.requests[-1]["body"]["tools"]}
    typo = run_hermes("tools", "enable", "fiel", home=hermes_home)
    assert typo.returncode == 1 and "did you mean 'file'" in typo.stderr


def test_model_lists_sets_and_picks(hermes_home):
    with ScriptedServer(models=("alpha-model", "scripted-model")) as srv:
        path = model_config(hermes_home, srv.url)
        listed = run_hermes("model", home=hermes_home)
        assert listed.returncode == 0 and listed.stdout == "  alpha-model\n* scripted-model\n"
        assert run_hermes("model", "alpha-model", home=hermes_home).returncode == 0
        assert read_yaml_file(path)["model"]["default"] == "alpha-model"
        child = _spawn(hermes_home, "model")
        child.expect(r"Choose a number or name \[alpha-model\]: ")
        child.sendline("2")
        child.expect("default model is now scripted-model")
        child.expect(pexpect.EOF)
        assert read_yaml_file(path)["model"]["default"] == "scripted-model"


def test_status_shows_model_paths_and_stores(hermes_home, scripted):
    model_config(hermes_home, scripted.url)
    (hermes_home / "memories").mkdir()
    (hermes_home / "memories" / "MEMORY.md").write_text("likes tea\n§\nuses vim\n")
    out = run_hermes("status", home=hermes_home)
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines()}
    assert lines["model"].endswith("scripted-model") and scripted.url in lines["endpoint"]
    assert str(hermes_home / "config.yaml") in lines["config"]
    assert "hermes-cli" in lines["toolsets"] and "none yet" in lines["sessions"]
    assert "memory: 2 entries" in lines["memory"]


def test_update_and_uninstall_plans(hermes_home):
    upd = run_hermes("update", "--dry-run", home=hermes_home)
    assert upd.returncode == 0
    assert "config migrate" in upd.stdout
    assert "pip install --upgrade hermes-agent" in upd.stdout or "source checkout" in upd.stdout
    (hermes_home / "config.yaml").write_text("model: x\n")
    refuse = run_hermes("uninstall", home=hermes_home)
    assert refuse.returncode == 2 and "pass --yes" in refuse.stderr
    child = _spawn(hermes_home, "uninstall")
    child.expect(rf"delete {hermes_home}")
    child.expect(r"Continue\? \[y/N\]: ")
    child.sendline("n")
    child.expect("nothing was changed")
    child.expect(pexpect.EOF)
    assert (hermes_home / "config.yaml").exists()


def test_completion_bash_mentions_subcommands(hermes_home):
    out = run_hermes("completion", "bash", home=hermes_home)
    assert out.returncode == 0
    assert "sessions" in out.stdout and "chat" in out.stdout and "complete -o default -F _hermes_complete hermes" \
        in out.stdout


def test_config_migrate_in_a_terminal_asks_for_new_optional_keys(hermes_home):
    from hermes_agent.config.migrate import env_vars_to_ask

    write_config(hermes_home, "model:\n  default: x\n")
    child = _spawn(hermes_home, "config", "migrate")
    for name, meta in env_vars_to_ask(0, {}):
        child.expect_exact(f"{meta.get('prompt') or name}: ")
        child.sendline("or-key-from-migrate" if name == "OPENROUTER_API_KEY" else "")
    child.expect_exact("config version 0 -> 0")
    child.expect(pexpect.EOF)
    env = hermes_home / ".env"
    assert env.read_text() == "OPENROUTER_API_KEY=or-key-from-migrate\n"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert "_config_version" not in read_yaml_file(hermes_home / "config.yaml")


def test_config_show_and_get_refuse_a_broken_file(hermes_home):
    write_config(hermes_home, "model:\n  default: [x\n")
    for args in (("config", "show"), ("config", "get", "model.default")):
        out = run_hermes(*args, home=hermes_home)
        assert out.returncode == 2 and "invalid YAML (line 3" in out.stderr and out.stdout == ""
    assert run_hermes("config", "path", home=hermes_home).returncode == 0
