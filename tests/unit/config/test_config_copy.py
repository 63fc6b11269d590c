"""config.yaml's parsed JSON copy (issue 24: no YAML parser on a run): used only while the file is unchanged,
private (0600) and a secret to the path policy like config.yaml itself."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.config.loader import load_settings


def test_copy_follows_the_file_and_stays_secret(hermes_home: Path) -> None:
    cfg = hermes_home / "config.yaml"
    cfg.write_text("model:\n  default: first-model\n  api_key: sk-secret-in-config\n", encoding="utf-8")
    assert load_settings().model.model == "first-model"
    copy = hermes_home / ".parsed-config.json"
    assert copy.is_file() and stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert load_settings().model.model == "first-model"  # from the copy
    cfg.write_text("model:\n  default: second-model\n", encoding="utf-8")
    assert load_settings().model.model == "second-model"  # an edited file is read again
    policy = PathPolicy.build(workspace=[str(hermes_home.parent)], hermes_home=str(hermes_home),
                              config={"readable_paths": [str(hermes_home)]})
    assert policy.check_read(str(copy)).access == "deny"  # even with the whole home made readable
    assert os.access(copy, os.R_OK)
