"""The approval gate as the first pre_tool_call hook, with the approver the frontend can offer."""

from __future__ import annotations

from hermes_agent.approval.approvers import Approver, AutoDenyApprover, TerminalApprover
from hermes_agent.approval.gate import ApprovalGate, judge_prompt, parse_verdict
from hermes_agent.approval.policy import PathPolicy, PendingPolicy, policy_for_settings
from hermes_agent.config.settings import Settings
from hermes_agent.core.agent import AgentServices
from hermes_agent.messages import user
from hermes_agent.providers.base import ChatRequest
from hermes_agent.tools.hooks import Block
from hermes_agent.tools.registry import registry

from .provider import auxiliary_provider


def wire_approval(services: AgentServices, settings: Settings, approver: Approver | None,
                  interactive: bool) -> ApprovalGate:
    """Install the gate. Without a way to ask (no terminal, cron, subagents) flagged commands are denied at once."""
    if approver is None:
        approver = TerminalApprover() if interactive else AutoDenyApprover()
    judge = None
    if settings.cfg.approvals.mode == "smart":
        aux = auxiliary_provider(settings, "approval", services.provider)

        def judge(command: str, description: str) -> str:
            reply = aux.complete(ChatRequest((user(judge_prompt(command, description)),), max_tokens=20))
            return parse_verdict(reply.content or "")

    _media_dirs(services.ctx.media_scope)
    policy = pending_path_policy(settings, media_scope=services.ctx.media_scope)
    services.hooks.register("pre_llm_call", policy.start)  # built while the first model call is out
    gate = ApprovalGate(settings, approver, is_interactive=interactive, aux_judge=judge, path_policy=policy)
    hook = gate.as_hook(Block, registry.get)
    services.hooks.register("pre_tool_call", hook, first=True)
    services.gate, services.approval_hook = gate, hook
    services.ctx.pending_policy = policy
    services.ctx.approve_write = gate.check_write
    services.ctx.approve_context = gate.check_context_file
    return gate


def _media_dirs(scope: str) -> None:
    """The session's media folders exist before its sandbox is planned: it sees them (and only them) from its
    first command, while the other scopes' folders next to them are hidden whole."""
    from hermes_agent import paths

    for kind in ("documents", "images", "audio") if scope else ():
        try:
            paths.media_cache(kind, scope).mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:  # a read-only home: nothing to see, nothing to hide
            pass


def pending_path_policy(settings: Settings, media_scope: str = "") -> PendingPolicy:
    """The session's path policy for build_path_policy's arguments as they are now (the workspace resolved
    against today's cwd), built on first use or by `start()` (approval/policy.py PendingPolicy)."""
    from hermes_agent import paths

    root = paths.work_root(settings.cfg.terminal.cwd, str(settings.home), "terminal.cwd" in settings.chosen)
    return PendingPolicy(lambda: build_path_policy(settings, root, media_scope))


def build_path_policy(settings: Settings, workspace: str | None = None, media_scope: str = "") -> PathPolicy:
    """The session's path policy: workspace = terminal.cwd (default: where hermes started). A policy is
    frozen; the same Settings and workspace reuse it for a minute (a gateway composes an agent per chat,
    and resolving every root costs milliseconds)."""
    import os
    import time

    key = (id(settings), workspace, os.getcwd(), media_scope)
    hit = _POLICIES.get(key)
    if hit is not None and hit[0] is settings and time.monotonic() - hit[1] < _POLICY_TTL_S:
        return hit[2]
    policy = policy_for_settings(settings, workspace, media_scope)
    if len(_POLICIES) > 16:
        _POLICIES.clear()
    _POLICIES[key] = (settings, time.monotonic(), policy)
    return policy


_POLICY_TTL_S = 60.0
_POLICIES: dict[tuple, tuple[Settings, float, PathPolicy]] = {}
