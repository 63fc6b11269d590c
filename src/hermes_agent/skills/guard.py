"""Skills guard: a static scan of a skill's files for threats, and the trust-aware install policy.

Trust levels: builtin (never refused), trusted (refused on critical findings), community (refused
on any high or critical finding). `force=True` overrides a refusal for high findings, never critical ones. Pure: reads files, writes none."""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import lazyre
from hermes_agent.skills.guard_code import combo_hits, is_code
from hermes_agent.skills.guard_decode import SENSITIVE_NAMES, Payload, payloads, split_names, views
from hermes_agent.skills.guard_normalise import (
    char_issues,
    hidden_payloads,
    mixed_script_words,
    normalise_line,
    visible,
)
from hermes_agent.skills.guard_prose import (
    PROSE_RULES,
    example_lines,
    hidden_blocks,
    instructs,
    negated,
    paragraphs,
    quoted_mention,
)
from hermes_agent.skills.guard_rules import RULES, SEVERITY_RANK, Finding, blind

__all__ = ["Decision", "Finding", "ScanReport", "decide", "scan_skill", "scan_text", "trust_for_source"]

TRUST_LEVELS = ("builtin", "trusted", "community")
TRUSTED_REPOS = ("openai/skills", "anthropics/skills", "huggingface/skills", "nvidia/skills")
MAX_FILES = 50
MAX_TOTAL_BYTES = 2 * 1024 * 1024
MAX_SCAN_BYTES = 512 * 1024
_BINARY_EXT = frozenset({".exe", ".dll", ".so", ".dylib", ".bin", ".msi", ".scr", ".com", ".elf", ".o", ".pyc"})
_MAX_DEPTH = 3
# In decoded text, anything that runs a program means the encoding was there to hide it.
_RUNS = lazyre.compile(r"\b(?:os\.system|os\.popen|os\.exec\w*|subprocess\.\w+|exec\s*\(|eval\s*\(|child_process|execSync|"
                   r"spawn\s*\(|Runtime\.getRuntime|/bin/(?:ba)?sh\b|(?:ba)?sh\s+-c\b|Invoke-Expression)")


