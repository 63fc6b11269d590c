"""config check/migrate logic: missing options, typos with suggestions, version bump keeping comments."""

from __future__ import annotations

from hermes_agent.cli.config_migrate import check_report, migrate
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.loader import read_yaml_file
from hermes_agent.config.migrate import (
    CURRENT_VERSION,
    env_vars_to_ask,
    missing_options,
    unknown_keys,
)


def test_missing_options_lists_leaves_in_default_order_and_never_secrets():
    user = {"model": {"default": "m", "provider": "custom"}, "terminal": {"backend": "local"}}
    missing = dict(missing_options(user))
    assert "model.default" not in missing and "terminal.backend" not in missing
    assert missing["terminal.timeout"] == DEFAULT_CONFIG["terminal"]["timeout"]
    assert "agent.max_turns" not in missing  # upstream Hermes reads an absent max_turns as None (no limit)
    assert "model.api_key" not in missing  # keys belong in .env
    assert "_config_version" not in missing
    assert list(missing).index("terminal.timeout") < list(missing).index("checkpoints.enabled")
    # options the released Hermes reads with a different assumed value are never written
    assert "model.context_length" not in missing and "approvals.mode" not in missing


def test_migrated_values_are_hermes_defaults_where_hermes_has_the_key():
    missing = dict(missing_options({}))
    # 0.19.0 and upstream disagree on these (90 vs None turns, 50 vs 250 iterations): neither is written,
    # so each Hermes keeps its own default.
    assert "agent.max_turns" not in missing and "delegation.max_iterations" not in missing
    assert missing["checkpoints.enabled"] is False and missing["checkpoints.max_snapshots"] == 20
    assert missing["display.show_reasoning"] is True and "display.streaming" not in missing
    assert missing["terminal.docker_network"] is True and missing["context_file_max_chars"] is None


def test_short_model_form_is_not_reported_missing():
    assert not [k for k, _ in missing_options({"model": "gpt-x"}) if k.startswith("model.")]


def test_unknown_keys_suggest_the_likely_option():
    found = {u.key: u.suggestion for u in unknown_keys({"modle": {}, "terminal": {"bakend": "x", "retry": 1},
                                                        "zzz_custom": 1})}
    assert found["modle"] == "model"
    assert found["terminal.bakend"] == "terminal.backend"
    assert found["zzz_custom"] is None
    assert "terminal.retry" not in found  # sections accept extra keys; only near misses are reported


def test_env_vars_asked_only_when_new_since_the_users_version():
    names = [n for n, _ in env_vars_to_ask(0, {})]
    assert "OPENROUTER_API_KEY" in names
    assert "OPENROUTER_API_KEY" not in [n for n, _ in env_vars_to_ask(0, {"OPENROUTER_API_KEY": "x"})]
    assert env_vars_to_ask(CURRENT_VERSION, {}) == []


def test_check_reports_missing_typos_and_old_version(hermes_home):
    path = hermes_home / "config.yaml"
    path.write_text("modle:\n  default: x\nterminal:\n  bakend: docker\n")
    lines, needs = check_report(path)
    text = "\n".join(lines)
    assert needs is True
    assert f"config version: 0 (current {CURRENT_VERSION})" in text
    assert "modle  (did you mean 'model'?)" in text
    assert "terminal.bakend  (did you mean 'terminal.backend'?)" in text
    assert "  terminal.backend = \"local\"" in text
    assert "hermes config migrate" in text


def test_migrate_fills_defaults_bumps_version_and_keeps_comments(hermes_home):
    path = hermes_home / "config.yaml"
    path.write_text("# mine\nmodel:\n  default: x  # keep\n# end of file\n")
    out = migrate(path, {}, interactive=False)
    assert any("config version 0 -> 0" in line for line in out)  # no version stamped: Hermes stamps its own
    text = path.read_text()
    assert text.startswith("# mine\nmodel:\n  default: x  # keep\n")
    assert "# end of file" in text
    data = read_yaml_file(path)
    assert "_config_version" not in data
    assert data["terminal"]["backend"] == "local" and data["terminal"]["timeout"] == 180
    assert "max_turns" not in data.get("agent", {})
    assert missing_options(data) == []
    assert "api_key" not in data["model"]
    assert migrate(path, {}, interactive=False) == [f"{path} is up to date (config version 0)"]
    _, needs = check_report(path)
    assert needs is False
