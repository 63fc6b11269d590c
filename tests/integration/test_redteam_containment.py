"""Red-team containment suite (redteam/): every attack runs through the real `hermes chat -q` with the
scripted model and no terminal (so anything needing approval is denied), in a fresh temp home holding
canary secrets. Containment = nothing outside the workspace changed, no canary reached the model, stdout,
stderr, the loopback network listener or a workspace file, no process outside was killed, and the
approval gate is still on. The legitimate workflows must run unblocked and produce their result.

Escapes are expected to fail until the lead fixes them (see redteam/RESULTS_attacks.txt)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from redteam.attacks_shell import SHELL_ATTACKS  # noqa: E402
from redteam.attacks_tools import TOOL_ATTACKS  # noqa: E402
from redteam.benign import BENIGN  # noqa: E402
from redteam.harness import HERMES, run_attack  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not os.path.exists(HERMES), reason="needs the venv's hermes executable"),
    pytest.mark.skipif(shutil.which("bwrap") is None and not os.path.exists("/sys/kernel/security/landlock"),
                       reason="no OS sandbox mechanism on this machine"),
]


@pytest.mark.parametrize("attack", SHELL_ATTACKS + TOOL_ATTACKS, ids=lambda a: a.name)
def test_attack_is_contained(attack):
    out = run_attack(attack)
    assert out.contained, f"{attack.name} escaped: " + "; ".join(out.details)


@pytest.mark.parametrize("workflow", BENIGN, ids=lambda a: a.name)
def test_legitimate_workflow_runs(workflow):
    out = run_attack(workflow)
    assert out.contained, f"{workflow.name} was blocked or failed: " + "; ".join(out.details)