@dataclass(frozen=True, slots=True)
class ScanReport:
    """All findings for one skill."""

    findings: tuple[Finding, ...]

    @property
    def max_severity(self) -> str | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__)

    def at_least(self, severity: str) -> list[Finding]:
        """Findings of `severity` or worse."""
        floor = SEVERITY_RANK[severity]
        return [f for f in self.findings if SEVERITY_RANK[f.severity] >= floor]

    def summary(self) -> str:
        """e.g. '2 critical, 1 medium' or 'clean'."""
        counts = {s: sum(1 for f in self.findings if f.severity == s) for s in ("critical", "high", "medium", "low")}
        return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "clean"


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether an install may proceed, and why."""

    allowed: bool
    reason: str
    blocking: tuple[Finding, ...] = ()


class _File:
    """One file being scanned: where findings go and how to quote a line."""

    def __init__(self, rel: str, raw: list[str], code: bool) -> None:
        self.rel, self.raw, self.code = rel, raw, code
        self.out: list[Finding] = []

    def add(self, rule_id: str, severity: str, category: str, line: int, message: str, excerpt: str = "") -> None:
        quote = excerpt or (self.raw[line - 1] if 0 < line <= len(self.raw) else "")
        self.out.append(Finding(rule_id, severity, category, self.rel, line, visible(quote), message))


def _line_rules(f: _File, lines: list[str], blinded: list[str], note: str = "", base: list[str] | None = None) -> None:
    todo = [n for n, line in enumerate(lines) if line.strip() and (base is None or base[n] != line)]
    if not todo:
        return  # a view that rewrote nothing was scanned already
    text, blind_text = "\n".join(lines[n] for n in todo), "\n".join(blinded[n] for n in todo)
    for rule in RULES:
        whole = blind_text if rule.header_blind else text
        if rule.anywhere is not None and not rule.anywhere.search(whole):
            continue
        for n in todo:
            if rule.pattern.search(blinded[n] if rule.header_blind else lines[n]):
                f.add(rule.id, rule.severity, rule.category, n + 1, rule.message + note)


def _unicode(f: _File) -> None:
    for lineno, line in enumerate(f.raw, 1):
        if line.isascii():
            continue
        for issue in char_issues(line, f.code):
            f.add(issue.rule_id, issue.severity, "invisible_unicode", lineno, issue.message)
        if words := mixed_script_words(line):
            f.add("unicode-homoglyph", "high" if f.code else "medium", "invisible_unicode", lineno,
                  f"Latin words spelled with Cyrillic/Greek look-alike letters: {' '.join(words[:3])}")


def _prose(f: _File, lines: list[str], quoting: bool) -> None:
    examples = example_lines(lines) if quoting else set()
    for first, text, offsets in paragraphs(lines):
        for rule in PROSE_RULES:
            for m in rule.pattern.finditer(text):
                if negated(text, m.start()):
                    continue
                lineno = first + bisect.bisect_right(offsets, m.start()) - 1
                if rule.quotable and (lineno in examples or quoted_mention(text, m.start())):
                    f.add(rule.id, "low", rule.category, lineno, rule.message + " (quoted as an example)")
                else:
                    f.add(rule.id, rule.severity, rule.category, lineno, rule.message)
                break


_QUOTED = lazyre.compile(r'"[^"\n]*"|“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]|`[^`\n]*`')


def _intents(f: _File, raw: list[str], examples: set[int]) -> None:
    """Injected-instruction intents in any language (hermes_agent.intent). A procedure's body may say
    "always run the tests" and quote attacks as examples; the description, which enters every system
    prompt, may do neither."""
    from hermes_agent.intent import scan as intent_scan

    fenced = False
    for n, line in enumerate(raw, 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        described = line.lstrip().lower().startswith("description:")
        if not described and (fenced or n in examples or line.lstrip().startswith(">")):
            continue
        text = line if described else _QUOTED.sub(" ", line)  # a quoted attack is an example, not an order
        for hit in intent_scan(text):
            if hit.kind.startswith("standing") and not described:
                continue
            where = "the description (it enters every system prompt)" if described else "the text"
            f.add(f"intent-{hit.kind.split()[0]}", "high", "injection", n, f"{where} {hit.kind}")


def _chains(f: _File, lines: list[str]) -> None:
    """What the file wants, judged by its parts (hermes_agent.intent_chain) in a paragraph and its neighbour,
    whatever the wording: network + execution + concealment or a standing trigger ("before anything else"),
    persistence of network code (a shell rc line, a cron entry), credentials into the reply, an override kept
    from the user. A code file is one piece (its parts may be anywhere in it) judged by what it does only."""
    from hermes_agent.intent_chain import ALL_KINDS, CODE_KINDS, scan_joined

    starts, pieces, cur = [], [], []
    for n, line in enumerate(lines + [""], 1):
        if line.strip() and not f.code:
            cur.append((n, line))
        elif cur and not f.code:
            starts.append(cur[0][0])
            pieces.append("\n".join(t for _, t in cur))
            cur = []
    if f.code:
        starts, pieces = [1], ["\n".join(lines)]
    seen: set[str] = set()
    for i, chains in sorted(scan_joined(pieces, 1, CODE_KINDS if f.code else ALL_KINDS).items()):
        for chain in chains:
            if chain.kind not in seen:
                seen.add(chain.kind)
                f.add("intent-chain", "high", "injection", starts[i], f"{chain.kind}: {chain.quote[:120]}")


def _hidden_markup(f: _File, text: str) -> None:
    for lineno, content in hidden_blocks(text):
        if instructs(content):
            f.add("hidden-instruction", "high", "injection", lineno,
                  "instructions inside an HTML comment or hidden markup: the model reads them, a reviewer does not",
                  content)


def _payloads(f: _File, lines: list[str], raw: list[str], depth: int) -> None:
    found = payloads(lines) + split_names(lines)
    found += [Payload(n, how, text) for n, line in enumerate(raw, 1) for how, text in hidden_payloads(line)]
    for p in found:
        if p.how == "split string literals" and p.text.strip().lower() in SENSITIVE_NAMES:
            f.add("obf-split-name", "critical", "obfuscation", p.line,
                  f"{p.text.strip()!r} is written in pieces so a scanner cannot read it")
        if depth >= _MAX_DEPTH:
            continue
        worst = _worst_inside(p.text, depth + 1)
        if worst is not None:
            f.add("obf-hidden-payload", "critical", "obfuscation", p.line,
                  f"{p.how} hide text that {worst}: {visible(p.text, 80)}")
        elif p.how != "split string literals" and _RUNS.search(p.text):
            f.add("obf-hidden-payload", "critical", "obfuscation", p.line,
                  f"{p.how} hide code that runs programs: {visible(p.text, 80)}")


@functools.lru_cache(maxsize=4096)
def _worst_inside(text: str, depth: int) -> str | None:
    """The message of the worst medium-or-worse finding in decoded text (decoded text is code)."""
    inner = _scan(text, "decoded", depth)
    worst = max(inner, key=lambda x: SEVERITY_RANK[x.severity], default=None)
    return worst.message if worst is not None and SEVERITY_RANK[worst.severity] >= 2 else None


def _scan(text: str, rel: str, depth: int = 0) -> list[Finding]:
    raw = text.splitlines()
    f = _File(rel, raw, depth > 0 or is_code(rel, text))
    norm = [normalise_line(line) for line in raw]
    if depth == 0:
        _unicode(f)
    rewritten = views(norm)
    _line_rules(f, norm, [blind(line) for line in norm])
    for (how, view), (_, blind_view) in zip(rewritten, views([blind(line) for line in norm]), strict=True):
        _line_rules(f, view, blind_view, f" (after {how})", norm)
    _prose(f, norm, quoting=not f.code)
    for view_text in {"\n".join(norm), *("\n".join(v) for how, v in rewritten if how != "quotes removed")}:
        for rule, lineno in combo_hits(view_text):
            f.add(rule.id, rule.severity, rule.category, lineno, rule.message)
    if not f.code:
        _hidden_markup(f, "\n".join(raw))
        if depth == 0:
            _intents(f, raw, example_lines(norm))
    if depth == 0:
        _chains(f, norm)
    _payloads(f, norm, raw, depth)
    return f.out


def scan_text(text: str, rel: str = "SKILL.md") -> list[Finding]:
    """Findings of every rule on one file's text: normalised, decoded and rescanned."""
    return _dedupe(_scan(text, rel))


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    # A credential read that is also sent out is reported once, as the worse finding.
    by_line: dict[tuple[str, int, str], Finding] = {}
    order: list[Finding] = []
    for f in findings:
        key = (f.file, f.line, f.category)
        prev = by_line.get(key)
        if prev is None:
            by_line[key] = f
            order.append(f)
        elif SEVERITY_RANK[f.severity] > SEVERITY_RANK[prev.severity]:
            order[order.index(prev)] = f
            by_line[key] = f
    return order


