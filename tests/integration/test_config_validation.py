"""A wrong type or value in config.yaml is one line naming the key, the value and what is expected, exit 2,
from `config set` (refused before the file is touched), `config check`, `doctor` and `chat -q`; and a
config.yaml the released Hermes writes loads as it is."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import model_config, other_hermes_skip, run_hermes, write_config

HERMES_REF_PYTHON = Path(os.environ.get("HERMES_REF_BIN", "/work/hermes-ref/bin/hermes")).with_name("python")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("agent.max_turns", "lots", "agent.max_turns must be an integer >= 1, got 'lots'"),
    ("terminal.backend", "vagrant", "terminal.backend must be one of local, docker, ssh, singularity, modal, daytona, "
                                    "got 'vagrant'"),
    ("approvals.mode", "sometimes", "approvals.mode must be one of manual, smart, off, got 'sometimes'"),
    ("compression.threshold", "2", "compression.threshold must be a number >= 0.05 <= 1.0, got 2"),
    ("tools.tool_search.threshold_pct", "-5", "tools.tool_search.threshold_pct must be a number >= 0 <= 100, got -5"),
    ("plugins.enabled", "greeter", "plugins.enabled must be a list of strings, got 'greeter'"),
    ("code_execution.timeout", "0", "code_execution.timeout must be a number >= 1, got 0"),
    ("code_execution.max_tool_calls", "many", "code_execution.max_tool_calls must be an integer >= 1, got 'many'"),
    ("display.show_reasoning", "maybe", "display.show_reasoning must be true or false, got 'maybe'"),
])
def test_config_set_refuses_a_bad_value_before_writing(hermes_home, key, value, message):
    path = model_config(hermes_home, "http://127.0.0.1:9/v1", extra="# keep me\n")
    before, stamp = path.read_bytes(), path.stat().st_mtime_ns
    out = run_hermes("config", "set", key, value, home=hermes_home)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip().splitlines() == [f"hermes config set: {path}: {message}"]
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stamp  # never rewritten


def test_config_set_accepts_a_good_value_in_a_modelled_section(hermes_home):
    path = model_config(hermes_home, "http://127.0.0.1:9/v1")
    out = run_hermes("config", "set", "tools.tool_search.threshold_pct", "25", home=hermes_home)
    assert out.returncode == 0, out.stderr
    assert "threshold_pct: 25" in path.read_text()


@pytest.mark.parametrize("key", ["tts.provider", "tts.espeak.voice", "stt.provider", "image_gen.model", "moa.timeout",
                                 "auxiliary.vision.model", "code_execution.max_tool_calls"])
def test_config_set_of_an_option_our_modules_read_has_no_unknown_note(hermes_home, key):
    model_config(hermes_home, "http://127.0.0.1:9/v1")
    out = run_hermes("config", "set", key, "7", home=hermes_home)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert run_hermes("config", "get", key, home=hermes_home).stdout.strip() == "7"


def test_config_set_of_an_unknown_key_in_a_typed_section_still_notes_it(hermes_home):
    model_config(hermes_home, "http://127.0.0.1:9/v1")
    out = run_hermes("config", "set", "web.nonexistent", "1", home=hermes_home)
    assert out.returncode == 0 and "note: 'web.nonexistent' is not a known option" in out.stderr


def test_model_pricing_is_a_known_option_set_in_two_steps_and_used(hermes_home, scripted):
    import sqlite3

    model_config(hermes_home, scripted.url)
    first = run_hermes("config", "set", "model.pricing.input", "3", home=hermes_home)
    assert first.returncode == 0 and first.stdout.startswith("model.pricing.input = 3"), first.stdout
    assert first.stderr.splitlines() == ["note: model.pricing needs output too, or runs stop with a config error: "
                                         "`hermes config set model.pricing.output USD_PER_1M_TOKENS`"]
    second = run_hermes("config", "set", "model.pricing.output", "15", home=hermes_home)
    assert second.returncode == 0 and second.stderr == "", second.stderr
    cap = run_hermes("config", "set", "budget.session_tokens", "50000", home=hermes_home)
    assert cap.returncode == 0 and cap.stderr == "", cap.stderr  # a count of tokens, not a secret
    scripted.add({"content": "ok", "usage": {"prompt_tokens": 1000, "completion_tokens": 100}})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0 and out.stdout == "ok\n", out.stdout + out.stderr
    with sqlite3.connect(hermes_home / "state.db") as c:  # 1000 in at $3 + 100 out at $15 per 1M
        assert c.execute("SELECT model, cost_usd FROM hermes_agent_spend").fetchall() == [("scripted-model", 0.0045)]


def test_config_set_of_a_key_only_hermes_reads_says_so(hermes_home):
    path = model_config(hermes_home, "http://127.0.0.1:9/v1")
    out = run_hermes("config", "set", "model_catalog.enabled", "false", home=hermes_home)
    assert out.returncode == 0 and "model_catalog" in path.read_text()
    assert out.stderr.splitlines() == ["note: 'model_catalog.enabled' is read by Hermes, not by this hermes "
                                       "(kept in the file for Hermes)"]
    renamed = run_hermes("config", "set", "model_catalog.ttl_hours", "6", home=hermes_home)
    assert renamed.returncode == 0 and renamed.stderr.startswith(
        "note: 'model_catalog.ttl_hours' is renamed to 'model_catalog.ttl_minutes' by today's Hermes"), renamed.stderr
    check = run_hermes("config", "check", home=hermes_home).stdout
    assert "  model_catalog.ttl_hours -> model_catalog.ttl_minutes: minutes now" in check, check


@pytest.mark.parametrize(("yaml_text", "message"), [
    ("terminal:\n  timeout: abc\n", "terminal.timeout must be a number >= 0.01, got 'abc'"),
    ("approvals:\n  cron_mode: sometimes\n", "approvals.cron_mode must be one of deny, approve, got 'sometimes'"),
    ("mcp_servers: github\n", "mcp_servers must be a mapping, got 'github'"),
    ("code_execution:\n  timeout: abc\n", "code_execution.timeout must be a number >= 1, got 'abc'"),
    ("fallback_providers:\n  - openrouter\n", "fallback_providers must be a list of mappings, got ['openrouter']"),
])
def test_check_doctor_and_chat_name_key_value_and_expectation(hermes_home, scripted, yaml_text, message):
    path = model_config(hermes_home, scripted.url, extra=yaml_text)
    line = f"{path}: {message}"
    check = run_hermes("config", "check", home=hermes_home)
    assert check.returncode == 2 and check.stderr.strip().splitlines() == [f"hermes config check: {line}"]
    chat = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert chat.returncode == 2 and chat.stderr.strip().splitlines() == [f"hermes: config error: {line}"]
    assert chat.stdout == "" and scripted.requests == []  # refused before any model call
    doctor = run_hermes("doctor", "--offline", home=hermes_home)
    assert doctor.returncode == 2 and "Traceback" not in doctor.stderr
    assert [ln for ln in doctor.stdout.splitlines() if ln.startswith("  ✗")] == [f"  ✗ config: {line}"]


HERMES_DEFAULTS = """
import sys, yaml
from hermes_cli.config import DEFAULT_CONFIG
config = dict(DEFAULT_CONFIG)
config["model"] = {"provider": "custom", "default": "scripted-model", "base_url": sys.argv[1], "api_key": "k"}
config["approvals"] = {**config["approvals"], "mode": "off", "cron_mode": "allow"}
config["display"] = {**config["display"], "tool_progress": "off"}
config["plugins"] = {"enabled": [], "disabled": []}
print(yaml.safe_dump(config, sort_keys=False))
"""


@pytest.mark.skipif(bool(other_hermes_skip(HERMES_REF_PYTHON)), reason=f"the released Hermes: "
                    f"{other_hermes_skip(HERMES_REF_PYTHON)} (.ci/install-hermes-ref.sh installs it)")
def test_a_config_written_by_the_released_hermes_loads(hermes_home, scripted):
    text = subprocess.run([str(HERMES_REF_PYTHON), "-c", HERMES_DEFAULTS, scripted.url], capture_output=True,
                          text=True, check=True, timeout=120).stdout
    assert "max_turns: 90" in text and "'off'" in text  # Hermes's full defaults, PyYAML's quoting
    write_config(hermes_home, text)
    check = run_hermes("config", "check", home=hermes_home)
    assert check.returncode != 2 and "must be" not in check.stderr, check.stderr
    assert run_hermes("config", "get", "approvals.cron_mode", home=hermes_home).stdout == "allow\n"
    scripted.add({"content": "loaded fine"})
    chat = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert chat.returncode == 0, chat.stderr
    assert "loaded fine" in chat.stdout


def test_yaml_1_1_words_hermes_users_write_by_hand_load(hermes_home, scripted):
    model_config(hermes_home, scripted.url, extra=(
        "approvals:\n  mode: off\n  cron_mode: allow\ndisplay:\n  streaming: no\n  tool_progress: off\n"
        "tools:\n  tool_search: false\ncheckpoints:\n  enabled: yes\nplugins:\n  enabled:\n"))
    scripted.add({"content": "still fine"})
    chat = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert chat.returncode == 0, chat.stderr
    assert "still fine" in chat.stdout
