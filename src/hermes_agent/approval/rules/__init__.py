"""Dangerous-command detection (layer 2, pure): a pattern table applied to a normalised command.
Public: detect_dangerous_command, detect_hardline_command, scan_command, classify_sensitive_path, one_line."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hermes_agent.approval.rules.analyse import Scanner
from hermes_agent.approval.rules.budget import UNFINISHED, UNFINISHED_KEY, Unfinished, budget
from hermes_agent.approval.rules.lexer import clean
from hermes_agent.approval.rules.table import DANGEROUS_RULES, HARDLINE_RULES, TEXT_RULES, Rule
from hermes_agent.approval.rules.targets import classify_path as classify_sensitive_path

MAX_COMMAND_CHARS = 1_000_000

__all__ = [
    "DANGEROUS_RULES", "HARDLINE_RULES", "TEXT_RULES", "Finding", "Rule", "Scan", "classify_sensitive_path",
    "detect_dangerous_command", "detect_hardline_command", "one_line", "scan_command", "scan_files", "scan_state",
]


@dataclass(frozen=True, slots=True)
class Finding:
    """One matched pattern: its stable key, a human description, and whether it is always refused."""

    key: str
    description: str
    hardline: bool = False


@dataclass(frozen=True, slots=True)
class Scan:
    """Everything found in one command. `views` are normalised forms for deny rules (with
    wrappers and without); `compound` is True for pipelines, lists, redirections and substitutions."""

    findings: tuple[Finding, ...]
    views: tuple[str, ...]
    compound: bool
    normalised: str

    @property
    def hardline(self) -> Finding | None:
        return next((f for f in self.findings if f.hardline), None)

    @property
    def dangerous(self) -> Finding | None:
        return self.hardline or (self.findings[0] if self.findings else None)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.findings)


def analyse_command(command: str) -> Scan:
    """Scan one command (uncached; the public helpers below cache)."""
    text = clean(command)
    scanner = Scanner(views=True)
    if len(text) > MAX_COMMAND_CHARS:
        scanner.add("oversized_command", f"command longer than {MAX_COMMAND_CHARS} characters; too large to inspect")
    else:
        _judge(scanner, text)
    findings = tuple(Finding(k, one_line(d), h) for k, d, h in scanner.findings)
    views = tuple(dict.fromkeys([" ".join(text.split()), *scanner.views]))
    normalised = views[1] if scanner.top_commands == 1 and len(views) > 1 else views[0]
    return Scan(findings, views, scanner.top_compound, normalised)


def scan_files(command: str, reader: object, hooks: str = "", lister: object = None) -> tuple[Finding, ...]:
    """Findings in the workspace files `command` runs (approval/rules/workfiles.py), read through `reader`;
    only those, not the command's own (scan_command has them). `hooks`: shell text the session's exported
    variables make its programs run as well (state.hook_text), judged alike. `lister(path, base, picks)`: the
    test files a test runner collects under `path` (workfiles.WorkFiles)."""
    text = clean(command)
    if len(text) > MAX_COMMAND_CHARS:
        return ()
    scanner = Scanner()
    scanner.reader = reader
    scanner.lister = lister
    _judge(scanner, text)
    if hooks:
        before = len(scanner.findings)
        _judge(scanner, clean(hooks))
        scanner.findings[before:] = [(k, f"a variable the session exported runs: {d}", h)
                                     for k, d, h in scanner.findings[before:]]
    own = set(scan_command(command).keys)
    return tuple(Finding(k, one_line(d), h) for k, d, h in scanner.findings if k not in own)


def scan_state(command: str, state: str) -> tuple[Finding, ...]:
    """Findings of `command` given the aliases and functions of the session's saved shell `state` (state.py):
    what a bare word defined there expands to, and code the state runs by itself (statecode.py). Only those
    beyond scan_command's own."""
    from hermes_agent.approval.rules.expand import ShellEnv
    from hermes_agent.approval.rules.state import relevant
    from hermes_agent.approval.rules.statecode import foreign_code

    if code := foreign_code(state):  # written into the state channel by a command: it runs before every call
        return (Finding("shell_state_code", f"the session's saved shell state runs code of its own before every "
                                            f"command ({one_line(code)}): a command wrote it there, not the shell; "
                                            "start a new session"),)
    text = clean(command)
    prelude = relevant(state, text) if len(text) <= MAX_COMMAND_CHARS else ""
    if not prelude:
        return ()
    env = ShellEnv()
    scanner = Scanner()
    with budget():
        try:
            Scanner().text(clean(prelude), env=env)  # definitions only: what they would do when defined is not asked
        except Unfinished as exc:
            scanner.add(UNFINISHED_KEY, exc.args[0] if exc.args else UNFINISHED)
        else:
            _judge(scanner, text, env)
    own = set(scan_command(command).keys)
    return tuple(Finding(k, one_line(d), h) for k, d, h in scanner.findings if k not in own)


def _judge(scanner: Scanner, text: str, env: object = None) -> None:
    """Scan `text` within the judgement's time budget; past it, a finding that asks (fail closed)."""
    with budget():
        try:
            scanner.text(text, env=env)  # type: ignore[arg-type]
        except Unfinished as exc:
            scanner.add(UNFINISHED_KEY, exc.args[0] if exc.args else UNFINISHED)


def one_line(text: str, limit: int = 200) -> str:
    """`text` as one line of bounded length, for verdicts: finding descriptions here, and the command itself in
    the gate's BLOCKED messages (a multi-line command would otherwise break the line)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


@lru_cache(maxsize=1024)
def warm() -> None:
    """Compile the rule tables now (a background warm-up ahead of the first command: bootstrap/warm.py)."""
    from hermes_agent.approval.rules.analyse import _index

    _index()
    analyse_command("cd /tmp && ls -la | head -n 5")


def scan_command(command: str) -> Scan:
    """Scan one command (cached: the gate asks about the same command several times)."""
    return analyse_command(command)


def detect_dangerous_command(command: str) -> tuple[bool, str | None, str | None]:
    """(is_dangerous, pattern_key, description); hardline commands count as dangerous."""
    f = scan_command(command).dangerous
    return (True, f.key, f.description) if f else (False, None, None)


def detect_hardline_command(command: str) -> tuple[bool, str | None, str | None]:
    """(is_hardline, pattern_key, description) for the few commands refused even with --yolo."""
    f = scan_command(command).hardline
    return (True, f.key, f.description) if f else (False, None, None)