def scan_skill(skill_dir: Path) -> ScanReport:
    """Scan every file of a skill directory (text rules + structure checks)."""
    findings: list[Finding] = []
    total = 0
    files: list[Path] = []
    for root, dirs, names in os.walk(skill_dir):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        files.extend(Path(root) / n for n in sorted(names))
    for path in files:
        rel = path.relative_to(skill_dir).as_posix()
        if path.is_symlink():
            findings.append(Finding("struct-symlink", "high", "structure", rel, 0, os.readlink(path),
                                    "symlink inside a skill can point anywhere on the machine"))
            continue
        size = path.stat().st_size
        total += size
        findings.extend(_scan_file(path, rel, size))
    if len(files) > MAX_FILES:
        findings.append(Finding("struct-too-many-files", "medium", "structure", ".", 0, f"{len(files)} files",
                                f"more than {MAX_FILES} files"))
    if total > MAX_TOTAL_BYTES:
        findings.append(Finding("struct-too-large", "medium", "structure", ".", 0, f"{total} bytes",
                                f"skill is larger than {MAX_TOTAL_BYTES} bytes"))
    return ScanReport(tuple(findings))


def _scan_file(path: Path, rel: str, size: int) -> list[Finding]:
    with open(path, "rb") as fh:
        head = fh.read(min(size, MAX_SCAN_BYTES))
    if path.suffix.lower() in _BINARY_EXT or head[:4] == b"\x7fELF" or head[:2] == b"MZ":
        return [Finding("struct-binary", "high", "structure", rel, 0, path.name,
                        "executable or binary file shipped inside a skill")]
    text = head.decode("utf-8", errors="replace")
    if b"\x00" in head:
        if not is_code(rel, text):
            return []
        return [Finding("struct-binary", "high", "structure", rel, 0, path.name,
                        "a script with NUL bytes cannot be reviewed as text")]
    out = scan_text(text, rel)
    if size > MAX_SCAN_BYTES:
        out.append(Finding("struct-unscanned", "high", "structure", rel, 0, f"{size} bytes",
                           f"only the first {MAX_SCAN_BYTES} bytes were scanned; the rest could hide anything"))
    return out


def trust_for_source(source: str, trusted: Iterable[str] = ()) -> str:
    """'trusted' for the well-known skill repos and user-trusted taps, else 'community'."""
    low = source.lower().rstrip("/").removesuffix(".git")
    repos = tuple(TRUSTED_REPOS) + tuple(t.lower().rstrip("/").removesuffix(".git") for t in trusted)
    if any(low == r or low.endswith("/" + r) or low.endswith(":" + r) for r in repos):
        return "trusted"
    return "community"


def decide(report: ScanReport, trust: str, *, force: bool = False) -> Decision:
    """Install policy: builtin always; trusted refused on critical; community refused on high or worse."""
    if trust == "builtin":
        return Decision(True, "builtin skill")
    floor = "critical" if trust == "trusted" else "high"
    blocking = tuple(report.at_least(floor))
    if not blocking:
        return Decision(True, f"{trust} skill, scan {report.summary()}")
    critical = tuple(report.at_least("critical"))
    if force and not critical:
        return Decision(True, f"forced past {len(blocking)} {floor}+ finding(s)", blocking)
    if critical:  # as Hermes: --force never installs past a critical finding
        return Decision(False, f"{trust} skill refused: {len(critical)} critical finding(s); --force does not "
                        "override critical findings", blocking)
    return Decision(False, f"{trust} skill refused: {len(blocking)} finding(s) at {floor} or worse "
                    "(re-run with --force to install anyway)", blocking)
