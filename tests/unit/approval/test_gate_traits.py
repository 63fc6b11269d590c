"""The gate's pre_tool_call hook judges a call by its tool's registry traits: `approval` says how
(command / writes / external) and `approval_subject(args)` says what, so the gate names no tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_agent.approval.approvers import AutoDenyApprover, ScriptedApprover, render_prompt
from hermes_agent.approval.gate import ApprovalGate
from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.config.loader import load_settings
from hermes_agent.tools.builtin.files import written_paths
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import Block, HookBus
from hermes_agent.tools.mcp.config import parse_server
from hermes_agent.tools.registry import ToolRegistry, discover_builtin_tools, registry


def bus_for(gate: ApprovalGate, lookup=None) -> HookBus:
    discover_builtin_tools()
    bus = HookBus()
    bus.register("pre_tool_call", gate.as_hook(Block, lookup))
    return bus


def ctx(session: str = "s") -> ToolContext:
    return ToolContext(settings=load_settings(), session_id=session)


def test_process_stdin_is_judged_as_a_command(hermes_home: Path) -> None:
    bus = bus_for(ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False))
    blocked = bus.pre_tool_call("process", {"action": "write", "id": "p1", "data": "rm -rf ~/projects\n"}, ctx())
    assert isinstance(blocked, Block) and "rm -rf ~/projects" in blocked.reason
    assert isinstance(bus.pre_tool_call("process", {"action": "close", "id": "p1", "data": "git push -f\n"}, ctx()), Block)
    assert bus.pre_tool_call("process", {"action": "write", "id": "p1", "data": "ls\n"}, ctx()) is None
    assert bus.pre_tool_call("process", {"action": "poll", "id": "p1", "data": "rm -rf /"}, ctx()) is None


def test_paths_inside_diffs_and_moves_are_judged_as_writes(hermes_home: Path) -> None:
    v4a = "*** Begin Patch\n*** Update File: notes.txt\n*** Move to: ~/.bashrc\n@@\n-a\n+b\n*** End Patch\n"
    assert written_paths({"patch": v4a}) == ["notes.txt", "~/.bashrc"]
    unified = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n"
    assert written_paths({"path": "src/a.py", "patch": unified}) == ["src/a.py", "app.py"]
    approver = ScriptedApprover(["deny"])
    bus = bus_for(ApprovalGate(load_settings(), approver, is_interactive=True))
    assert isinstance(bus.pre_tool_call("patch", {"mode": "patch", "patch": v4a}, ctx()), Block)
    assert approver.requests[0].kind == "write" and "/.bashrc" in approver.requests[0].command


def external_tool(reg: ToolRegistry, ask: bool) -> str:
    subject = (lambda args: ApprovalSubject(origin="MCP server 'gh'")) if ask else None
    reg.register("mcp__gh__close_issue", "mcp-gh", {"description": "close"}, lambda args, **kw: "{}",
                 approval="external", approval_subject=subject)
    return "mcp__gh__close_issue"


def test_external_tool_of_a_server_that_asks_shows_server_tool_and_arguments(hermes_home: Path) -> None:
    reg = ToolRegistry()
    name = external_tool(reg, ask=True)
    approver = ScriptedApprover(["deny", "session"])
    bus = bus_for(ApprovalGate(load_settings(), approver, is_interactive=True), reg.get)
    args = {"repo": "me/app", "number": 7}
    denied = bus.pre_tool_call(name, args, ctx())
    assert isinstance(denied, Block) and "denied" in denied.reason
    request = approver.requests[0]
    assert request.kind == "external" and request.pattern_key == f"external:{name}"
    assert request.command == f"MCP server 'gh': {name} {json.dumps(args, sort_keys=True)}"
    assert "External tool call needs approval" in render_prompt(request)
    assert bus.pre_tool_call(name, args, ctx()) is None  # "session"
    assert bus.pre_tool_call(name, {"repo": "x"}, ctx()) is None and len(approver.requests) == 2
    assert isinstance(bus.pre_tool_call(name, args, ctx("other-session")), Block)


def test_external_tools_without_a_terminal_are_refused_and_never_servers_run(hermes_home: Path) -> None:
    reg = ToolRegistry()
    name = external_tool(reg, ask=True)
    gate = ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False)
    blocked = bus_for(gate, reg.get).pre_tool_call(name, {}, ctx())
    assert isinstance(blocked, Block) and "MCP server 'gh' is configured to ask" in blocked.reason
    yolo = ApprovalGate(load_settings(yolo=True), AutoDenyApprover(), is_interactive=False)
    assert bus_for(yolo, reg.get).pre_tool_call(name, {}, ctx()) is None
    quiet = ToolRegistry()
    external_tool(quiet, ask=False)
    assert bus_for(gate, quiet.get).pre_tool_call(name, {}, ctx()) is None


def test_the_hook_fails_closed_when_it_cannot_see_traits(hermes_home: Path) -> None:
    bus = bus_for(ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False))
    blocked = bus.pre_tool_call("read_file", {"path": "a.txt"}, None)
    assert isinstance(blocked, Block) and "cannot see this tool's traits" in blocked.reason
    with_lookup = bus_for(ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False), registry.get)
    assert isinstance(with_lookup.pre_tool_call("terminal", {"command": "git push --force"}, None), Block)


def test_mcp_server_approval_config() -> None:
    assert parse_server("a", {"command": "x"}).approval == "never"
    assert parse_server("a", {"command": "x", "approval": "ASK"}).approval == "ask"
    with pytest.raises(ValueError, match="ask, never"):
        parse_server("a", {"command": "x", "approval": "sometimes"})


def test_a_bad_approval_trait_is_refused_at_registration() -> None:
    with pytest.raises(ValueError, match="approval must be one of"):
        ToolRegistry().register("t", "ts", {}, lambda args, **kw: "{}", approval="maybe")  # type: ignore[arg-type]


def test_running_outside_the_sandbox_is_always_an_approval(hermes_home: Path) -> None:
    denied = bus_for(ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False))
    call = {"command": "ls", "sandbox": False, "reason": "needs ~/.cache of another user"}
    blocked = denied.pre_tool_call("terminal", call, ctx())
    assert isinstance(blocked, Block) and "outside the OS sandbox" in blocked.reason
    assert "needs ~/.cache of another user" in blocked.reason
    assert denied.pre_tool_call("terminal", {"command": "ls"}, ctx()) is None
    approver = ScriptedApprover(["session"])
    asking = bus_for(ApprovalGate(load_settings(), approver, is_interactive=True))
    assert asking.pre_tool_call("terminal", call, ctx()) is None
    # "session" counts for this call only: leaving the sandbox is asked about every time
    assert isinstance(asking.pre_tool_call("terminal", {**call, "command": "pwd"}, ctx()), Block)
    assert len(approver.requests) == 2 and approver.requests[0].pattern_key == "unsandboxed"
    assert all(r.once_only for r in approver.requests)


def test_no_sandbox_on_the_machine_asks_before_every_command(hermes_home: Path) -> None:
    bus = bus_for(ApprovalGate(load_settings(), AutoDenyApprover(), is_interactive=False))
    c = ctx()
    c.sandbox_state = lambda: "unavailable"
    blocked = bus.pre_tool_call("terminal", {"command": "echo hi > notes.txt"}, c)
    assert isinstance(blocked, Block) and "no OS sandbox works on this machine" in blocked.reason
    c.sandbox_state = lambda: "bwrap"
    assert bus.pre_tool_call("terminal", {"command": "echo hi > notes.txt"}, c) is None
