"""The approval gate (layer 3): decides whether a terminal command, a sensitive file write or a call to
an external tool server that asks for approval may run. Order: hardline and approvals.deny -> isolated
backend -> yolo / mode off -> command_allowlist -> session approvals -> smart judge (opt-in) -> the
Approver. Crossing the sandbox boundary (a `sandbox: false` command, a local file write outside the sandbox's
write set) skips yolo..judge: only a person's yes for that one call. Exposed to the tool runtime as a pre_tool_call hook (`as_hook`) that reads each tool's
`approval` trait and subject, never its name."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import lazyre
from hermes_agent.approval.allowlist import add_to_allowlist, hermes_approves
from hermes_agent.approval.approvers import (
    ApprovalRequest,
    Approver,
    AutoApprover,
    AutoDenyApprover,
    Choice,
    ScriptedApprover,
    TerminalApprover,
)
from hermes_agent.approval.policy import PathPolicy, PendingPolicy, Verdict, policy_for_settings
from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.config.settings import Settings
from hermes_agent.lazylog import get_logger

if TYPE_CHECKING:  # the rule tables load on the first judgement, not at start-up
    from hermes_agent.approval.rules import Finding

__all__ = [
    "ApprovalGate", "ApprovalRequest", "Approver", "AutoApprover", "AutoDenyApprover", "Choice", "Decision",
    "ScriptedApprover", "TerminalApprover", "backend_isolation", "judge_prompt", "parse_verdict", "write_key",
]

log = get_logger(__name__)
AuxJudge = Callable[[str, str], str]
UNSANDBOXED = "unsandboxed"  # approval key of a command that would run outside the OS sandbox
# findings that only matter without the OS sandbox: code whose effect cannot be read, or a write to a path it
# computes (approval/rules/pyeffects.py); inside the sandbox the write set holds them (sandbox.mode off: they ask)
CONTAINED_KEYS = frozenset({"opaque_code", "code_mutates_unknown"})
PERSIST_KEY = "persist_after_untrusted"  # approval key of a lasting change after untrusted content
CONTEXT_KEY = "context_file_by_command"  # approval key of a context file changed by confined code
_ISOLATED_KINDS = frozenset({"singularity", "apptainer", "modal", "daytona"})
_GLOB = lazyre.compile(r"[*?\[]")


def _shown(command: str) -> str:
    """The command as one bounded line inside a verdict (a multi-line command would break the line); where the
    model must tell the user the exact command, the verdict quotes it whole instead."""
    from hermes_agent.approval.rules import one_line

    return one_line(command)



@dataclass(frozen=True, slots=True)
class Decision:
    """The gate's verdict; `reason` is written for the model when `allowed` is False."""

    allowed: bool
    reason: str
    pattern_key: str | None = None
    via: str = ""


JUDGE_INSTRUCTIONS = (
    "You review one shell command an AI agent wants to run on the user's machine. It matched a danger pattern: "
    "{description}. Reply with exactly one word: APPROVE if it is clearly routine and low-risk in a development "
    "workflow (for example deleting build output or node_modules), DENY if it could destroy data, weaken security "
    "or affect the system beyond the project, ESCALATE if you are unsure and a human should decide.")


def judge_prompt(command: str, description: str) -> str:
    """The text to send to the auxiliary model for approvals.mode: smart (shell comments stripped)."""
    body = "\n".join(line for line in command.splitlines() if not line.lstrip().startswith("#"))
    return JUDGE_INSTRUCTIONS.format(description=description) + f"\n\n<command>\n{body}\n</command>"


def parse_verdict(reply: str) -> str:
    """APPROVE, DENY or ESCALATE from a model reply (anything unclear escalates)."""
    words = re.findall(r"[A-Z]+", reply.upper())
    found = [w for w in words if w in ("APPROVE", "DENY", "ESCALATE")]
    return found[0] if len(set(found)) == 1 else "ESCALATE"


def backend_isolation(settings: Settings) -> tuple[str, bool]:
    """(backend kind, isolated) from terminal settings: containers without host mounts are isolated."""
    kind = settings.cfg.terminal.backend
    if kind in ("docker", "podman"):
        mounts = settings.cfg.terminal.docker_volumes or settings.cfg.terminal.docker_mount_cwd_to_workspace
        return kind, not mounts
    return kind, kind in _ISOLATED_KINDS


