"""Text normalisation for the skills guard: invisible and look-alike characters.

A reviewer reads rendered text; the model reads code points. Every character that renders as
nothing (zero-width, variation selectors, Hangul fillers, tag characters, bidi controls) is judged
by where it sits: inside an ASCII word it hides something and is a finding; next to the letters of
a script that needs it (ZWNJ in Persian, ZWJ in Devanagari or emoji, VS16 after an emoji) it is
ordinary writing. `normalise_line` then gives the text the rules match on: invisible characters
removed, fillers turned into spaces, NFKC applied (full-width and math letters become ASCII) and
Cyrillic/Greek look-alikes inside Latin words folded to Latin."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from hermes_agent.intent import CONFUSABLE as _CONFUSABLE  # Latin look-alikes from Cyrillic and Greek

_JOINERS = {0x200C, 0x200D}
_ZERO_WIDTH = {0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180E, 0xFEFF, 0x00AD, 0x034F, 0x17B4, 0x17B5}
_MARKS = {0x200E, 0x200F, 0x061C}  # LRM, RLM, ALM: harmless inside right-to-left text
_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069}
_FILLERS = {0x3164, 0x115F, 0x1160, 0xFFA0}
_RANK = {"low": 1, "medium": 2, "high": 3, "critical": 4}


@dataclass(frozen=True, slots=True)
class CharIssue:
    """Invisible characters of one kind on one line, and how bad that placement is."""

    rule_id: str
    severity: str
    message: str


def is_variation_selector(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def is_tag(cp: int) -> bool:
    return 0xE0000 <= cp <= 0xE007F


def is_invisible(cp: int) -> bool:
    """True for every character that renders as nothing (or as blank space)."""
    return (cp in _JOINERS or cp in _ZERO_WIDTH or cp in _MARKS or cp in _BIDI or cp in _FILLERS
            or is_variation_selector(cp) or is_tag(cp))


def _is_rtl(ch: str) -> bool:
    return unicodedata.bidirectional(ch) in ("R", "AL")


def _ascii_word(ch: str) -> bool:
    return ch.isascii() and not ch.isspace() and ch != ""


def _neighbours(line: str, i: int) -> tuple[str, str]:
    """The nearest visible characters left and right of position i ('' at the ends)."""
    left = next((c for c in reversed(line[:i]) if not is_invisible(ord(c))), "")
    right = next((c for c in line[i + 1:] if not is_invisible(ord(c))), "")
    return left, right


def _inside_ascii(line: str, i: int) -> bool:
    """ASCII text on both sides (or the line's end), with a visible ASCII character on at least one."""
    left, right = _neighbours(line, i)
    return left.isascii() and right.isascii() and (_ascii_word(left) or _ascii_word(right))


def _variation_ok(line: str, i: int) -> bool:
    """One selector after an emoji/symbol (❤️, 1️⃣) or a CJK ideograph picks a glyph; runs of them carry data."""
    prev = line[i - 1] if i else ""
    if prev and is_variation_selector(ord(prev)):
        return False
    nxt = line[i + 1] if i + 1 < len(line) else ""
    if nxt and is_variation_selector(ord(nxt)):
        return False
    return bool(prev) and (not prev.isascii() or prev in "0123456789#*")


def char_issues(line: str, code: bool = False) -> list[CharIssue]:
    """What the invisible characters on this line do; nothing for legitimate writing."""
    found: dict[str, CharIssue] = {}
    rtl = any(_is_rtl(c) for c in line)
    hangul = any(0xAC00 <= ord(c) <= 0xD7A3 or 0x1100 <= ord(c) <= 0x11FF for c in line)

    def add(rule_id: str, severity: str, message: str) -> None:
        prev = found.get(rule_id)
        if prev is None or _RANK[severity] > _RANK[prev.severity]:
            found[rule_id] = CharIssue(rule_id, severity, message)

    for i, ch in enumerate(line):
        cp = ord(ch)
        if cp < 0x80 or not is_invisible(cp) or (cp == 0xFEFF and i == 0):
            continue
        hidden = _inside_ascii(line, i)
        if is_tag(cp):
            add("unicode-tag-chars", "critical", "Unicode tag characters hide instructions no reviewer can see")
        elif cp in _BIDI:
            add("unicode-bidi", "low" if rtl and not code else "high",
                "bidirectional override characters make text read differently than it runs")
        elif cp in _MARKS:
            if hidden and not rtl:
                add("unicode-bidi", "high", "direction marks inside an ASCII word hide how it reads")
        elif is_variation_selector(cp):
            if not _variation_ok(line, i):
                add("unicode-variation-selectors", "high",
                    "variation selectors outside an emoji carry hidden bytes")
        elif cp in _FILLERS:
            if hidden or code or not hangul:
                add("unicode-filler", "high", "Hangul filler renders as blank space and hides words or names")
        elif cp in _JOINERS:
            if hidden:
                add("unicode-zero-width", "high", "zero-width joiner inside an ASCII word hides text")
        else:
            add("unicode-zero-width", "high" if hidden or code else "low",
                "zero-width characters hide text from a reviewer")
    return list(found.values())


def _fold_word(word: str) -> str:
    has_latin = any("a" <= c.lower() <= "z" for c in word)
    foreign = any(0x0370 <= ord(c) <= 0x04FF or c == "ԁ" for c in word)
    return word.translate(_CONFUSABLE) if has_latin and foreign else word


def mixed_script_words(line: str) -> list[str]:
    """Words that mix Latin letters with Cyrillic/Greek look-alikes (`nеvеr` with a Cyrillic е)."""
    return [w for w in line.split() if _fold_word(w) != w]


def normalise_line(line: str) -> str:
    """The text the rules match: invisible removed, fillers as spaces, NFKC, look-alikes folded."""
    if line.isascii():
        return line
    out = []
    for ch in line:
        cp = ord(ch)
        if cp in _FILLERS:
            out.append(" ")
        elif not is_invisible(cp):
            out.append(ch)
    text = unicodedata.normalize("NFKC", "".join(out))
    if text.isascii():
        return text
    return " ".join(_fold_word(w) for w in text.split(" "))


def hidden_payloads(line: str) -> list[tuple[str, str]]:
    """Text smuggled in tag characters or runs of variation selectors, decoded: [(how, text)]."""
    out: list[tuple[str, str]] = []
    tags = "".join(chr(ord(c) - 0xE0000) for c in line if 0xE0020 <= ord(c) <= 0xE007E)
    if tags:
        out.append(("Unicode tag characters", tags))
    data = bytearray()
    for c in line:
        cp = ord(c)
        if 0xFE00 <= cp <= 0xFE0F:
            data.append(cp - 0xFE00)
        elif 0xE0100 <= cp <= 0xE01EF:
            data.append(cp - 0xE0100 + 16)
    if len(data) >= 4:
        out.append(("variation selectors", data.decode("utf-8", errors="replace")))
    return out


def visible(text: str, limit: int = 120) -> str:
    """An excerpt with invisible characters spelled out as <U+XXXX>."""
    out = "".join(f"<U+{ord(c):04X}>" if ord(c) >= 0x80 and is_invisible(ord(c)) else c for c in text.strip())
    return out if len(out) <= limit else out[: limit - 1] + "…"
