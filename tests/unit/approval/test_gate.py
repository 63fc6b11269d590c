"""The approval gate: order of checks, allowlist persistence, session approvals, timeouts, the hook."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from hermes_agent.approval.gate import (
    ApprovalGate,
    AutoDenyApprover,
    ScriptedApprover,
    TerminalApprover,
    judge_prompt,
    parse_verdict,
)
from hermes_agent.config.loader import load_settings, read_yaml_file
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import Block, HookBus

CONFIG_WITH_COMMENTS = """\
# My Hermes config -- keep these notes!
model:
  default: test-model   # the model I use
approvals:
  mode: manual
  timeout: 5
# commands I trust
command_allowlist:
  - make clean   # safe
"""


def settings_for(home: Path, text: str = "", **kw: object):
    if text:
        (home / "config.yaml").write_text(text, encoding="utf-8")
    return load_settings(**kw)


def gate_for(home: Path, text: str = "", answers=(), *, interactive: bool = True, yolo: bool = False, **kw):
    approver = kw.pop("approver", None) or ScriptedApprover(answers)
    return ApprovalGate(settings_for(home, text, yolo=yolo), approver, is_interactive=interactive, **kw), approver


def test_benign_commands_pass_without_asking(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home)
    decision = gate.check("ls -la /etc")
    assert decision.allowed and decision.via == "clean"
    assert approver.requests == []


def test_hardline_is_refused_even_with_yolo_allowlist_and_container(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "command_allowlist: [rm_root, recursive_delete, 'rm -rf /']\n",
                              ["once"], yolo=True)
    for kind, isolated in (("local", False), ("docker", True)):
        decision = gate.check("rm -rf /", kind, isolated)
        assert not decision.allowed and decision.via == "hardline"
        assert "never allowed" in decision.reason and "rm -rf /" in decision.reason
    assert approver.requests == []


def test_deny_rules_come_before_yolo(hermes_home: Path) -> None:
    config = "approvals:\n  deny: ['git push*', sudo, git_reset_hard]\n"
    gate, approver = gate_for(hermes_home, config, yolo=True)
    assert gate.check("git push origin main").via == "deny_rule"
    blocked = gate.check("/usr/bin/sudo apt update")
    assert not blocked.allowed and "'sudo'" in blocked.reason
    assert gate.check("env -S 'sudo ls'").via == "deny_rule"
    assert gate.check("git reset --hard").via == "deny_rule"
    assert gate.check("rm -rf data").allowed  # yolo covers everything the deny rules do not name


def test_isolated_backend_skips_prompts(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home)
    decision = gate.check("git push --force", "docker", True)
    assert decision.allowed and decision.via == "isolated"
    assert approver.requests == []


def test_yolo_and_mode_off_allow_flagged_commands(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, yolo=True)
    assert gate.check("git push -f").via == "yolo"
    gate, approver = gate_for(hermes_home, "approvals:\n  mode: 'off'\n")
    assert gate.check("chmod 777 x").via == "yolo"
    assert approver.requests == []


def test_allowlist_pattern_key_covers_only_its_pattern(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "command_allowlist: [recursive_delete]\n", ["deny"])
    assert gate.check("rm -rf data").allowed
    decision = gate.check("rm -rf data && git push -f")
    assert not decision.allowed
    assert approver.requests[0].pattern_keys == ("git_force_push",)


def test_literal_and_glob_allowlist_never_match_compound_commands(hermes_home: Path) -> None:
    config = "command_allowlist: ['rm -rf vendor', 'git push -f *']\n"
    gate, approver = gate_for(hermes_home, config, ["deny", "deny"])
    assert gate.check("rm -rf vendor").via == "allowlist"
    assert gate.check('rm -rf "vendor"').via == "allowlist"
    assert gate.check("git push -f origin main").via == "allowlist"
    assert not gate.check("rm -rf vendor; rm -rf data").allowed
    assert not gate.check("git push -f origin main && echo done").allowed
    assert [r.command for r in approver.requests] == ["rm -rf vendor; rm -rf data",
                                                      "git push -f origin main && echo done"]


def test_session_approval_is_by_pattern_key_and_per_session(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "", ["session", "deny"])
    assert gate.check("rm -rf data", session_id="s1").allowed
    assert gate.check("rm -rf docs", session_id="s1").via == "session"
    assert len(approver.requests) == 1
    assert gate.session_keys("s1") == {"recursive_delete"}
    assert not gate.check("rm -rf docs", session_id="s2").allowed
    assert len(approver.requests) == 2


def test_once_does_not_persist(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "", ["once", "deny"])
    assert gate.check("git clean -fdx").allowed
    assert not gate.check("git clean -fdx").allowed
    assert len(approver.requests) == 2


def test_always_writes_the_allowlist_keeping_comments(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, CONFIG_WITH_COMMENTS, ["always"])
    decision = gate.check("git push --force", session_id="s1")
    assert decision.allowed and "always" in decision.reason
    text = (hermes_home / "config.yaml").read_text(encoding="utf-8")
    for note in ("# My Hermes config -- keep these notes!", "# the model I use", "# commands I trust", "# safe"):
        assert note in text
    # saved as Hermes's descriptions, so the released Hermes honours the approval as well
    assert "- git force push (rewrites remote history)" in text and "- make clean" in text
    assert "- git force push short flag (rewrites remote history)" in text
    assert [p.name for p in hermes_home.iterdir() if p.name.startswith(".config.")] == []
    fresh, fresh_approver = gate_for(hermes_home)
    assert fresh.check("git push -f origin main", session_id="other").allowed
    assert fresh_approver.requests == []


def test_always_adds_the_allowlist_when_the_file_has_none(hermes_home: Path) -> None:
    gate, _ = gate_for(hermes_home, "# only a comment\nmodel: m  # inline\n", ["always"])
    assert gate.check("chmod 777 shared").allowed
    text = (hermes_home / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# only a comment\nmodel: m  # inline\n")
    assert read_yaml_file(hermes_home / "config.yaml")["command_allowlist"] == ["world/other-writable permissions"]


def test_always_with_a_broken_config_still_allows_but_says_so(hermes_home: Path) -> None:
    gate, _ = gate_for(hermes_home, "", ["always"])
    (hermes_home / "config.yaml").write_text("model: [unclosed\n", encoding="utf-8")
    decision = gate.check("git clean -f")
    assert decision.allowed and "could not save" in decision.reason
    assert (hermes_home / "config.yaml").read_text(encoding="utf-8") == "model: [unclosed\n"


def test_no_way_to_ask_denies_at_once_with_a_readable_reason(hermes_home: Path) -> None:
    gate = ApprovalGate(settings_for(hermes_home), AutoDenyApprover(), is_interactive=True)
    command = "rm -rf data && echo " + "x" * 300
    started = time.monotonic()
    decision = gate.check(command)
    assert time.monotonic() - started < 0.5
    assert not decision.allowed and decision.via == "no_approver"
    assert "cannot ask" in decision.reason and "recursive_delete" in decision.reason and command in decision.reason
    scripted = ScriptedApprover(["once"])
    gate = ApprovalGate(settings_for(hermes_home), scripted, is_interactive=False)
    assert not gate.check("git push -f").allowed and scripted.requests == []


def test_a_silent_approver_times_out_to_deny(hermes_home: Path) -> None:
    settings = settings_for(hermes_home, "approvals:\n  timeout: 0.3\n")
    gate = ApprovalGate(settings, ScriptedApprover(["once"], delay=5), is_interactive=True)
    started = time.monotonic()
    decision = gate.check("git reset --hard")
    assert time.monotonic() - started < 2
    assert not decision.allowed and "did not answer within 0.3 s" in decision.reason


def test_terminal_approver_timeout_denies(hermes_home: Path) -> None:
    read_fd, write_fd = os.pipe()
    out_r, out_w = os.pipe()
    try:
        with os.fdopen(out_w, "w", encoding="utf-8") as out:
            approver = TerminalApprover(stream_in=read_fd, stream_out=out)
            settings = settings_for(hermes_home, "approvals:\n  timeout: 0.3\n")
            gate = ApprovalGate(settings, approver, is_interactive=True)
            started = time.monotonic()
            decision = gate.check("git push --force origin main")
            assert time.monotonic() - started < 2
        shown = os.read(out_r, 65536).decode()
    finally:
        for fd in (read_fd, write_fd, out_r):
            os.close(fd)
    assert not decision.allowed
    assert "git push --force origin main" in shown and "[o]nce" in shown and "No answer within 0.3 s" in shown


def test_approver_that_raises_means_deny(hermes_home: Path) -> None:
    class Broken:
        can_ask = True

        def ask(self, request):
            raise RuntimeError("frontend went away")

    gate = ApprovalGate(settings_for(hermes_home), Broken(), is_interactive=True)
    assert not gate.check("killall node").allowed


def test_smart_mode_asks_the_judge_first(hermes_home: Path) -> None:
    seen: list[tuple[str, str]] = []
    verdicts = iter(["APPROVE", "deny", "ESCALATE", "garbage"])

    def judge(command: str, description: str) -> str:
        seen.append((command, description))
        return next(verdicts)

    gate, approver = gate_for(hermes_home, "approvals:\n  mode: smart\n", ["once", "deny"], aux_judge=judge)
    assert gate.check("rm -rf vendor").via == "smart"
    assert gate.check("rm -rf /var/data").via == "smart"
    assert gate.check("git push -f").allowed  # escalated -> approver said once
    assert not gate.check("git clean -f").allowed  # unknown verdict -> escalated -> approver said deny
    assert seen[0] == ("rm -rf vendor", "recursive delete")
    assert len(approver.requests) == 2


def test_judge_prompt_and_verdict_parsing() -> None:
    prompt = judge_prompt("# clean up\nrm -rf vendor", "recursive delete")
    assert "<command>\nrm -rf vendor\n</command>" in prompt and "# clean up" not in prompt
    assert "recursive delete" in prompt
    assert [parse_verdict(r) for r in ("APPROVE", "deny.", "Escalate", "APPROVE or DENY", "sure")] == [
        "APPROVE", "DENY", "ESCALATE", "ESCALATE", "ESCALATE"]


def test_smart_judge_is_ignored_in_manual_mode(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "", ["deny"], aux_judge=lambda c, d: "APPROVE")
    assert not gate.check("rm -rf data").allowed and len(approver.requests) == 1


def test_full_command_reaches_the_approver_untruncated(hermes_home: Path) -> None:
    command = "rm -rf data\n" + "\n".join(f"echo line {i} {'y' * 200}" for i in range(40))
    gate, approver = gate_for(hermes_home, "", ["once"])
    assert gate.check(command).allowed
    assert approver.requests[0].command == command


def test_concurrent_requests_prompt_once_per_key(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "", ["session"])
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(gate.check(f"rm -rf out{i}", session_id="s")))
               for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(d.allowed for d in results) and len(approver.requests) == 1


def test_session_yolo(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "", [])
    gate.set_session_yolo("chat-1", True)
    assert gate.check("git push -f", session_id="chat-1").via == "yolo"
    assert not gate.check("git push -f", session_id="chat-2").allowed
    assert not gate.check("rm -rf ~", session_id="chat-1").allowed


# -- the pre_tool_call hook ------------------------------------------------------------------------


def bus_with(gate: ApprovalGate) -> HookBus:
    from hermes_agent.tools.registry import discover_builtin_tools

    discover_builtin_tools()  # the hook reads the tools' traits from the registry
    bus = HookBus()
    bus.register("pre_tool_call", gate.as_hook(Block))
    return bus


def test_hook_blocks_flagged_terminal_commands(hermes_home: Path) -> None:
    settings = settings_for(hermes_home)
    gate = ApprovalGate(settings, AutoDenyApprover(), is_interactive=False)
    bus = bus_with(gate)
    ctx = ToolContext(settings=settings, session_id="s")
    blocked = bus.pre_tool_call("terminal", {"command": "git push --force"}, ctx)
    assert isinstance(blocked, Block) and "git push --force" in blocked.reason
    assert bus.pre_tool_call("terminal", {"command": "git status"}, ctx) is None
    assert bus.pre_tool_call("read_file", {"path": "/etc/shadow"}, ctx) is None


def test_hook_trusts_isolated_docker_but_not_host_mounts(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMINAL_ENV", "docker")
    settings = load_settings()
    gate = ApprovalGate(settings, AutoDenyApprover(), is_interactive=False)
    bus = bus_with(gate)
    assert bus.pre_tool_call("terminal", {"command": "git push -f"}, ToolContext(settings=settings)) is None
    mounted = settings.with_overrides({"terminal.docker_volumes": ["/home/me:/work"]})
    assert isinstance(bus.pre_tool_call("terminal", {"command": "git push -f"}, ToolContext(settings=mounted)), Block)


def test_hermes_description_keys_in_the_allowlist_approve_our_patterns(hermes_home: Path) -> None:
    config = "command_allowlist: [recursive delete, 'git reset --hard (destroys uncommitted changes)']\n"
    gate, approver = gate_for(hermes_home, config, ["deny"])
    assert gate.check("rm -rf data").allowed
    assert gate.check("git reset --hard HEAD~1").allowed
    assert approver.requests == []
    assert not gate.check("git clean -fdx").allowed  # not covered by either entry: asked, denied
    assert len(approver.requests) == 1


def test_hermes_format_filesystem_entry_does_not_unlock_a_hardline(hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, "command_allowlist: [format filesystem]\n", ["once"])
    decision = gate.check("mkfs.ext4 /dev/sda1")
    assert not decision.allowed and decision.via == "hardline" and approver.requests == []


def test_every_hermes_description_names_pattern_keys_we_raise() -> None:
    import re

    from hermes_agent.approval.allowlist import HERMES_DESCRIPTION_KEYS

    sources = "".join(p.read_text(encoding="utf-8") for p in
                      (Path(__file__).parents[3] / "src/hermes_agent/approval").rglob("*.py")
                      if p.name != "allowlist.py")
    raised = set(re.findall(r'"([a-z_]+)"', sources))
    missing = {k for keys in HERMES_DESCRIPTION_KEYS.values() for k in keys} - raised
    assert missing == set()