def write_key(verdict: Verdict) -> str:
    """The approval key of a write the policy asks about: the file for protected paths, the directory
    for writes outside the workspace (so "session" covers the rest of that directory)."""
    where = verdict.path.rsplit("/", 1)[0] or "/" if verdict.key in ("outside_workspace", "read_only") else verdict.path
    return f"{verdict.key}:{where}"


class ApprovalGate:
    """Decides about commands and writes for every session of one frontend."""

    def __init__(self, settings: Settings, approver: Approver, *, is_interactive: bool,
                 aux_judge: AuxJudge | None = None, config_path: Path | None = None,
                 path_policy: PathPolicy | PendingPolicy | None = None) -> None:
        self.settings = settings
        self.approver = approver
        self.can_ask = bool(is_interactive and getattr(approver, "can_ask", True))
        self.mode = settings.cfg.approvals.mode
        self.started = time.time()  # test files changed since then are this frontend's sessions' (scriptfiles)
        self.timeout = settings.cfg.approvals.timeout
        self.deny_rules = [str(r) for r in settings.cfg.approvals.deny if str(r).strip()]
        self.allowlist = [str(e) for e in settings.cfg.command_allowlist if str(e).strip()]
        self.yolo = bool(settings.yolo)
        self.aux_judge = aux_judge
        self.config_path = config_path or settings.config_file or Path(settings.home) / "config.yaml"
        self._home = str(settings.home).rstrip("/")
        self._sessions: dict[str, set[str]] = {}
        self._yolo_sessions: set[str] = set()
        self._grants: dict[str, set[str]] = {}  # resolved paths approved by the hook, once, for the tool
        self._policy = path_policy if isinstance(path_policy, PendingPolicy) else \
            PendingPolicy.of(path_policy or policy_for_settings(settings))
        self._lock = threading.Lock()
        self._ask_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------------

    @property
    def path_policy(self) -> PathPolicy:
        """The session's path policy (waits for its build when one is under way)."""
        return self._policy.get()

    def check(self, command: str, backend_kind: str = "local", isolated: bool = False, *,
              session_id: str | None = None, uncontained: str = "", cwd: str | None = None,
              boundary: str = "", shell_state: str = "", host_path: Callable[[str], str] | None = None,
              contained: bool = False) -> Decision:
        """Decide about one terminal command (the full text, as the backend would run it). `boundary` says why
        this one call asks to leave a working sandbox (`sandbox: false`), `uncontained` why it would run
        outside one anyway (no OS sandbox works here and the user did not turn it off): either way only a
        person's yes for this call lets it through (`_cross_boundary`), never yolo, approvals.mode off, the
        allowlist or a session yes.
        With `cwd`, the workspace files the command runs (a.sh, Makefile, x.py, package.json) count too; with
        `shell_state` (the session's saved aliases and functions), what a bare word defined there runs; `host_path`
        maps a path the confined commands see to where it lies here (the session's private /tmp)."""
        from hermes_agent.approval.rules import Finding, scan_command, scan_state

        scan = scan_command(command)
        if scan.hardline:
            f = scan.hardline
            return Decision(False, f"BLOCKED: `{_shown(command)}` was not run: {f.description}. This is never allowed, "
                                   "not even with --yolo or an allowlist.", f.key, "hardline")
        rule = self._deny_rule(scan.views, scan.keys)
        if rule:
            key = scan.dangerous.key if scan.dangerous else None
            return Decision(False, f"BLOCKED: `{_shown(command)}` was not run: it matches the user's approvals.deny rule "
                                   f"'{rule}'. Do not retry it; ask the user how to proceed.", key, "deny_rule")
        if isolated:
            return Decision(True, f"isolated {backend_kind} backend", None, "isolated")
        findings = [f for f in scan.findings if not (contained and f.key in CONTAINED_KEYS)]
        if shell_state:
            findings.extend(scan_state(command, shell_state))
        if cwd and not isolated:
            from hermes_agent.approval.scriptfiles import file_findings

            findings.extend(file_findings(command, cwd, shell_state, self.started, host_path))
        if boundary or uncontained:  # no sandbox on this machine is no different from leaving it
            findings.append(Finding(UNSANDBOXED, f"it would run outside the OS sandbox ({boundary or uncontained})"))
            return self._cross_boundary(f"`{_shown(command)}`", findings, session_id, "command")
        if not findings:
            return Decision(True, "no dangerous pattern", None, "clean")
        if self._yolo_for(session_id) or self.mode == "off":
            return Decision(True, "approvals disabled (yolo or approvals.mode: off)", findings[0].key, "yolo")
        if not scan.compound and self._literal_allowed(scan.normalised, scan.views[0]):
            return Decision(True, "matches a command_allowlist entry", findings[0].key, "allowlist")
        return self._resolve(command, findings, session_id, "command")

    def check_write(self, paths: Iterable[str], *, session_id: str | None = None, isolated: bool = False,
                    tool: str = "file write", verdicts: Iterable[Verdict] | None = None) -> Decision:
        """Decide about a file-writing tool touching `paths`; the path policy's verdicts decide. A file tool
        passes the `verdicts` for the resolved paths it will write; otherwise (the pre_tool_call hook) the
        gate's policy judges `paths`, relative ones against the workspace, and what the user approves
        here is granted once to the tool's own check of the same resolved paths. Raw disks: never."""
        from hermes_agent.approval.rules import classify_sensitive_path

        paths = list(paths)
        from_hook = verdicts is None
        verdicts = self._write_verdicts(paths) if verdicts is None else list(verdicts)
        if from_hook:
            with self._lock:
                self._grants.pop(session_id or "default", None)
        subject = f"{tool} {' '.join(dict.fromkeys(v.path for v in verdicts)) or ' '.join(paths)}"
        hard = next((c for p in (*paths, *(v.path for v in verdicts))
                     if (c := classify_sensitive_path(p, hermes_home=self._home)) and c[2]), None)
        if hard:
            return Decision(False, f"BLOCKED: {subject} was not run: {hard[1]} is never allowed.", hard[0], "hardline")
        pending = [v for v in verdicts if not v.allowed]
        rule = self._deny_rule([*paths, *(v.path for v in verdicts)], tuple(v.key for v in pending))
        if rule:
            return Decision(False, f"BLOCKED: {subject} was not run: it matches the user's approvals.deny rule '{rule}'.",
                            pending[0].key if pending else None, "deny_rule")
        if not pending:
            return Decision(True, "the path policy allows it", None, "clean")
        key = write_key(pending[0])
        with self._lock:
            granted = self._grants.get(session_id or "default", set())
            if not from_hook and {v.path for v in pending} <= granted:
                granted.difference_update(v.path for v in pending)
                return Decision(True, "approved by the user for this call", key, "granted")
        decision = self._decide_write(subject, pending, session_id, isolated)
        if decision.allowed and from_hook:
            with self._lock:
                self._grants.setdefault(session_id or "default", set()).update(v.path for v in pending)
        return decision

    def _decide_write(self, subject: str, pending: list[Verdict], session_id: str | None, isolated: bool) -> Decision:
        """A local backend's pending verdicts are writes outside the sandbox's write set: `_cross_boundary`."""
        from hermes_agent.approval.rules import Finding

        key = write_key(pending[0])
        if isolated:
            return Decision(True, "isolated backend", None, "isolated")
        if backend_isolation(self.settings)[0] == "local":  # the verdicts are the sandbox's own write set
            findings = list({write_key(v): Finding(write_key(v), v.reason) for v in pending}.values())
            return self._cross_boundary(subject, findings, session_id, "write")
        if self._yolo_for(session_id) or self.mode == "off":
            return Decision(True, "approvals disabled (yolo or approvals.mode: off)", key, "yolo")
        if all(self._literal_allowed(v.path, v.path) for v in pending):
            return Decision(True, "matches a command_allowlist entry", key, "allowlist")
        findings = list({write_key(v): Finding(write_key(v), v.reason) for v in pending}.values())
        return self._resolve(subject, findings, session_id, "write")

    def _write_verdicts(self, paths: list[str]) -> list[Verdict]:
        """Policy verdicts for a local backend; elsewhere (container, ssh) the host's paths mean nothing, so
        only the sensitive-path classes ask."""
        from hermes_agent.approval.rules import classify_sensitive_path

        if backend_isolation(self.settings)[0] == "local":
            policy = self.path_policy
            cwd = policy.workspace[0] if policy.workspace else None
            return [policy.check_write(p, cwd) for p in paths]
        out = []
        for p in paths:
            cls = classify_sensitive_path(p, hermes_home=self._home)
            out.append(Verdict("ask", p, cls[1], cls[0]) if cls else Verdict("allow", p))
        return out

    def set_session_yolo(self, session_id: str | None, enabled: bool) -> None:
        """Turn approvals off (or back on) for one session only; hardline rules still apply."""
        with self._lock:
            (self._yolo_sessions.add if enabled else self._yolo_sessions.discard)(session_id or "default")

    def session_keys(self, session_id: str | None) -> frozenset[str]:
        """Pattern keys approved for the rest of this session."""
        with self._lock:
            return frozenset(self._sessions.get(session_id or "default", ()))

    def check_external(self, tool: str, origin: str, args: dict, *, session_id: str | None = None) -> Decision:
        """Decide about a call to an external (MCP/plugin) tool whose server is configured to ask."""
        key = f"external:{tool}"
        if self._yolo_for(session_id) or self.mode == "off":
            return Decision(True, "approvals disabled (yolo or approvals.mode: off)", key, "yolo")
        if key in self.allowlist or key in self.session_keys(session_id):
            return Decision(True, "tool approved (allowlist or this session)", key, "session")
        if not self.can_ask:
            return Decision(False, f"BLOCKED: {tool} was not run: {origin} is configured to ask the user before "
                                   "each call and this session cannot ask. Tell the user what you wanted to do.",
                            key, "no_approver")
        text = f"{origin}: {tool} {json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)}"
        request = ApprovalRequest(text, key, f"a tool call to {origin}", (key,), "external", session_id, self.timeout)
        with self._ask_lock:
            if key in self.session_keys(session_id):
                return Decision(True, "tool approved for this session", key, "session")
            choice = self._ask(request)
        return self._apply(choice, request, session_id)

    def check_persist(self, tool: str, what: str, source: str, *, session_id: str | None = None) -> Decision:
        """Decide about a call that changes what future sessions see (`what`: memory, a skill, a context
        file...) in a conversation that took in untrusted content from `source`: the content may have
        planted it, so the user is asked; nobody to ask means no. --yolo and approvals.mode: off do not answer
        it (they waive the questions about commands; this one is about whose words the change carries, red-team
        round 11 a13); the allowlist (`persist_after_untrusted`) does."""
        key = PERSIST_KEY
        if key in self.allowlist:
            return Decision(True, "lasting changes approved (allowlist)", key, "allowlist")
        if not self.can_ask or not getattr(self.approver, "human", True):
            return Decision(False, f"BLOCKED: {tool} was not run: it would change {what}, which future sessions "
                                   f"read, and this conversation has taken in untrusted content ({source}) that may "
                                   "have asked for it. That needs the user's approval and this session cannot ask. "
                                   "Do not retry; tell the user what you wanted to save and why, so they can "
                                   "decide.", key, "no_approver")
        if key in self.session_keys(session_id):
            return Decision(True, "lasting changes approved for this session", key, "session")
        description = f"it changes {what} (read by future sessions) after this conversation took in untrusted " \
                      f"content ({source})"
        request = ApprovalRequest(f"{tool}: {what}", key, description, (key,), "persist", session_id, self.timeout)
        with self._ask_lock:  # never the smart judge: the untrusted content may be addressed to it too
            if key in self.session_keys(session_id):
                return Decision(True, "lasting changes approved for this session", key, "session")
            choice = self._ask(request)
        return self._apply(choice, request, session_id)

    def check_context_file(self, tool: str, what: str, *, session_id: str | None = None) -> Decision:
        """Keep a change confined code (`tool`) made to a context file (`what`: the file and the change)? Every
        later session loads it as instructions, so only a person's yes for this change keeps it: yolo,
        approvals.mode off, the allowlist, session answers and non-human approvers never do."""
        key = CONTEXT_KEY
        if not (self.can_ask and getattr(self.approver, "human", True)):
            return Decision(False, "this session cannot ask the user", key, "no_approver")
        request = ApprovalRequest(f"{tool}: {what}", key, "confined code changed a context file that every later "
                                  "session loads as instructions", (key,), "context", session_id, self.timeout,
                                  once_only=True)
        with self._ask_lock:
            choice = self._ask(request)
        if choice == "deny":
            return Decision(False, "the user said no (or did not answer)", key, "user")
        return Decision(True, "kept: the user said yes to this change", key, "user")

    def as_hook(self, block: Callable[[str], object],
                lookup: Callable[[str], object | None] | None = None) -> Callable[..., object | None]:
        """A pre_tool_call handler `fn(name, args, ctx)` judging each call by its tool's `approval` trait and
        `subject(args)` (the entry comes from `lookup(name)`, else `ctx.tool_entry(name)`); `block(reason)`
        builds the refusal (tools.hooks.Block). Without a way to see the traits it refuses (fails closed)."""

        def approval_hook(name: str, args: dict, ctx: object = None, **_: object) -> object | None:
            find = lookup or getattr(ctx, "tool_entry", None)
            if find is None:
                return block("the approval gate cannot see this tool's traits; the call was not run")
            entry = find(name)
            source = getattr(ctx, "untrusted", "") if isinstance(args, dict) else ""
            if not source and isinstance(args, dict) and hasattr(ctx, "written_instruction"):
                source = ctx.written_instruction(name, args)  # type: ignore[union-attr]  # the second layer
            persisted = entry.persisted(args) if source and hasattr(entry, "persisted") else None  # type: ignore[union-attr]
            if persisted in getattr(ctx, "private_persists", ()):
                persisted = None  # read by this person's own sessions only (their USER.md in team mode)
            if persisted:
                decision = self.check_persist(name, persisted, source, session_id=getattr(ctx, "session_id", None))
                if not decision.allowed:
                    log.info("approval: blocked %s (persists after untrusted content)", name)
                    return block(decision.reason)
            trait = getattr(entry, "approval", "none")
            subject = entry.subject(args) if trait != "none" and isinstance(args, dict) else None  # type: ignore[union-attr]
            if subject is None:
                return None
            decision = self._decide(trait, name, subject, args, ctx)
            if decision.allowed:
                return None
            log.info("approval: blocked %s (%s, %s)", name, decision.pattern_key, decision.via)
            return block(decision.reason)

        return approval_hook

    def _decide(self, trait: str, name: str, subject: ApprovalSubject, args: dict, ctx: object) -> Decision:
        settings = getattr(ctx, "settings", None) or self.settings
        session_id = getattr(ctx, "session_id", None)
        kind, isolated = backend_isolation(settings)
        if trait == "command":
            return self.check(subject.command, kind, isolated, session_id=session_id, boundary=subject.uncontained,
                              uncontained=_sandbox_missing(ctx), cwd=_workspace(ctx), shell_state=_shell_state(ctx),
                              host_path=_host_path(ctx), contained=_contained(ctx) and not subject.uncontained)
        if trait == "writes":
            decision = self.check_write(subject.paths, session_id=session_id, isolated=isolated, tool=name)
            if decision.allowed and subject.command:  # a file a running background process may run: as if run now
                return self.check(subject.command, kind, isolated, session_id=session_id, cwd=_workspace(ctx),
                                  shell_state=_shell_state(ctx), host_path=_host_path(ctx))
            return decision
        return self.check_external(name, subject.origin or "an external tool server", args, session_id=session_id)

    # -- internals ----------------------------------------------------------------------------------

    def _resolve(self, subject: str, findings: list[Finding], session_id: str | None, kind: str) -> Decision:
        allowed_keys = set(self.allowlist) | self.session_keys(session_id)
        pending = [f for f in findings if f.key not in allowed_keys and
                   not (kind == "command" and hermes_approves(self.allowlist, f.key, subject))]
        if not pending:
            return Decision(True, "pattern approved (allowlist or this session)", findings[0].key, "session")
        description = "; ".join(dict.fromkeys(f.description for f in pending))
        key = pending[0].key
        if self.mode == "smart" and self.aux_judge is not None:
            verdict = self._judge(subject, description)
            if verdict == "APPROVE":
                return Decision(True, "approved by the approval model", key, "smart")
            if verdict == "DENY":
                return Decision(False, f"BLOCKED: `{_shown(subject)}` was not run: the approval model judged it unsafe "
                                       f"({description}). Ask the user to run it themselves if it is really needed.", key, "smart")
        if not self.can_ask and kind == "write":
            return Decision(False, f"BLOCKED: {subject} was not done: {description}. This session cannot ask the user "
                                   "for approval. Do not retry; tell the user, who can approve it in an interactive "
                                   "session or grant the path with sandbox.writable_paths in config.yaml.", key, "no_approver")
        if not self.can_ask:
            return Decision(False, f"BLOCKED: `{subject}` was not run: it needs approval ({description}) and this session "
                                   "cannot ask the user. Tell the user the exact command so they can run it themselves, "
                                   f"or ask them to allowlist it (add '{key}' to command_allowlist in config.yaml).",
                            key, "no_approver")
        request = ApprovalRequest(subject, key, description, tuple(f.key for f in pending), kind, session_id, self.timeout)  # type: ignore[arg-type]
        with self._ask_lock:
            if {f.key for f in pending} <= self.session_keys(session_id):
                return Decision(True, "pattern approved for this session", key, "session")
            choice = self._ask(request)
        return self._apply(choice, request, session_id)

    def _cross_boundary(self, subject: str, findings: list[Finding], session_id: str | None, kind: str) -> Decision:
        """A call that leaves the OS sandbox (runs unconfined, or writes where the sandbox cannot): only a
        person's yes for this one call. Yolo, approvals.mode off, the allowlist, session or "always"
        approvals, the smart judge and non-human approvers (cron's auto-approve) never cover it."""
        description = "; ".join(dict.fromkeys(f.description for f in findings))
        key = findings[0].key
        if not (self.can_ask and getattr(self.approver, "human", True)):
            how = "grant the path with sandbox.writable_paths in config.yaml or approve it in an interactive " \
                  "session" if kind == "write" else "run it themselves or approve it in an interactive session"
            return Decision(False, f"BLOCKED: {subject} was not run: {description}. Leaving the sandbox needs the "
                                   "user's yes for this one call (--yolo, approvals.mode: off, command_allowlist and "
                                   "session approvals do not cover it) and this session cannot ask. Do not retry; "
                                   f"tell the user what you wanted to do, so they can {how}.", key, "no_approver")
        request = ApprovalRequest(subject, key, description, (key,), kind, session_id, self.timeout,  # type: ignore[arg-type]
                                  once_only=True)
        with self._ask_lock:
            choice = self._ask(request)
        if choice == "deny":
            return self._apply(choice, request, session_id)
        return Decision(True, "approved by the user for this call only (it leaves the sandbox)", key, "user")

    def _ask(self, request: ApprovalRequest) -> Choice:
        """Run the approver in a worker so even a misbehaving approver cannot hold the turn past its timeout."""
        result: list[Choice] = []

        def run() -> None:
            try:
                result.append(self.approver.ask(request))
            except Exception:
                log.warning("approver failed; denying", exc_info=True)

        worker = threading.Thread(target=run, name="hermes-approval", daemon=True)
        worker.start()
        worker.join(request.timeout + 2.0)
        return result[0] if result and result[0] in ("once", "session", "always", "deny") else "deny"

    def _apply(self, choice: Choice, request: ApprovalRequest, session_id: str | None) -> Decision:
        key = request.pattern_key
        cancelled = str(getattr(self.approver, "cancelled", "") or "") if choice == "deny" else ""
        if cancelled:
            return Decision(False, f"CANCELLED: `{_shown(request.command)}` was not run: the approval request was called off "
                                   f"before the user answered ({cancelled}). The user did not deny it; ask again "
                                   "if it is still needed.", key, "cancelled")
        if choice == "deny":
            return Decision(False, f"BLOCKED: `{_shown(request.command)}` was not run: the user denied it or did not answer within "
                                   f"{self.timeout:g} s ({request.description}). Do not retry it; ask the user what to do instead.",
                            key, "user")
        if choice in ("session", "always"):
            with self._lock:
                self._sessions.setdefault(session_id or "default", set()).update(request.pattern_keys)
        if choice == "always":
            new = [k for k in request.pattern_keys if k not in self.allowlist]
            self.allowlist.extend(new)
            if new and not add_to_allowlist(Path(self.config_path), new):
                return Decision(True, f"approved by the user (could not save to {self.config_path}; allowed for this session)",
                                key, "user")
        return Decision(True, f"approved by the user ({choice})", key, "user")

    def _judge(self, command: str, description: str) -> str:
        try:
            verdict = str(self.aux_judge(command, description)).strip().upper()  # type: ignore[misc]
        except Exception:
            log.warning("approval model failed; escalating", exc_info=True)
            return "ESCALATE"
        return verdict if verdict in ("APPROVE", "DENY") else "ESCALATE"

    def _yolo_for(self, session_id: str | None) -> bool:
        return self.yolo or (session_id or "default") in self._yolo_sessions

    def _deny_rule(self, views: Iterable[str], keys: tuple[str, ...]) -> str | None:
        """Hermes 0.19's `approvals.deny`: case-insensitive fnmatch globs over every normalised view of the
        command, stripped, blocking even under --yolo (SQL, Windows paths and shells ignore case: `DROP TABLE`
        is `drop table`). A rule without glob characters matches as a substring (a superset of Hermes's
        exact match) and a rule naming a dangerous-pattern key matches that key."""
        lowered = [v.lower().strip() for v in views]
        for rule in self.deny_rules:
            folded = rule.strip().lower()
            if rule in keys:
                return rule
            if _GLOB.search(folded):
                if any(fnmatchcase(v, folded) for v in lowered):
                    return rule.strip()
            elif any(folded in v for v in lowered):
                return rule.strip()
        return None

    def _literal_allowed(self, normalised: str, raw: str) -> bool:
        from hermes_agent.approval.rules import scan_command

        for entry in self.allowlist:
            target = scan_command(entry).normalised if entry.strip() else ""
            if _GLOB.search(entry):
                if fnmatchcase(normalised, target) or fnmatchcase(raw, entry):
                    return True
            elif normalised == target or raw == " ".join(entry.split()):
                return True
        return False


