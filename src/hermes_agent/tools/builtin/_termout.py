"""Shaping terminal output for the model: strip terminal escape codes, shorten overlong lines,
and cap lines/bytes keeping head and tail with a marker that says exactly what was cut."""

from __future__ import annotations

from hermes_agent import lazyre

# CSI sequences, OSC sequences (terminated by BEL or ST), and single-character escapes.
_ANSI = lazyre.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_HEAD_SHARE = 0.4  # the tail (errors, summaries) usually matters more than the head


def strip_ansi(text: str) -> str:
    """`text` without colour/cursor escape sequences and stray carriage returns before newlines."""
    return _ANSI.sub("", text).replace("\r\n", "\n")


def _shorten_lines(lines: list[str], max_len: int) -> list[str]:
    if max_len <= 0:
        return lines
    return [ln if len(ln) <= max_len else f"{ln[:max_len]}… [+{len(ln) - max_len} chars]" for ln in lines]


def cap_output(text: str, *, max_bytes: int = 50_000, max_lines: int = 2_000, max_line_length: int = 2_000) -> str:
    """Output within the limits; when cut, head and tail are kept around one explicit marker."""
    text = strip_ansi(text)
    lines = _shorten_lines(text.split("\n"), max_line_length)
    total_lines = len(lines) - (1 if text.endswith("\n") else 0)
    total_bytes = len(text.encode("utf-8", "replace"))
    cut_lines = 0
    if max_lines > 0 and total_lines > max_lines:
        head_n = int(max_lines * _HEAD_SHARE)
        tail_n = max_lines - head_n
        cut_lines = total_lines - head_n - tail_n
        head, tail = lines[:head_n], lines[-tail_n:] if tail_n else []
    else:
        head, tail = lines, []
    head_text, tail_text = "\n".join(head), "\n".join(tail)
    size = len(head_text.encode()) + len(tail_text.encode())
    if max_bytes > 0 and size > max_bytes:
        joined = (head_text + ("\n" if tail else "") + tail_text).encode("utf-8", "replace")
        head_b = int(max_bytes * _HEAD_SHARE)
        tail_b = max_bytes - head_b
        head_text = joined[:head_b].decode("utf-8", "ignore")
        tail_text = joined[-tail_b:].decode("utf-8", "ignore") if tail_b else ""
        tail = [tail_text]
    elif not cut_lines:
        return head_text
    kept = len(head_text.encode()) + len(tail_text.encode())
    omitted_lines = total_lines - _count_lines(head_text) - _count_lines(tail_text)
    marker = (f"\n\n[... output truncated: {max(omitted_lines, 0)} lines / "
              f"{max(total_bytes - kept, 0)} bytes omitted of {total_lines} lines / {total_bytes} bytes; "
              f"redirect to a file and read parts of it (grep, head, tail) to see more ...]\n\n")
    return head_text + marker + tail_text


def _count_lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0
