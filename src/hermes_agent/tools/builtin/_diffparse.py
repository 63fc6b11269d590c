"""Parse multi-file patches (unified diff, or the "*** Begin Patch" V4A style) into file operations
and apply hunks to text by content, tolerating drifted line numbers and whitespace differences."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent import lazyre
from hermes_agent.tools.builtin._fileio import FileToolError
from hermes_agent.tools.builtin._patching import LINE_NORMALISERS, nearest_region, preview

_HUNK_RE = lazyre.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_V4A_OPS = {"*** Add File: ": "add", "*** Delete File: ": "delete", "*** Update File: ": "update"}


@dataclass(frozen=True, slots=True)
class Hunk:
    """One hunk: (tag, text) lines with tag in ' -+'; where it claims to start; an optional anchor."""

    lines: tuple[tuple[str, str], ...]
    old_start: int | None = None
    old_count: int | None = None
    anchor: str | None = None
    no_eol: bool = False
    old_no_eol: bool = False


@dataclass(frozen=True, slots=True)
class FileOp:
    """add / delete / update of one file (an update may also move it)."""

    kind: str
    path: str
    hunks: tuple[Hunk, ...] = ()
    move_to: str | None = None


def parse_patch(text: str) -> list[FileOp]:
    """File operations of a unified diff or a V4A patch; raises FileToolError when none are found."""
    lines = text.replace("\r\n", "\n").split("\n")
    ops = _parse_v4a(lines) if any(x.startswith("*** Begin Patch") for x in lines) else _parse_unified(lines)
    if not ops:
        raise FileToolError("No file changes found in the patch. Send a unified diff (--- a/f, +++ b/f, "
                            "@@ hunks) or a '*** Begin Patch' / '*** Update File: f' patch")
    return ops


def _strip_prefix(raw: str, prefix: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    return path[2:] if path.startswith(prefix) else path


def _is_file_header(lines: list[str], i: int) -> bool:
    return (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")) \
        or lines[i].startswith("diff --git ")


def _parse_unified(lines: list[str]) -> list[FileOp]:
    ops: list[FileOp] = []
    rename: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            if rename.get("from") and rename.get("to"):
                ops.append(FileOp("update", rename["from"], (), rename["to"]))
            rename = {}
        elif line.startswith(("rename from ", "rename to ")):
            rename["from" if line.startswith("rename from ") else "to"] = line.split(" ", 2)[2].strip()
        elif _is_file_header(lines, i) and line.startswith("--- "):
            old, new = _strip_prefix(line[4:], "a/"), _strip_prefix(lines[i + 1][4:], "b/")
            hunks, i = _read_unified_hunks(lines, i + 2)
            if old is None and new is not None:
                ops.append(FileOp("add", new, hunks))
            elif new is None and old is not None:
                ops.append(FileOp("delete", old))
            elif old is not None and new is not None:
                ops.append(FileOp("update", old, hunks, new if new != old else None))
            rename = {}
            continue
        i += 1
    if rename.get("from") and rename.get("to"):
        ops.append(FileOp("update", rename["from"], (), rename["to"]))
    return ops


def _read_unified_hunks(lines: list[str], i: int) -> tuple[tuple[Hunk, ...], int]:
    hunks: list[Hunk] = []
    while i < len(lines) and not _is_file_header(lines, i):
        m = _HUNK_RE.match(lines[i])
        if not lines[i].startswith("@@"):
            i += 1
            continue
        body, eol, i = _read_body(lines, i + 1, stop=lambda j: lines[j].startswith("@@") or _is_file_header(lines, j))
        start = int(m.group(1)) if m else None
        count = int(m.group(2)) if m and m.group(2) is not None else (1 if m else None)
        hunks.append(Hunk(_trim_blank_tail(body, count, m), start, count, None, *eol))
    return tuple(hunks), i


def _read_body(lines: list[str], i: int, stop) -> tuple[list[tuple[str, str]], tuple[bool, bool], int]:
    """Hunk lines until `stop`; also whether the new / old side ends without a newline."""
    body: list[tuple[str, str]] = []
    no_eol = old_no_eol = False
    while i < len(lines) and not stop(i):
        line = lines[i]
        if line.startswith("\\"):  # "\ No newline at end of file" applies to the line before it
            tag = body[-1][0] if body else ""
            no_eol = no_eol or tag in (" ", "+")
            old_no_eol = old_no_eol or tag in (" ", "-")
        elif line[:1] in (" ", "-", "+"):
            body.append((line[0], line[1:]))
        else:
            body.append((" ", line))  # a context line whose leading space was dropped
        i += 1
    return body, (no_eol, old_no_eol), i


def _trim_blank_tail(body: list[tuple[str, str]], old_count: int | None, m) -> tuple[tuple[str, str], ...]:
    """Drop blank context lines that trail a hunk beyond what its header counts (separators)."""
    new_count = int(m.group(4)) if m and m.group(4) is not None else None
    while body and body[-1] == (" ", ""):
        olds = sum(1 for t, _ in body if t in " -")
        news = sum(1 for t, _ in body if t in " +")
        if old_count is not None and new_count is not None and olds <= old_count and news <= new_count:
            break
        body.pop()
    return tuple(body)


def _parse_v4a(lines: list[str]) -> list[FileOp]:
    ops: list[FileOp] = []
    i = next(j for j, x in enumerate(lines) if x.startswith("*** Begin Patch")) + 1
    while i < len(lines) and not lines[i].startswith("*** End Patch"):
        prefix = next((p for p in _V4A_OPS if lines[i].startswith(p)), None)
        if prefix is None:
            i += 1
            continue
        kind, path, i = _V4A_OPS[prefix], lines[i][len(prefix):].strip(), i + 1
        move_to = None
        if kind == "update" and i < len(lines) and lines[i].startswith("*** Move to: "):
            move_to, i = lines[i][len("*** Move to: "):].strip(), i + 1
        hunks: list[Hunk] = []
        while i < len(lines) and not (lines[i].startswith("*** ") and not lines[i].startswith("*** End of File")):
            if lines[i].startswith("*** End of File"):
                i += 1
                continue
            anchor = None
            if lines[i].startswith("@@"):
                anchor, i = lines[i][2:].strip() or None, i + 1
            body, eol, i = _read_body(lines, i, stop=lambda j: lines[j].startswith(("@@", "*** ")))
            while body and body[-1] == (" ", ""):
                body.pop()
            if body or anchor:
                hunks.append(Hunk(tuple(body), None, None, anchor, *eol))
        ops.append(FileOp(kind, path, tuple(hunks), move_to))
    return ops


def added_text(op: FileOp) -> str:
    """Content of a file an 'add' operation creates."""
    lines = [t for h in op.hunks for tag, t in h.lines if tag in " +"]
    no_eol = bool(op.hunks) and op.hunks[-1].no_eol
    return "\n".join(lines) + ("" if no_eol or not lines else "\n")


def apply_hunks(text: str, hunks: tuple[Hunk, ...], path: str) -> str:
    """`text` with every hunk applied in order; raises FileToolError naming the failing hunk."""
    crlf = "\r\n" in text and text.count("\r\n") * 2 >= text.count("\n")
    lines = text.replace("\r\n", "\n").split("\n")
    ends_nl = len(lines) > 1 and lines[-1] == ""
    if lines and lines[-1] == "":
        lines.pop()
    cursor, delta = 0, 0
    for k, hunk in enumerate(hunks, 1):
        old = [t for tag, t in hunk.lines if tag in " -"]
        at = _locate(lines, hunk, old, cursor, delta, path, k)
        repl: list[str] = []
        j = at
        for tag, t in hunk.lines:
            if tag == " ":
                repl.append(lines[j] if j < len(lines) else t)  # keep the file's own context text
                j += 1
            elif tag == "-":
                j += 1
            else:
                repl.append(t)
        lines[at:at + len(old)] = repl
        cursor, delta = at + len(repl), delta + len(repl) - len(old)
        if at + len(repl) == len(lines) and (hunk.no_eol or hunk.old_no_eol):
            ends_nl = not hunk.no_eol
    if not text:
        ends_nl = bool(lines) and not (hunks and hunks[-1].no_eol)
    eol = "\r\n" if crlf else "\n"
    return eol.join(lines) + (eol if ends_nl and lines else "")


def _locate(lines: list[str], hunk: Hunk, old: list[str], cursor: int, delta: int, path: str, k: int) -> int:
    """Index where the hunk's old lines sit: exact, then whitespace-tolerant, nearest to where expected."""
    if hunk.anchor is not None:
        found = next((i for i in range(cursor, len(lines)) if lines[i].strip() == hunk.anchor.strip()), None)
        if found is None:
            raise FileToolError(f"{path}: hunk {k}: anchor line '@@ {hunk.anchor}' not found")
        cursor = found
    if hunk.old_start is not None:
        expected = max(0, hunk.old_start - 1 + delta + (1 if hunk.old_count == 0 else 0))
    else:
        expected = cursor if old or hunk.anchor is not None else len(lines)
    if not old:
        return min(expected, len(lines))
    for norm in (None, *(f for _, f in LINE_NORMALISERS)):
        want = old if norm is None else [norm(x) for x in old]
        have = lines if norm is None else [norm(x) for x in lines]
        hits = [i for i in range(len(have) - len(want) + 1) if have[i:i + len(want)] == want]
        if hunk.old_start is None:
            hits = [i for i in hits if i >= cursor] or hits
        if hits:
            return min(hits, key=lambda i: (abs(i - expected), i))
    best = nearest_region(lines, old)
    where = f"; closest text (lines {best[0] + 1}-{best[0] + len(old)}):\n{preview(lines, best[0], len(old))}" \
        if best and best[1] >= 0.3 else ""
    raise FileToolError(f"{path}: hunk {k} does not apply: its context/removed lines were not found{where}")
