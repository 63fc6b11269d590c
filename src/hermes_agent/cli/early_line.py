"""The first line's editor (issue 24, prompt ready): from the moment the prompt symbol shows until the full line
editor (prompt_toolkit, ~150-250 ms to import here) takes over, keys are read in raw mode on a thread and edited
in place: insert, Backspace/Delete, Left/Right, Home/End, Ctrl-A/E/B/F/U/K/W, Alt-B/F, Up/Down through the
saved input history, bracketed paste, Alt-Enter newlines, wide characters, Enter, Ctrl-C and Ctrl-D. At the
hand-over (`finish`) the thread stops reading: a key it did not read stays in the terminal for prompt_toolkit,
so nothing typed is lost or reordered. Lines entered meanwhile stay on screen above the prompt and are queued.

Only the standard library's termios/select/threading: nothing of the agent, no prompt_toolkit."""

from __future__ import annotations

import os
import select
import termios
import threading

PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
_PROMPT_W = 2  # "❯ " and the continuation indent "  "
_SEQ = {"A": "up", "B": "down", "C": "right", "D": "left", "H": "home", "F": "end", "1~": "home", "7~": "home",
        "4~": "end", "8~": "end", "3~": "delete", "1;5C": "word_right", "1;5D": "word_left", "1;3C": "word_right",
        "1;3D": "word_left", "200~": "paste_start", "201~": "paste_end"}
_CTRL = {1: "home", 2: "left", 3: "ctrl_c", 4: "ctrl_d", 5: "end", 6: "right", 8: "backspace", 11: "kill_end",
         13: "enter", 10: "enter", 14: "down", 16: "up", 21: "kill_start", 23: "kill_word", 127: "backspace"}
_ALT = {"b": "word_left", "f": "word_right", "\r": "newline", "\x7f": "kill_word", "d": "kill_word_right"}


def width(ch: str) -> int:
    """Terminal columns of one character (wide East Asian forms 2, combining marks 0)."""
    if " " <= ch < "\x7f":
        return 1
    import unicodedata

    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def layout(text: str, cols: int) -> tuple[int, int]:
    """(row, column) where the next character after `text` goes, the prompt taking the first two columns."""
    row, col = 0, _PROMPT_W
    for ch in text:
        if ch == "\n":
            row, col = row + 1, _PROMPT_W
            continue
        w = width(ch)
        if col + w > cols:
            row, col = row + 1, 0
        col += w
    if col >= cols:
        row, col = row + 1, 0
    return row, col


def token(buf: bytes, i: int) -> tuple[int, str, str]:
    """The key at buf[i:]: (bytes used, kind, value); used 0 when the sequence is not complete yet. Kinds:
    "text", "key" (a name), "ignore"."""
    b = buf[i]
    if b == 0x1B:
        if i + 1 >= len(buf):
            return 0, "", ""
        nxt = buf[i + 1]
        if nxt in (0x5B, 0x4F):  # CSI "[" or SS3 "O": parameters, then a final byte in @..~
            for j in range(i + 2, len(buf)):
                if 0x40 <= buf[j] <= 0x7E:
                    body = buf[i + 2:j + 1].decode("ascii", "replace")
                    name = _SEQ.get(body) or _SEQ.get(body[-1:] if nxt == 0x4F else "")
                    return j + 1 - i, ("key" if name else "ignore"), name or ""
            return 0, "", ""
        if nxt < 0x80:
            name = _ALT.get(chr(nxt), "")
            return 2, ("key" if name else "ignore"), name
        return 1, "ignore", ""
    if b < 0x20 or b == 0x7F:
        name = _CTRL.get(b, "")
        if b == 9:
            return 1, "text", "\t"
        return 1, ("key" if name else "ignore"), name
    if b < 0x80:
        j = i
        while j < len(buf) and 0x20 <= buf[j] < 0x7F:
            j += 1
        return j - i, "text", buf[i:j].decode("ascii")
    n = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
    if i + n > len(buf):
        return 0, "", ""
    return n, "text", buf[i:i + n].decode("utf-8", "replace")


