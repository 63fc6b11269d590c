"""The approval gate (layer 3): decides whether a terminal command or a sensitive file write may run.
Order: hardline and approvals.deny -> isolated backend -> yolo / mode off -> command_allowlist ->
session approvals -> smart judge (opt-in) -> the Approver. Exposed to the tool runtime as a
pre_tool_call hook (`as_hook`)."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from hermes_agent.approval.allowlist import add_to_allowlist, allowed_pattern_keys
from hermes_agent.approval.approvers import (
    ApprovalRequest,
    Approver,
    AutoApprover,
    AutoDenyApprover,
    Choice,
    ScriptedApprover,
    TerminalApprover,
)
from hermes_agent.approval.rules import Finding, classify_sensitive_path, scan_command
from hermes_agent.config.settings import Settings

__all__ = [
    "ApprovalGate", "ApprovalRequest", "Approver", "AutoApprover", "AutoDenyApprover", "Choice", "Decision",
    "ScriptedApprover", "TerminalApprover", "backend_isolation", "judge_prompt", "parse_verdict", "write_paths",
]

log = logging.getLogger(__name__)
AuxJudge = Callable[[str, str], str]
WRITE_TOOLS = frozenset({"write_file", "patch", "edit_file", "apply_patch"})
_ISOLATED_KINDS = frozenset({"singularity", "apptainer", "modal", "daytona"})
_GLOB = re.compile(r"[*?\[]")
_DIFF_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)|^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.M)


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
    kind = str(settings.get("terminal.backend", "local") or "local").lower()
    if kind in ("docker", "podman"):
        mounts = settings.get("terminal.docker_volumes") or settings.get("terminal.docker_mount_cwd_to_workspace")
        return kind, not mounts
    return kind, kind in _ISOLATED_KINDS


def write_paths(tool: str, args: dict) -> list[str]:
    """Every path a file-writing tool call would modify (single path, path lists, unified diffs)."""
    paths = [args[k] for k in ("path", "file_path", "target") if isinstance(args.get(k), str)]
    if isinstance(args.get("paths"), list):
        paths += [p for p in args["paths"] if isinstance(p, str)]
    for key in ("patch", "diff"):
        if isinstance(args.get(key), str):
            paths += [a or b for a, b in _DIFF_PATH.findall(args[key])]
    return [p for p in dict.fromkeys(paths) if p and p != "/dev/null"]


class ApprovalGate:
    """Decides about commands and writes for every session of one frontend."""

    def __init__(self, settings: Settings, approver: Approver, *, is_interactive: bool,
                 aux_judge: AuxJudge | None = None, config_path: Path | None = None) -> None:
        self.settings = settings
        self.approver = approver
        self.can_ask = bool(is_interactive and getattr(approver, "can_ask", True))
        self.mode = str(settings.get("approvals.mode", "manual") or "manual").strip().lower()
        self.timeout = float(settings.get("approvals.timeout", 60) or 60)
        self.deny_rules = [str(r) for r in settings.get("approvals.deny") or [] if str(r).strip()]
        self.allowlist = [str(e) for e in settings.get("command_allowlist") or [] if str(e).strip()]
        self.yolo = bool(settings.yolo)
        self.aux_judge = aux_judge
        self.config_path = config_path or settings.config_file or Path(settings.home) / "config.yaml"
        self._home = str(settings.home).rstrip("/")
        self._sessions: dict[str, set[str]] = {}
        self._yolo_sessions: set[str] = set()
        self._lock = threading.Lock()
        self._ask_lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------------

    def check(self, command: str, backend_kind: str = "local", isolated: bool = False, *,
              session_id: str | None = None) -> Decision:
        """Decide about one terminal command (the full text, as the backend would run it)."""
        scan = scan_command(command)
        if scan.hardline:
            f = scan.hardline
            return Decision(False, f"BLOCKED: `{command}` was not run: {f.description}. This is never allowed, "
                                   "not even with --yolo or an allowlist.", f.key, "hardline")
        rule = self._deny_rule(scan.views, scan.keys)
        if rule:
            key = scan.dangerous.key if scan.dangerous else None
            return Decision(False, f"BLOCKED: `{command}` was not run: it matches the user's approvals.deny rule "
                                   f"'{rule}'. Do not retry it; ask the user how to proceed.", key, "deny_rule")
        if isolated:
            return Decision(True, f"isolated {backend_kind} backend", None, "isolated")
        if not scan.findings:
            return Decision(True, "no dangerous pattern", None, "clean")
        if self._yolo_for(session_id) or self.mode == "off":
            return Decision(True, "approvals disabled (yolo or approvals.mode: off)", scan.dangerous.key, "yolo")
        if not scan.compound and self._literal_allowed(scan.normalised, scan.views[0]):
            return Decision(True, "matches a command_allowlist entry", scan.dangerous.key, "allowlist")
        return self._resolve(command, list(scan.findings), session_id, "command")

    def check_write(self, paths: Iterable[str], *, session_id: str | None = None, isolated: bool = False,
                    tool: str = "write_file") -> Decision:
        """Decide about a file-writing tool touching `paths` (credentials, rc files, /etc need approval)."""
        paths = list(paths)
        findings: list[Finding] = []
        for p in paths:
            cls = classify_sensitive_path(p, hermes_home=self._home)
            if cls and all(f.key != cls[0] for f in findings):
                findings.append(Finding(*cls))
        subject = f"{tool} {' '.join(paths)}"
        if not findings:
            return Decision(True, "no sensitive path", None, "clean")
        hard = next((f for f in findings if f.hardline), None)
        if hard:
            return Decision(False, f"BLOCKED: {subject} was not run: {hard.description} is never allowed.", hard.key, "hardline")
        rule = self._deny_rule(paths, tuple(f.key for f in findings))
        if rule:
            return Decision(False, f"BLOCKED: {subject} was not run: it matches the user's approvals.deny rule '{rule}'.",
                            findings[0].key, "deny_rule")
        if isolated:
            return Decision(True, "isolated backend", None, "isolated")
        if self._yolo_for(session_id) or self.mode == "off":
            return Decision(True, "approvals disabled (yolo or approvals.mode: off)", findings[0].key, "yolo")
        if all(self._literal_allowed(p, p) for p in paths):
            return Decision(True, "matches a command_allowlist entry", findings[0].key, "allowlist")
        return self._resolve(subject, findings, session_id, "write")

    def set_session_yolo(self, session_id: str | None, enabled: bool) -> None:
        """Turn approvals off (or back on) for one session only; hardline rules still apply."""
        with self._lock:
            (self._yolo_sessions.add if enabled else self._yolo_sessions.discard)(session_id or "default")

    def session_keys(self, session_id: str | None) -> frozenset[str]:
        """Pattern keys approved for the rest of this session."""
        with self._lock:
            return frozenset(self._sessions.get(session_id or "default", ()))

    def as_hook(self, block: Callable[[str], object]) -> Callable[..., object | None]:
        """A pre_tool_call handler `fn(name, args, ctx)`; `block(reason)` builds the refusal (tools.hooks.Block)."""

        def approval_hook(name: str, args: dict, ctx: object = None, **_: object) -> object | None:
            settings = getattr(ctx, "settings", None) or self.settings
            session_id = getattr(ctx, "session_id", None)
            if name == "terminal":
                command = args.get("command") if isinstance(args, dict) else None
                if not isinstance(command, str) or not command.strip():
                    return None
                kind, isolated = backend_isolation(settings)
                decision = self.check(command, kind, isolated, session_id=session_id)
            elif name in WRITE_TOOLS and isinstance(args, dict):
                paths = write_paths(name, args)
                if not paths:
                    return None
                decision = self.check_write(paths, session_id=session_id, isolated=backend_isolation(settings)[1], tool=name)
            else:
                return None
            if decision.allowed:
                return None
            log.info("approval: blocked %s (%s, %s)", name, decision.pattern_key, decision.via)
            return block(decision.reason)

        return approval_hook

    # -- internals ----------------------------------------------------------------------------------

    def _resolve(self, subject: str, findings: list[Finding], session_id: str | None, kind: str) -> Decision:
        allowed_keys = allowed_pattern_keys(self.allowlist) | self.session_keys(session_id)
        pending = [f for f in findings if f.key not in allowed_keys]
        if not pending:
            return Decision(True, "pattern approved (allowlist or this session)", findings[0].key, "session")
        description = "; ".join(dict.fromkeys(f.description for f in pending))
        key = pending[0].key
        if self.mode == "smart" and self.aux_judge is not None:
            verdict = self._judge(subject, description)
            if verdict == "APPROVE":
                return Decision(True, "approved by the approval model", key, "smart")
            if verdict == "DENY":
                return Decision(False, f"BLOCKED: `{subject}` was not run: the approval model judged it unsafe "
                                       f"({description}). Ask the user to run it themselves if it is really needed.", key, "smart")
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
        if choice == "deny":
            return Decision(False, f"BLOCKED: `{request.command}` was not run: the user denied it or did not answer within "
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
        views = list(views)
        for rule in self.deny_rules:
            if rule in keys:
                return rule
            if _GLOB.search(rule):
                if any(fnmatchcase(v, rule) for v in views):
                    return rule
            elif any(rule in v for v in views):
                return rule
        return None

    def _literal_allowed(self, normalised: str, raw: str) -> bool:
        for entry in self.allowlist:
            target = scan_command(entry).normalised if entry.strip() else ""
            if _GLOB.search(entry):
                if fnmatchcase(normalised, target) or fnmatchcase(raw, entry):
                    return True
            elif normalised == target or raw == " ".join(entry.split()):
                return True
        return False
