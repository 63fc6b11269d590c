"""Round-trip config.yaml edits keep comments, order and indentation; .env edits keep other lines, 0600."""

from __future__ import annotations

import os
import stat

import pytest
from dotenv import dotenv_values

from hermes_agent.config.edit import ConfigDocument, mask_secret, set_env_values
from hermes_agent.config.loader import read_yaml_file
from hermes_agent.errors import ConfigError

USER_FILE = """\
# My Hermes settings
model:
  default: my-model   # the one I like
  provider: custom

# Terminal: keep it local
terminal:
  backend: local
toolsets:
  - hermes-cli   # everything

# Compression tuned by hand
compression:
  threshold: 0.7
"""


def test_set_keeps_comments_order_and_indentation(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(USER_FILE)
    doc = ConfigDocument.load(path)
    doc.set("model.base_url", "http://127.0.0.1:8000/v1")
    doc.set("terminal.timeout", 30)
    doc.set("agent.max_turns", 12)
    doc.save()
    text = path.read_text()
    for line in ("# My Hermes settings", "  default: my-model   # the one I like", "# Terminal: keep it local",
                 "  - hermes-cli   # everything", "# Compression tuned by hand"):
        assert line in text
    # the new key lands inside its section, above the comment that introduces the next section
    assert text.index("base_url: http://127.0.0.1:8000/v1") < text.index("# Terminal: keep it local")
    assert text.index("timeout: 30") < text.index("toolsets:")
    assert text.endswith("agent:\n  max_turns: 12\n")
    data = read_yaml_file(path)
    assert data["model"] == {"default": "my-model", "provider": "custom", "base_url": "http://127.0.0.1:8000/v1"}
    assert data["terminal"] == {"backend": "local", "timeout": 30}


def test_replacing_a_list_keeps_the_next_sections_comment(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(USER_FILE)
    doc = ConfigDocument.load(path)
    doc.set("toolsets", ["web", "file"])
    doc.save()
    text = path.read_text()
    assert "  - web\n  - file\n\n# Compression tuned by hand\ncompression:" in text
    assert "# everything" not in text  # that comment described the replaced item


def test_unset_removes_emptied_sections_and_keeps_following_comments(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(USER_FILE)
    doc = ConfigDocument.load(path)
    assert doc.unset("terminal.backend") is True
    assert doc.unset("terminal.backend") is False
    doc.save()
    text = path.read_text()
    assert "terminal:" not in text and "backend" not in text
    assert "# Terminal: keep it local" in text and "toolsets:" in text
    assert read_yaml_file(path)["compression"] == {"threshold": 0.7}


def test_short_model_form_becomes_a_section(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model: gpt-x  # short form\n")
    doc = ConfigDocument.load(path)
    doc.set("model.base_url", "http://h/v1")
    doc.save()
    assert read_yaml_file(path)["model"] == {"default": "gpt-x", "base_url": "http://h/v1"}


def test_broken_yaml_is_a_config_error_naming_file_and_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model:\n  default: x\n   base_url: [oops\n")
    with pytest.raises(ConfigError) as err:
        ConfigDocument.load(path)
    assert str(path) in str(err.value) and "line 3" in str(err.value)


def test_save_keeps_the_file_mode(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n")
    os.chmod(path, 0o640)
    doc = ConfigDocument.load(path)
    doc.set("b", 2)
    doc.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not list(tmp_path.glob(".config.yaml.*"))  # no temp file left behind


def test_env_file_set_keeps_other_lines_and_is_0600(tmp_path):
    path = tmp_path / ".env"
    path.write_text("# my keys\nOPENROUTER_API_KEY=or-1\nexport OTHER=keep me\nOPENROUTER_API_KEY=dup\n")
    os.chmod(path, 0o644)
    tricky = 'p@ss "quoted" # not a comment\\ end'
    set_env_values(path, {"OPENROUTER_API_KEY": "or-2", "NEW_KEY": tricky})
    lines = path.read_text().splitlines()
    assert lines[0] == "# my keys" and lines[1] == "OPENROUTER_API_KEY=or-2" and lines[2] == "export OTHER=keep me"
    assert sum(line.startswith("OPENROUTER_API_KEY") for line in lines) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    values = dotenv_values(path)
    assert values["NEW_KEY"] == tricky and values["OTHER"] == "keep me"
    set_env_values(path, {"NEW_KEY": None})
    assert "NEW_KEY" not in dotenv_values(path)


def test_new_env_file_is_created_0600(tmp_path):
    path = tmp_path / "home" / ".env"
    set_env_values(path, {"OPENAI_API_KEY": "sk-1"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "OPENAI_API_KEY=sk-1\n"
    with pytest.raises(ConfigError):
        set_env_values(path, {"BAD NAME": "x"})


def test_mask_secret():
    assert mask_secret("sk-abcdefghijklmnop") == "sk-a…mnop"
    assert mask_secret("short") == "****"
    assert mask_secret("") == ""
