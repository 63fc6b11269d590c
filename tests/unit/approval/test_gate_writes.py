"""ApprovalGate.check_write decides from the path policy: a temp home with ~/.ssh, ~/.bashrc and a
Hermes home, a workspace holding a symlink to ~/.ssh, real approvers (scripted answers or none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent.approval.gate import ApprovalGate, AutoDenyApprover, ScriptedApprover
from hermes_agent.approval.policy import PathPolicy
from hermes_agent.config.loader import load_settings, read_yaml_file
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import Block, HookBus


@pytest.fixture()
def home(tmp_path: Path, hermes_home: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh/authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    (h / ".bashrc").write_text("# rc\n")
    (h / "ws").mkdir()
    (h / "ws/sshlink").symlink_to(h / ".ssh")
    (h / "elsewhere").mkdir()
    return h


def make_gate(home: Path, hermes_home: Path, answers=(), *, interactive=True, config: str = "", yolo=False):
    (hermes_home / "config.yaml").write_text(config, encoding="utf-8")
    settings = load_settings(yolo=yolo)
    policy = PathPolicy.build(workspace=[str(home / "ws")], hermes_home=str(hermes_home), home=str(home),
                              config={"shared_tmp": False})
    approver = ScriptedApprover(answers) if interactive else AutoDenyApprover()
    return ApprovalGate(settings, approver, is_interactive=interactive, path_policy=policy), approver


def test_workspace_writes_pass_without_asking(home, hermes_home):
    gate, approver = make_gate(home, hermes_home)
    decision = gate.check_write([str(home / "ws/src/app.py"), "notes.txt"])
    assert decision.allowed and decision.via == "clean"
    assert approver.requests == []


def test_without_a_terminal_an_ask_is_denied_at_once_with_the_reason(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, interactive=False)
    decision = gate.check_write([str(home / "elsewhere/out.txt")])
    assert not decision.allowed and decision.via == "no_approver"
    assert str(home / "elsewhere/out.txt") in decision.reason and "outside the workspace" in decision.reason
    assert "sandbox.writable_paths" in decision.reason


def test_symlinked_directory_is_judged_where_it_leads(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, ["deny"])
    decision = gate.check_write(["sshlink/authorized_keys"], tool="write_file")
    assert not decision.allowed and decision.via == "user"
    request = approver.requests[0]
    assert request.kind == "write" and str(home / ".ssh/authorized_keys") in request.command
    assert request.pattern_key == f"secret_write:{home}/.ssh/authorized_keys"
    assert "credentials or secrets" in request.description


def test_a_write_outside_the_sandbox_is_approved_one_call_at_a_time(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, ["once", "session", "always", "deny"])
    out = str(home / "elsewhere/a.txt")
    assert gate.check_write([out], session_id="s").via == "user"
    assert gate.check_write([out], session_id="s").via == "user"  # "session" is only this call
    assert gate.check_write([str(home / "elsewhere/b.txt")], session_id="s").via == "user"  # so is "always"
    assert not gate.check_write([str(home / ".bashrc")], session_id="s").allowed
    assert len(approver.requests) == 4 and all(r.once_only for r in approver.requests)
    assert approver.requests[-1].pattern_key == f"protected_write:{home}/.bashrc"
    assert "command_allowlist" not in read_yaml_file(hermes_home / "config.yaml")  # nothing saved


def test_the_allowlist_does_not_cover_a_write_outside_the_sandbox(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, interactive=False,
                               config=f"command_allowlist: ['protected_write:{home}/.bashrc']\n"
                                      "approvals:\n  mode: 'off'\n")
    decision = gate.check_write([str(home / ".bashrc")])
    assert not decision.allowed and "--yolo, approvals.mode: off, command_allowlist" in decision.reason


def test_hermes_home_is_protected_and_its_env_is_secret(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, interactive=False)
    config = gate.check_write([str(hermes_home / "config.yaml")])  # a secret too: it may hold model.api_key
    assert not config.allowed and config.pattern_key.startswith("secret_write:")
    skills = gate.check_write([str(hermes_home / "skills/x/scripts/run.sh")])
    assert not skills.allowed and skills.pattern_key.startswith("protected_write:")
    env = gate.check_write([str(hermes_home / ".env")])
    assert not env.allowed and env.pattern_key.startswith("secret_write:")


def test_raw_disks_are_refused_even_with_yolo(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, ["once"], yolo=True)
    decision = gate.check_write(["/dev/sda"])
    assert not decision.allowed and decision.via == "hardline" and approver.requests == []
    assert gate.check_write([str(home / ".bashrc")]).via == "user"  # yolo: a person still says yes, once
    assert len(approver.requests) == 1 and approver.requests[0].once_only


def test_deny_rules_name_policy_keys(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, ["once"], config="approvals:\n  deny: [outside_workspace]\n")
    decision = gate.check_write([str(home / "elsewhere/x")])
    assert not decision.allowed and decision.via == "deny_rule" and approver.requests == []


def test_the_hooks_once_is_granted_to_the_tools_own_check_only_once(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, ["once", "deny"])
    policy = gate.path_policy
    target = str(home / "elsewhere/x.txt")
    bus = HookBus()
    bus.register("pre_tool_call", gate.as_hook(Block))
    ctx = ToolContext(settings=gate.settings, session_id="s")
    assert bus.pre_tool_call("write_file", {"path": target, "content": "x"}, ctx) is None
    verdicts = [policy.check_write(target)]
    assert gate.check_write([target], session_id="s", verdicts=verdicts).via == "granted"
    assert len(approver.requests) == 1
    again = gate.check_write([target], session_id="s", verdicts=verdicts)  # the grant was used up
    assert not again.allowed and len(approver.requests) == 2


def test_hook_judges_relative_paths_against_the_workspace(home, hermes_home):
    gate, approver = make_gate(home, hermes_home, interactive=False)
    bus = HookBus()
    bus.register("pre_tool_call", gate.as_hook(Block))
    ctx = ToolContext(settings=gate.settings, session_id="s")
    assert bus.pre_tool_call("write_file", {"path": "src/app.py", "content": ""}, ctx) is None
    diff = "--- a/app.py\n+++ b/app.py\n@@\n-x\n+y\n--- a/../.bashrc\n+++ b/../.bashrc\n@@\n-A\n+B\n"
    blocked = bus.pre_tool_call("patch", {"mode": "patch", "patch": diff}, ctx)
    assert isinstance(blocked, Block) and f"{home}/.bashrc" in blocked.reason


def test_remote_backends_keep_the_sensitive_path_classes(home, hermes_home, monkeypatch):
    monkeypatch.setenv("TERMINAL_ENV", "ssh")
    gate, approver = make_gate(home, hermes_home, interactive=False)
    assert gate.check_write(["/srv/app/main.py"]).allowed  # a path on the remote host, not ours
    decision = gate.check_write(["~/.bashrc"])
    assert not decision.allowed and decision.pattern_key == "shell_rc_write:~/.bashrc"


def test_a_boundary_request_offers_only_once_or_deny_and_no_auto_approver_answers_it(home, hermes_home):
    from hermes_agent.approval.approvers import ApprovalRequest, AutoApprover, render_prompt

    text = render_prompt(ApprovalRequest("write_file ~/.bashrc", "k", "protected", once_only=True))
    assert "[o]nce  |  [d]eny" in text and "[s]ession" not in text and "Choice [o/D]" in text
    (hermes_home / "config.yaml").write_text("", encoding="utf-8")
    policy = PathPolicy.build(workspace=[str(home / "ws")], hermes_home=str(hermes_home), home=str(home),
                              config={"shared_tmp": False})
    gate = ApprovalGate(load_settings(), AutoApprover(), is_interactive=True, path_policy=policy)  # cron's approve
    decision = gate.check_write([str(home / ".bashrc")])
    assert not decision.allowed and "cannot ask" in decision.reason
