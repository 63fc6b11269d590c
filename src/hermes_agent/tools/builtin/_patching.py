"""String replacement for the patch tool: exact match, then line-ending-, trailing-space- and
indentation-tolerant matching; the unique-match rule; a preview of the nearest region on a miss."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from hermes_agent.tools.builtin._fileio import FileToolError

DIFF_MAX_CHARS = 8000
_PREVIEW_SCAN_MAX_LINES = 20000


@dataclass(frozen=True, slots=True)
class Replaced:
    """Outcome of a replacement: the new text, how many regions, which strategy, their start lines."""

    text: str
    count: int
    strategy: str
    lines: tuple[int, ...]


def _rstrip(line: str) -> str:
    return line.rstrip()


def _collapse(line: str) -> str:
    return " ".join(line.split())


LINE_NORMALISERS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("trailing-whitespace", _rstrip),
    ("indentation", _collapse),
)


def replace(text: str, old: str, new: str, *, replace_all: bool = False, path: str = "file") -> Replaced:
    """Replace `old` with `new` in `text` under the unique-match rule; raises FileToolError."""
    if not old:
        raise FileToolError("old_string is empty; to create or overwrite a whole file use write_file")
    if old == new:
        raise FileToolError("old_string and new_string are identical; nothing to change")
    for strategy, o, n in _exact_variants(text, old, new):
        starts = _find_all(text, o)
        if starts:
            lines = tuple(text.count("\n", 0, s) + 1 for s in starts)
            _check_unique(len(starts), lines, replace_all, path)
            count = len(starts) if replace_all else 1
            return Replaced(text.replace(o, n, -1 if replace_all else 1), count, strategy, lines[:count])
    file_lines = text.split("\n")
    old_lines = _block(old)
    for strategy, norm in LINE_NORMALISERS:
        starts = _match_lines(file_lines, old_lines, norm)
        if starts:
            _check_unique(len(starts), tuple(s + 1 for s in starts), replace_all, path)
            chosen = starts if replace_all else starts[:1]
            out = _splice(file_lines, chosen, old_lines, _block(new) if new else [], crlf=_is_crlf(text))
            return Replaced("\n".join(out), len(chosen), strategy, tuple(s + 1 for s in chosen))
    raise not_found(text, old, path)


def _exact_variants(text: str, old: str, new: str) -> list[tuple[str, str, str]]:
    """Exact strings to try: as given, then with line endings converted to the file's."""
    variants = [("exact", old, new)]
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        variants.append(("line-endings", old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")))
    elif "\r\n" not in text and "\r\n" in old:
        variants.append(("line-endings", old.replace("\r\n", "\n"), new.replace("\r\n", "\n")))
    return variants


def _find_all(text: str, needle: str) -> list[int]:
    starts, pos = [], text.find(needle)
    while pos != -1:
        starts.append(pos)
        pos = text.find(needle, pos + len(needle))
    return starts


def _check_unique(count: int, lines: tuple[int, ...], replace_all: bool, path: str) -> None:
    if count > 1 and not replace_all:
        shown = ", ".join(map(str, lines[:20])) + (" ..." if len(lines) > 20 else "")
        raise FileToolError(
            f"old_string matches {count} times in {path} (lines {shown}); include more surrounding "
            "lines to make it unique, or set replace_all=true to change every occurrence",
            match_count=count, lines=list(lines[:50]))


def _block(s: str) -> list[str]:
    """Lines of a snippet without line endings; a single trailing newline does not add a line."""
    lines = s.replace("\r\n", "\n").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _is_crlf(text: str) -> bool:
    return "\r\n" in text and text.count("\r\n") * 2 >= text.count("\n")


def _match_lines(file_lines: list[str], old_lines: list[str], norm: Callable[[str], str]) -> list[int]:
    """Non-overlapping start indexes where `old_lines` equal file lines under `norm`."""
    want = [norm(x) for x in old_lines]
    if not any(want):
        return []
    have = [norm(x) for x in file_lines]
    n, starts, i = len(want), [], 0
    while i <= len(have) - n:
        if have[i:i + n] == want:
            starts.append(i)
            i += n
        else:
            i += 1
    return starts


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(new_lines: list[str], old_lines: list[str], region: list[str]) -> list[str]:
    """Shift `new_lines` from the indentation the model used to the one the file has, mapping each
    indent seen in old_string to the file's indent on the matched line."""
    mapping: dict[str, str] = {}
    for o, f in zip(old_lines, region, strict=False):
        if o.strip() and f.strip():
            mapping.setdefault(_indent(o), _indent(f))
    if all(k == v for k, v in mapping.items()):
        return list(new_lines)
    out = []
    for line in new_lines:
        ind = _indent(line)
        base = max((k for k in mapping if ind.startswith(k)), key=len, default=None)
        out.append(line if base is None or not line.strip() else mapping[base] + line[len(base):])
    return out


def _splice(file_lines: list[str], starts: list[int], old_lines: list[str], new_lines: list[str],
            *, crlf: bool) -> list[str]:
    """Replace each matched region, keeping the file's indentation and line endings."""
    out, prev, n = [], 0, len(old_lines)
    for s in starts:
        region = file_lines[s:s + n]
        repl = _reindent(new_lines, old_lines, [x.rstrip("\r") for x in region])
        if crlf:
            repl = [x + "\r" for x in repl]
        out.extend(file_lines[prev:s])
        if region and not region[-1].endswith("\r") and repl:
            repl[-1] = repl[-1].rstrip("\r")  # the region's last line had no ending of its own
        out.extend(repl)
        prev = s + n
    out.extend(file_lines[prev:])
    return out


def nearest_region(file_lines: list[str], want: list[str]) -> tuple[int, float] | None:
    """(start index, similarity 0..1) of the window of the file most like `want`."""
    n = max(1, len(want))
    if not file_lines or len(file_lines) > _PREVIEW_SCAN_MAX_LINES:
        return None
    target = "\n".join(x.strip() for x in want)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    scored = []
    for i in range(max(1, len(file_lines) - n + 1)):
        matcher.set_seq1("\n".join(x.strip() for x in file_lines[i:i + n]))
        scored.append((matcher.real_quick_ratio() and matcher.quick_ratio(), i))
    best = None
    for _, i in sorted(scored, reverse=True)[:15]:
        matcher.set_seq1("\n".join(x.strip() for x in file_lines[i:i + n]))
        ratio = matcher.ratio()
        if best is None or ratio > best[1]:
            best = (i, ratio)
    return best


def preview(file_lines: list[str], start: int, count: int, pad: int = 2) -> str:
    """Numbered lines around a region, as read_file shows them."""
    lo, hi = max(0, start - pad), min(len(file_lines), start + count + pad)
    return "\n".join(f"{i + 1:>5}|{file_lines[i].rstrip(chr(13))}" for i in range(lo, hi))


def not_found(text: str, old: str, path: str) -> FileToolError:
    """The 0-match error: where the closest text is, so the model can copy it exactly."""
    file_lines, want = text.split("\n"), _block(old)
    best = nearest_region(file_lines, want)
    if best is None or best[1] < 0.3:
        return FileToolError(f"old_string not found in {path}; read_file it and copy the exact text to replace")
    start, ratio = best
    return FileToolError(
        f"old_string not found in {path} (also tried ignoring line endings, trailing spaces and indentation). "
        f"Closest text is at lines {start + 1}-{start + len(want)} ({ratio:.0%} similar); copy it exactly:\n"
        + preview(file_lines, start, len(want)))


def _diff_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(before: str, after: str, path: str) -> str:
    """The change as a unified diff, capped at DIFF_MAX_CHARS."""
    diff = "".join(difflib.unified_diff(
        _diff_lines(before), _diff_lines(after),
        fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}", n=2))
    diff = diff.replace("\r", "")
    if len(diff) > DIFF_MAX_CHARS:
        cut = diff.rfind("\n", 0, DIFF_MAX_CHARS)
        diff = diff[:cut + 1] + f"... [diff truncated: {len(diff) - cut - 1} more chars]\n"
    return diff