def _workspace(ctx: object) -> str | None:
    """The directory the terminal of this context runs commands in (its scripts are scanned too)."""
    try:
        backend = ctx.backend() if callable(getattr(ctx, "backend", None)) else None  # type: ignore[union-attr]
        cwd = backend.cwd() if backend is not None else None
    except Exception:  # no backend here: only the command text is judged
        log.debug("no backend to find the workspace files", exc_info=True)
        return None
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else None


def _host_path(ctx: object) -> Callable[[str], str] | None:
    """The terminal's map from a path its confined commands see to the file here (their /tmp is the session's
    private one: a script an earlier call left in /tmp is read there, rt12 a29), or None."""
    try:
        backend = ctx.backend() if callable(getattr(ctx, "backend", None)) else None  # type: ignore[union-attr]
    except Exception:  # no backend here: paths are read as they are
        log.debug("no backend to map paths", exc_info=True)
        return None
    mapper = getattr(backend, "host_path", None)
    return mapper if callable(mapper) else None


def _shell_state(ctx: object) -> str:
    """The aliases and functions this context's terminal carries between calls ("" when it keeps none)."""
    try:
        backend = ctx.backend() if callable(getattr(ctx, "backend", None)) else None  # type: ignore[union-attr]
        read = getattr(backend, "shell_definitions", None)
        state = read() if callable(read) else ""
    except Exception:  # no backend here: only the command text is judged
        log.debug("no shell state to read", exc_info=True)
        return ""
    return state if isinstance(state, str) else ""


def _contained(ctx: object) -> bool:
    """Commands of this context run inside a working OS sandbox (bwrap or Landlock)."""
    state = getattr(ctx, "sandbox_state", None)
    try:
        return callable(state) and state() in ("bwrap", "landlock")
    except Exception:  # unknown: judged as uncontained
        log.debug("sandbox state unknown", exc_info=True)
        return False


def _sandbox_missing(ctx: object) -> str:
    """Why commands of this context run unconfined although the user did not turn the sandbox off ("" if not)."""
    state = getattr(ctx, "sandbox_state", None)
    try:
        return "no OS sandbox works on this machine" if callable(state) and state() == "unavailable" else ""
    except Exception:  # a backend that cannot start is reported by the tool itself
        log.debug("sandbox state unknown", exc_info=True)
        return ""
