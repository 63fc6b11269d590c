"""Find-and-replace for skill files: unique match, replace_all, whitespace-tolerant fallback, helpful errors."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

_PREVIEW_LINES = 40
_PREVIEW_CHARS = 2000


class PatchError(ValueError):
    """The patch could not be applied; `extra` carries what the model needs to retry."""

    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra


@dataclass(frozen=True, slots=True)
class PatchOutcome:
    """The patched text, how many places changed, and whether whitespace-tolerant matching was used."""

    text: str
    replaced: int
    fuzzy: bool = False
    lines: tuple[int, ...] = field(default=())


def preview(text: str) -> str:
    """The start of a file with line numbers, for a not-found error."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(text.splitlines()[:_PREVIEW_LINES], 1):
        row = f"{i:4d}| {line}"
        if used + len(row) > _PREVIEW_CHARS:
            out.append("   …| (truncated)")
            break
        out.append(row)
        used += len(row) + 1
    return "\n".join(out)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _loose_pattern(old: str) -> re.Pattern[str] | None:
    tokens = old.split()
    if not tokens:
        return None
    return re.compile(r"\s+".join(re.escape(t) for t in tokens))


def _closest(text: str, old: str) -> str | None:
    first = next((ln.strip() for ln in old.splitlines() if ln.strip()), "")
    if not first:
        return None
    candidates = [ln.strip() for ln in text.splitlines() if ln.strip()]
    best = difflib.get_close_matches(first, candidates, n=1, cutoff=0.6)
    return best[0] if best else None


def _replace_spans(text: str, spans: list[tuple[int, int]], new: str) -> str:
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(new)
        last = end
    parts.append(text[last:])
    return "".join(parts)


def apply_patch(text: str, old: str, new: str, *, replace_all: bool = False) -> PatchOutcome:
    """Replace `old` with `new` in `text`; PatchError when missing or (without replace_all) ambiguous."""
    if not old:
        raise PatchError("old_string must not be empty")
    if old == new:
        raise PatchError("old_string and new_string are identical; nothing to change")
    spans = [(m.start(), m.end()) for m in re.finditer(re.escape(old), text)]
    fuzzy = False
    if not spans:
        pattern = _loose_pattern(old)
        spans = [(m.start(), m.end()) for m in pattern.finditer(text)] if pattern else []
        fuzzy = bool(spans)
    if not spans:
        hint = _closest(text, old)
        raise PatchError(
            "old_string not found (also tried ignoring whitespace differences). Copy the exact text "
            "from the file preview below or skill_view the file.",
            closest_line=hint, preview=preview(text))
    lines = tuple(_line_of(text, s) for s, _ in spans)
    if len(spans) > 1 and not replace_all:
        raise PatchError(
            f"old_string matches {len(spans)} places (lines {', '.join(map(str, lines[:10]))}); include more "
            "surrounding text to make it unique, or set replace_all=true",
            match_count=len(spans))
    return PatchOutcome(_replace_spans(text, spans, new), len(spans), fuzzy, lines)
