"""read_file's paging: numbered lines from a window of a text file, capped in characters. Memory stays
bounded whatever the file or line length: the local backend's files are scanned in chunks keeping only
the window's lines (each cut to its char cap); other backends page huge files with cut+sed remotely."""

from __future__ import annotations

import shlex
from typing import BinaryIO

from hermes_agent.terminal.base import TerminalBackend
from hermes_agent.tools.builtin._fileio import (
    LOAD_MAX_BYTES,
    FileToolError,
    human_size,
    os_error,
    read_head,
    resolve,
    stat_file,
)

MAX_LIMIT = 2000
_CHUNK = 1 << 20
Kept = tuple[bytes, int]  # (the first bytes of a line, its whole length in bytes)


def _lines_of(data: bytes) -> list[str]:
    """Lines as sed/grep count them: split on LF only, CR of CRLF dropped."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [x[:-1] if x.endswith("\r") else x for x in lines]


def _sed_window(backend: TerminalBackend, path: str, first: int, count: int,
                max_bytes: int) -> tuple[list[str], bool]:
    """Lines first..first+count-1 of a huge file; sed quits after the window, head bounds the bytes."""
    last = first + count - 1
    keep = max_bytes // max(1, count) + 4096  # cut bounds each line first: sed would buffer a 1 GB line whole
    cmd = f"cut -b 1-{keep} -- {shlex.quote(path)} | sed -n '{first},{last}p;{last}q' | head -c {max_bytes}"
    res = backend.execute(cmd, timeout=60)
    if res.exit_code != 0 and not res.output:
        raise FileToolError(f"Failed reading {path}: sed exited {res.exit_code}")
    data = res.output.encode("utf-8", errors="replace")
    lines = _lines_of(data)
    cut = len(data) >= max_bytes
    if cut and lines:
        lines.pop()  # the last line was cut by the byte bound
    return lines, cut


def _scan(fh: BinaryIO, first: int, last: int, keep: int, count_all: bool) -> tuple[list[Kept], int | None]:
    """Lines first..last of an open file read in chunks, each kept to `keep` bytes, and the total line
    count when `count_all` (else None: the scan stops after the window)."""
    lineno, window, buf, size, tail_nl, empty = 1, [], bytearray(), 0, True, True
    while chunk := fh.read(_CHUNK):
        empty, tail_nl, pos = False, chunk.endswith(b"\n"), 0
        while pos < len(chunk):
            if lineno < first:
                seen = chunk.count(b"\n", pos)
                if lineno + seen < first:
                    lineno += seen
                    break
                for _ in range(first - lineno):
                    pos = chunk.index(b"\n", pos) + 1
                lineno = first
                continue
            if lineno > last:
                if not count_all:
                    return window, None
                lineno += chunk.count(b"\n", pos)
                break
            nl = chunk.find(b"\n", pos)
            end = len(chunk) if nl < 0 else nl
            if len(buf) < keep:
                buf += chunk[pos:min(end, pos + keep - len(buf))]
            size += end - pos
            if nl < 0:
                break
            window.append((bytes(buf), size))
            buf, size, lineno, pos = bytearray(), 0, lineno + 1, nl + 1
    if not tail_nl and first <= lineno <= last:
        window.append((bytes(buf), size))
    return window, (0 if empty else lineno - (1 if tail_nl else 0)) if count_all else None


def _kept_text(kept: Kept, max_line: int) -> str:
    data, size = kept
    text = data.decode("utf-8", errors="replace")
    if size <= len(data):
        return _clip_line(text[:-1] if text.endswith("\r") else text, max_line)
    shown = text[:max_line]
    return f"{shown}... [line truncated: {size - len(shown.encode('utf-8', 'replace')):,} more bytes]"


def _local_window(backend: TerminalBackend, path: str, offset: int, limit: int, max_line: int,
                  count_all: bool) -> tuple[list[str], int | None]:
    opener = getattr(backend, "open_bytes", None)
    try:
        with opener(path) as fh:  # type: ignore[misc]
            kept, total = _scan(fh, offset, offset + limit - 1, max_line * 4 + 4, count_all)
    except OSError as exc:
        raise os_error(exc, path, "reading") from exc
    return [_kept_text(k, max_line) for k in kept], total


def _clip_line(line: str, max_line: int) -> str:
    if len(line) <= max_line:
        return line
    return f"{line[:max_line]}... [line truncated: {len(line) - max_line} more chars]"


def read_window(backend: TerminalBackend, raw_path: str, offset: int, limit: int,
                *, max_chars: int, max_line: int) -> dict:
    """The read_file result mapping for lines offset..offset+limit-1 of `raw_path`."""
    path = resolve(backend, raw_path)
    offset, limit = max(1, offset), max(1, min(limit, MAX_LIMIT))
    size = int(stat_file(backend, path).get("size") or 0)
    read_head(backend, path, size)
    total: int | None = None
    cut = False
    if getattr(backend, "open_bytes", None) is not None:
        window, total = _local_window(backend, path, offset, limit, max_line, count_all=size <= LOAD_MAX_BYTES)
    elif size > LOAD_MAX_BYTES:
        window, cut = _sed_window(backend, path, offset, limit, max_chars * 4 + 4096)
        window = [_clip_line(line, max_line) for line in window]
    else:
        try:
            lines = _lines_of(backend.read_bytes(path, limit=LOAD_MAX_BYTES + 1))
        except OSError as exc:
            raise os_error(exc, path, "reading") from exc
        total, window = len(lines), [_clip_line(line, max_line) for line in lines[offset - 1:offset - 1 + limit]]
    if total == 0:
        return {"path": path, "content": "", "total_lines": 0, "note": "file is empty"}
    if not window:
        where = f"{total} lines" if total is not None else f"{human_size(size)}; fewer lines than that"
        raise FileToolError(f"offset {offset} is past the end of {path} ({where})")
    out, used = [], 0
    for n, line in enumerate(window, offset):
        row = f"{n:>5}|{line}"
        if used + len(row) + 1 > max_chars and out:
            break
        out.append(row)
        used += len(row) + 1
    end = offset + len(out) - 1
    result: dict = {"path": path, "content": "\n".join(out), "total_lines": total, "lines": f"{offset}-{end}"}
    notes = []
    if len(out) < len(window):
        notes.append(f"output capped at {max_chars} chars (file_read_max_chars)")
    if total is None:
        result.pop("total_lines")
        notes.append(f"file is {human_size(size)}: total line count not computed")
        ended = not cut and len(out) == len(window) < limit
        notes.append("end of file" if ended else f"continue with offset={end + 1}")
    elif end < total:
        notes.append(f"{total - end} more lines: continue with offset={end + 1}")
    if notes:
        result["note"] = "; ".join(notes)
    return result
