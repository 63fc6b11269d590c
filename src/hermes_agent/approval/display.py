"""What the user sees when asked to approve: the command fitted to one screen and the flagged part repeated
right above the prompt, so padding (blank lines, runs of spaces, invisible characters) can never scroll what
is dangerous out of sight. Shared by the terminal, REPL, chat and ACP approvers."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent import lazyre

# Runs of 2+ blank lines; runs of 6+ spaces (any width of space); characters that print as nothing (zero-width, joiners,
# line/paragraph separators, soft hyphen, BOM, the Mongolian vowel separator, other format characters).
_BLANKS = lazyre.compile(r"\n(?:[ \t]*\n){2,}")
_SPACES = lazyre.compile(r"[ \u00a0\u1680\u2000-\u200a\u202f\u3000]{6,}")  # after tabs are expanded
_INVISIBLE = lazyre.compile(r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028\u2029"
                            r"\u205f-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]")
_SEPARATORS = lazyre.compile(r"\n|;|&&|\|\||\||&")
_MAX_PARTS = 400  # pieces of one line scanned one by one for the "dangerous part" line
_GROUP = 8
MAX_SECONDS = 3.0  # the search for the flagged part stops here (the gate's own scan already took its time)


@dataclass(frozen=True, slots=True)
class Fitted:
    """The command as display rows (already terminal-safe) and the flagged parts to repeat above the prompt."""

    rows: list[str]
    flagged: list[str]
    shortened: bool = False  # parts were left out to fit: `full(command)` shows it all on request


def safe(text: str) -> str:
    """Terminal controls and invisible characters as visible markers (`^[`, `<U+200B>`); CRLF as LF."""
    from hermes_agent.termsafe import visible

    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", visible(text)).expandtabs(8)


def _squeeze(text: str) -> str:
    """Runs of blank lines and of whitespace shown as one marker each."""
    def blank(m) -> str:  # noqa: ANN001 - re.Match
        return f"\n«{m.group(0).count(chr(10)) - 1} blank lines»\n"

    text = _BLANKS.sub(blank, text)
    return _SPACES.sub(lambda m: f" «{len(m.group(0))} spaces» ", text)


def _width(text: str) -> int:
    """Terminal columns `text` takes (wide East Asian characters count 2, combining marks 0)."""
    if text.isascii():
        return len(text)
    from wcwidth import wcswidth, wcwidth  # prompt_toolkit's dependency

    total = wcswidth(text)
    return total if total >= 0 else sum(2 if (w := wcwidth(c)) < 0 else w for c in text)


def _prefix(text: str, cols: int) -> str:
    """The longest start of `text` no wider than `cols` columns."""
    if text.isascii():
        return text[:max(cols, 0)]
    used = 0
    for i, ch in enumerate(text):
        used += _width(ch)
        if used > cols:
            return text[:i]
    return text


def clip(line: str, width: int) -> str:
    """One line no wider than `width` columns: head + `... N more chars ...` + tail."""
    width = max(width, 40)
    if _width(line) <= width:
        return line
    keep = width - len(f" ... {len(line)} more chars ... ")
    head = _prefix(line, keep * 2 // 3)
    tail = _prefix(line[::-1], keep - keep * 2 // 3)[::-1]
    return f"{head} ... {len(line) - len(head) - len(tail)} more chars ... {tail}"


def _cost(line: str, width: int) -> int:
    """Terminal rows a line takes once wrapped at `width` columns."""
    return max(1, -(-_width(line) // width))


def _take(lines: list[str], budget: int, width: int) -> list[str]:
    """Whole lines while they fit in `budget` rows; the first that does not is clipped to what is left."""
    out: list[str] = []
    for line in lines:
        if budget <= 0:
            break
        cost = _cost(line, width)
        out.append(line if cost <= budget else clip(line, budget * width))
        budget -= min(cost, budget)
    return out


def fit_rows(text: str, rows: int, width: int) -> list[str]:
    """`text` in at most `rows` terminal rows of `width` columns (long lines count as the rows they wrap to):
    whole when it fits, else head + `... N more lines ...` + tail, a line too long alone clipped in the middle."""
    width = max(width, 20)
    lines = _squeeze(safe(text)).split("\n")
    rows = max(rows, 3)
    if sum(_cost(line, width) for line in lines) <= rows:
        return lines
    head_budget = (rows - 1) * 2 // 3
    head = _take(lines, head_budget, width)
    tail = _take(lines[len(head):][::-1], rows - 1 - head_budget, width)[::-1]
    hidden = len(lines) - len(head) - len(tail)
    if hidden <= 0:  # one line alone is too long: the head already clipped it
        return head + tail
    return [*head, f"... {hidden} more lines ...", *tail]


def _found(text: str) -> set[str]:
    """Pattern keys the rules find in `text` alone (empty on any failure: a display aid never breaks a question)."""
    from hermes_agent.approval.rules import scan_command

    try:
        scan = scan_command(text)
    except Exception:  # noqa: BLE001
        return set()
    return {f.key for f in scan.findings} | ({scan.hardline.key} if scan.hardline else set())


def _flagged_lines(lines: list[str], limit: int, deadline: float) -> list[tuple[str, set[str]]]:
    """Lines the rules flag on their own: groups of _GROUP lines scanned together (cheaper per line than one by
    one or than large halves), then the lines of a flagged group; stops at `limit` hits or at `deadline`."""
    import time

    out: list[tuple[str, set[str]]] = []
    for start in range(0, len(lines), _GROUP):
        if len(out) >= limit or time.monotonic() > deadline:
            break
        group = lines[start:start + _GROUP]
        if len(group) > 1 and not _found("\n".join(group)):
            continue
        out.extend((line, found) for line in group if (found := _found(line)))
    return out[:limit]


def flagged_parts(command: str, keys: tuple[str, ...] = (), limit: int = 3) -> list[str]:
    """The parts of `command` (its lines, then a line's pieces between shell separators) that the rules flag on
    their own, those matching `keys` first; empty when the command is one part (it is itself what is flagged)."""
    lines = [line.strip() for line in command.split("\n")]
    lines = [line for line in dict.fromkeys(lines) if line]
    import time

    hits = _flagged_lines(lines, limit * 4, time.monotonic() + MAX_SECONDS)
    parts: list[tuple[str, set[str]]] = []
    for line, found in hits:
        pieces = [p for p in dict.fromkeys(p.strip() for p in _SEPARATORS.split(line)) if p][:_MAX_PARTS]
        alone = [(p, f) for p in pieces if len(pieces) > 1 and (f := _found(p))]
        parts.extend(alone or [(line, found)])
    if len(parts) == 1 and parts[0][0] == command.strip():
        return []
    wanted = set(keys)
    parts.sort(key=lambda pf: not (pf[1] & wanted))  # stable: command order within each group
    return [p for p, _ in parts[:limit]]


def fit(command: str, keys: tuple[str, ...] = (), *, rows: int = 24, width: int = 100,
        reserved: int = 8) -> Fitted:
    """The command for a screen of `rows` x `width`, leaving `reserved` rows for title, reason and prompt."""
    flagged = [clip(" ".join(_squeeze(safe(p)).split()), width) for p in flagged_parts(command, keys)]
    body = fit_rows(command, rows - reserved - len(flagged), width)
    return Fitted(body, flagged, body != full(command))


def full(command: str) -> list[str]:
    """Every row of the command, terminal-safe, padding runs still collapsed (the answer to `v`)."""
    return _squeeze(safe(command)).split("\n")


VIEW_HINT = "(shortened to fit the screen: type v to see the whole command)"


def terminal_size(fd: int | None = None) -> tuple[int, int]:
    """(rows, columns) of the terminal on `fd` (or the process's), 24 x 80 when unknown."""
    import os
    import shutil

    if fd is not None:
        try:
            size = os.get_terminal_size(fd)
            return size.lines or 24, size.columns or 80
        except OSError:
            pass
    size = shutil.get_terminal_size((80, 24))
    return size.lines, size.columns