class EarlyLine:
    """The editor on a thread; `start` returns it running (or None when stdin/stdout are not a terminal)."""

    def __init__(self, fd: int, out: int, history_path: os.PathLike[str] | str, color: bool) -> None:
        self.fd, self.out, self.history_path = fd, out, history_path
        self.prompt = "\x1b[1;36m❯ \x1b[0m" if color else "❯ "
        self.text, self.cursor = "", 0
        self.lines: list[str] = []  # entered before the hand-over, in order
        self.eof = False  # Ctrl-D on an empty line, or Ctrl-C on an empty line: leave
        self._pending = b""
        self._paste = False
        self._row = 0  # rows between the prompt's first row and the cursor
        self._history: list[str] | None = None  # newest first, read on the first Up
        self._hist_at, self._draft = -1, ""
        self._saved = termios.tcgetattr(fd)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._read_loop, name="hermes-early-line", daemon=True)
        self._done = False

    @classmethod
    def start(cls, history_path: os.PathLike[str] | str, color: bool, before: str = "") -> EarlyLine | None:
        """Raw mode, `before` (the banner) and the prompt in one write, then the reading thread."""
        import sys

        try:
            fd, out = sys.stdin.fileno(), sys.stdout.fileno()
            if not (os.isatty(fd) and os.isatty(out)) or os.environ.get("TERM") == "dumb":
                return None
            line = cls(fd, out, history_path, color)
            raw = list(line._saved)
            raw[0] &= ~(termios.IXON | termios.ICRNL | termios.INLCR | termios.IGNCR)
            raw[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
            raw[6] = list(raw[6])
            raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
            termios.tcsetattr(fd, termios.TCSANOW, raw)
        except (AttributeError, OSError, ValueError, termios.error):
            return None
        import atexit

        atexit.register(line.finish)
        sys.stdout.flush()
        line._write(before + line.prompt + PASTE_ON)
        line._thread.start()
        return line

    def finish(self, clear: bool = True, leaving: bool = False) -> EarlyLine:
        """Stop reading, give the terminal back its modes (what is still unread stays unread), and clear the
        line being edited so the next editor draws from its first row (`leaving`: no editor follows, bracketed
        paste goes off too). Safe to call twice."""
        if self._done:
            return self
        self._done = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)
        except termios.error:
            pass
        if clear:
            self._write((f"\x1b[{self._row}A" if self._row else "") + "\r\x1b[J")
        if self.eof or leaving:
            self._write(PASTE_OFF)
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        return self

    # -- the reading thread --------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            self._read_keys()
        except (OSError, ValueError):  # the terminal went away, or finish gave up waiting and closed the pipe
            return

    def _read_keys(self) -> None:
        while not self.eof:
            ready, _, _ = select.select([self.fd, self._wake_r], [], [])
            if self._wake_r in ready:
                if self._pending:  # the rest of an escape or UTF-8 sequence is on its way
                    more, _, _ = select.select([self.fd], [], [], 0.03)
                    if more:
                        self._feed(os.read(self.fd, 64))
                return
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            if not data:  # end of input (a Ctrl-D the terminal took before raw mode): leave, as Ctrl-D does
                self.eof = True
                return
            self._feed(data)

    def _feed(self, data: bytes) -> None:
        buf, i = self._pending + data, 0
        while i < len(buf) and not self.eof:
            used, kind, value = token(buf, i)
            if not used:
                break
            i += used
            if kind == "text":
                self._insert(value)
            elif kind == "key":
                self._key(value)
        self._pending = buf[i:] if not self.eof else b""
        if not self.eof:
            self._redraw()

    # -- editing -------------------------------------------------------------------------------

    def _insert(self, s: str) -> None:
        s = "".join(c for c in s if c >= " " or c in "\n\t").replace("\t", " ")
        self.text = self.text[:self.cursor] + s + self.text[self.cursor:]
        self.cursor += len(s)

    def _key(self, name: str) -> None:
        if self._paste:
            if name == "paste_end":
                self._paste = False
            elif name in ("enter", "newline"):
                self._insert("\n")
            return
        handler = getattr(self, "_k_" + name, None)
        if handler is not None:
            handler()

    def _k_paste_start(self) -> None:
        self._paste = True

    def _k_newline(self) -> None:
        self._insert("\n")

    def _k_enter(self) -> None:
        text = self.text
        self._redraw(final=True)
        self._write("\r\n")
        self.lines.append(text)
        self.text, self.cursor, self._row, self._hist_at = "", 0, 0, -1
        self._history = None if self._history is None else [text, *self._history]

    def _k_ctrl_c(self) -> None:
        if self.text:
            self.text, self.cursor = "", 0
        else:
            self.eof = True

    def _k_ctrl_d(self) -> None:
        if self.text:
            self._k_delete()
        else:
            self.eof = True

    def _k_backspace(self) -> None:
        if self.cursor:
            self.text = self.text[:self.cursor - 1] + self.text[self.cursor:]
            self.cursor -= 1

    def _k_delete(self) -> None:
        self.text = self.text[:self.cursor] + self.text[self.cursor + 1:]

    def _k_left(self) -> None:
        self.cursor = max(0, self.cursor - 1)

    def _k_right(self) -> None:
        self.cursor = min(len(self.text), self.cursor + 1)

    def _k_home(self) -> None:
        self.cursor = self.text.rfind("\n", 0, self.cursor) + 1

    def _k_end(self) -> None:
        nl = self.text.find("\n", self.cursor)
        self.cursor = len(self.text) if nl < 0 else nl

    def _k_kill_start(self) -> None:
        start = self.text.rfind("\n", 0, self.cursor) + 1
        self.text, self.cursor = self.text[:start] + self.text[self.cursor:], start

    def _k_kill_end(self) -> None:
        nl = self.text.find("\n", self.cursor)
        self.text = self.text[:self.cursor] + ("" if nl < 0 else self.text[nl:])

    def _word_start(self) -> int:
        i = self.cursor
        while i and self.text[i - 1].isspace():
            i -= 1
        while i and not self.text[i - 1].isspace():
            i -= 1
        return i

    def _word_end(self) -> int:
        i, n = self.cursor, len(self.text)
        while i < n and self.text[i].isspace():
            i += 1
        while i < n and not self.text[i].isspace():
            i += 1
        return i

    def _k_kill_word(self) -> None:
        start = self._word_start()
        self.text, self.cursor = self.text[:start] + self.text[self.cursor:], start

    def _k_kill_word_right(self) -> None:
        self.text = self.text[:self.cursor] + self.text[self._word_end():]

    def _k_word_left(self) -> None:
        self.cursor = self._word_start()

    def _k_word_right(self) -> None:
        self.cursor = self._word_end()

    def _k_up(self) -> None:
        if self._history is None:
            self._history = read_history(self.history_path)
        if self._hist_at + 1 >= len(self._history):
            return
        if self._hist_at < 0:
            self._draft = self.text
        self._hist_at += 1
        self.text = self._history[self._hist_at]
        self.cursor = len(self.text)

    def _k_down(self) -> None:
        if self._hist_at < 0 or self._history is None:
            return
        self._hist_at -= 1
        self.text = self._draft if self._hist_at < 0 else self._history[self._hist_at]
        self.cursor = len(self.text)

    # -- drawing -------------------------------------------------------------------------------

    def _write(self, s: str) -> None:
        try:
            os.write(self.out, s.encode("utf-8", "replace"))
        except OSError:
            pass

    def _redraw(self, final: bool = False) -> None:
        try:
            cols = max(8, os.get_terminal_size(self.out).columns)
        except OSError:
            cols = 80
        end_row, end_col = layout(self.text, cols)
        row, col = (end_row, end_col) if final else layout(self.text[:self.cursor], cols)
        parts = [f"\x1b[{self._row}A" if self._row else "", "\r\x1b[J", self.prompt,
                 self.text.replace("\n", "\r\n" + " " * _PROMPT_W)]
        if end_col == 0 and end_row:
            parts.append(" \b")  # the terminal waits at the last column: go to the next row as counted
        if end_row > row:
            parts.append(f"\x1b[{end_row - row}A")
        parts.append("\r" + (f"\x1b[{col}C" if col else ""))
        self._row = row
        self._write("".join(parts))


def read_history(path: os.PathLike[str] | str, limit: int = 1 << 20) -> list[str]:
    """Entries of prompt_toolkit's FileHistory file (`# time` lines, then `+text` lines), newest first; the
    last `limit` bytes only."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    entries: list[str] = []
    lines: list[str] = []
    for line in data.splitlines(keepends=True):
        if line.startswith("+"):
            lines.append(line[1:])
        else:
            if lines:
                entries.append("".join(lines)[:-1])
            lines = []
    if lines:
        entries.append("".join(lines)[:-1])
    return entries[::-1]
