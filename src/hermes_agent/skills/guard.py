"""Skills guard: a static scan of a skill's files for threats, and the trust-aware install policy.

Trust levels: builtin (never refused), trusted (refused on critical findings), community (refused
on any high or critical finding). `force=True` overrides a refusal. Pure: reads files, writes none."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent.skills.guard_rules import HEADER_ARGS, RULES, SEVERITY_RANK

TRUST_LEVELS = ("builtin", "trusted", "community")
TRUSTED_REPOS = ("openai/skills", "anthropics/skills", "huggingface/skills", "nvidia/skills")
MAX_FILES = 50
MAX_TOTAL_BYTES = 2 * 1024 * 1024
MAX_SCAN_BYTES = 512 * 1024
_BINARY_EXT = frozenset({".exe", ".dll", ".so", ".dylib", ".bin", ".msi", ".scr", ".com", ".elf", ".o", ".pyc"})
_EXCERPT = 120

# Invisible characters that hide text from a human reviewer.
_ZERO_WIDTH = {0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180E, 0xFEFF, 0x00AD}
_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C}


@dataclass(frozen=True, slots=True)
class Finding:
    """One match: which rule, how bad, where, and the offending text."""

    rule_id: str
    severity: str
    category: str
    file: str
    line: int
    excerpt: str
    message: str

    def as_dict(self) -> dict:
        return {"rule": self.rule_id, "severity": self.severity, "category": self.category,
                "file": self.file, "line": self.line, "excerpt": self.excerpt, "message": self.message}


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


def _visible(text: str) -> str:
    out = "".join(f"<U+{ord(c):04X}>" if _is_invisible(ord(c)) else c for c in text.strip())
    return out if len(out) <= _EXCERPT else out[: _EXCERPT - 1] + "…"


def _is_invisible(cp: int) -> bool:
    return cp in _ZERO_WIDTH or cp in _BIDI or 0xE0000 <= cp <= 0xE007F


def _hidden_codepoints(line: str, first_line: bool) -> list[int]:
    out: list[int] = []
    for i, ch in enumerate(line):
        cp = ord(ch)
        if cp <= 0x7F or (cp == 0xFEFF and i == 0 and first_line):
            continue
        # A zero-width joiner between two pictographs builds one emoji (e.g. a family); it hides nothing.
        if cp == 0x200D and 0 < i < len(line) - 1 and ord(line[i - 1]) >= 0x2000 and ord(line[i + 1]) >= 0x2000:
            continue
        out.append(cp)
    return out


def _unicode_findings(line: str, rel: str, lineno: int) -> list[Finding]:
    cps = _hidden_codepoints(line, lineno == 1)
    out: list[Finding] = []
    if any(0xE0000 <= cp <= 0xE007F for cp in cps):
        out.append(Finding("unicode-tag-chars", "critical", "invisible_unicode", rel, lineno, _visible(line),
                           "Unicode tag characters hide instructions no reviewer can see"))
    if any(cp in _BIDI for cp in cps):
        out.append(Finding("unicode-bidi", "high", "invisible_unicode", rel, lineno, _visible(line),
                           "bidirectional override characters make text read differently than it runs"))
    if any(cp in _ZERO_WIDTH for cp in cps):
        out.append(Finding("unicode-zero-width", "high", "invisible_unicode", rel, lineno, _visible(line),
                           "zero-width characters hide text from a reviewer"))
    return out


def scan_text(text: str, rel: str = "SKILL.md") -> list[Finding]:
    """Findings of every rule (and invisible-Unicode checks) on one file's text."""
    findings: list[Finding] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        blind: str | None = None
        for rule in RULES:
            subject = line
            if rule.header_blind:
                blind = HEADER_ARGS.sub(" ", line) if blind is None else blind
                subject = blind
            if rule.pattern.search(subject):
                findings.append(Finding(rule.id, rule.severity, rule.category, rel, lineno, _visible(line),
                                        rule.message))
        if not line.isascii():
            findings.extend(_unicode_findings(line, rel, lineno))
    return _dedupe(findings)


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
    if b"\x00" in head:
        return []
    return scan_text(head.decode("utf-8", errors="replace"), rel)


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
    if force:
        return Decision(True, f"forced past {len(blocking)} {floor}+ finding(s)", blocking)
    return Decision(False, f"{trust} skill refused: {len(blocking)} finding(s) at {floor} or worse "
                    "(re-run with --force to install anyway)", blocking)
