"""Threat scan for text that ends up in the system prompt: prompt-injection phrases, role tags,
invisible Unicode and secret shapes, the phrases also read with disguises undone (hermes_agent.intent.views:
`1gn0re pr3v10us 1nstruct10ns`, `i g n o r e`, Cyrillic look-alikes). Pure functions; callers decide whether to
refuse or drop."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_agent import lazyre

# Zero-width, bidi-override and Unicode "tag" characters: invisible to a reviewer, read by the model.
_INVISIBLE = lazyre.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")

_INJECTION: tuple[tuple[str, lazyre.LazyPattern], ...] = tuple(
    (label, lazyre.compile(rx, re.IGNORECASE | re.MULTILINE))
    for label, rx in (
        ("ignore-previous-instructions",
         r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+)*"
         r"(previous|prior|above|earlier|preceding|system)\s+(instructions|prompts?|rules|messages|context)"),
        ("new-instructions", r"\b(new|updated|real)\s+system\s+(prompt|instructions)\s*[:=]"),
        ("role-reassignment",
         r"\byou\s+are\s+now\s+(a|an)\s+(new|different|unrestricted|unfiltered|jailbroken)\b"
         r"|\byou\s+are\s+no\s+longer\s+(bound|restricted|an?\s+ai)\b|\bno\s+restrictions\s+apply\b"),
        ("hidden-from-user", r"\bdo\s+not\s+(tell|inform|reveal\s+to|mention\s+to)\s+the\s+user\b"),
        ("role-tag", r"<\|?\s*/?\s*(im_start|im_end|system|endoftext|assistant)\s*\|?>|\[/?INST\]|<</?SYS>>"),
        ("role-tag", r"^\s*#{0,3}\s*(system|assistant)\s*:\s*$"),
        ("exfiltration", r"\b(curl|wget|nc)\b[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD)"),
        ("exfiltration", r"\bcat\s+\S*(\.env|id_rsa|\.ssh/\S*|credentials)\b"),
    )
)

_SECRETS: tuple[tuple[str, lazyre.LazyPattern], ...] = tuple(
    (label, lazyre.compile(rx))
    for label, rx in (
        ("OpenAI/Anthropic-style API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"),
        ("GitHub token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"),
        ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("private key block", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        ("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
        ("HuggingFace token", r"\bhf_[A-Za-z0-9]{30,}"),
    )
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One suspicious match: `kind` is injection | invisible | secret; `label` names the pattern."""

    kind: str
    label: str


# Zero-width (non-)joiners that Persian, Arabic-script and Indic spelling needs (ZWNJ in می‌دهد, ZWJ in conjuncts):
# between two letters of a non-Latin script they are spelling, not a disguise.
_SPELLING_JOINER = lazyre.compile(r"(?<=[^\W\d_a-zA-Z\u00c0-\u024f])[\u200c\u200d](?=[^\W\d_a-zA-Z\u00c0-\u024f])")


def invisible_chars(text: str) -> int:
    """How many invisible/bidi control characters the text holds (joiners that spell a non-Latin word excepted)."""
    return len(_INVISIBLE.findall(_SPELLING_JOINER.sub("", text)))


def strip_invisible(text: str) -> str:
    """The text without invisible/bidi control characters."""
    return _INVISIBLE.sub("", text)


# Something a disguise could hide behind: non-ASCII, a digit or @/$ touching a letter, single letters spaced out.
_DISGUISE = lazyre.compile(r"[^\x00-\x7f]|[A-Za-z][0-9@$|]|[0-9@$|][A-Za-z]|(?<![\w])\w \w(?![\w])")


def _readings(text: str) -> tuple[str, ...]:
    """`text` as written and with its disguises undone (intent.views: leetspeak, spaced letters, look-alikes);
    the views are only built when the text holds something to undo (context files are read line by line)."""
    if not _DISGUISE.search(text):
        return (text,)
    from hermes_agent.intent import views

    return (text, *views(text))


def injection_findings(text: str) -> list[Finding]:
    """Prompt-injection phrases, role tags and invisible characters found in `text` (in any of its readings)."""
    readings = _readings(text)
    found = [Finding("injection", label) for label, rx in _INJECTION if any(rx.search(r) for r in readings)]
    if invisible_chars(text):
        found.append(Finding("invisible", "invisible Unicode characters"))
    return found


def secret_findings(text: str) -> list[Finding]:
    """Credential shapes (API keys, tokens, private keys) found in `text`."""
    return [Finding("secret", label) for label, rx in _SECRETS if rx.search(text)]


def scan(text: str) -> list[Finding]:
    """All findings: injection, invisible characters and secrets (deduplicated, in order)."""
    out: list[Finding] = []
    for f in injection_findings(text) + secret_findings(text):
        if f not in out:
            out.append(f)
    return out


def line_is_suspicious(line: str) -> bool:
    """True when a line matches an injection phrase or role tag (drops lines from context files,
    where commands that use $TOKEN variables are ordinary project documentation)."""
    readings = _readings(line)
    return any(rx.search(r) for label, rx in _INJECTION if label != "exfiltration" for r in readings)
