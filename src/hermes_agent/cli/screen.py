"""The REPL's output channel: whole lines written above the prompt from any thread, ANSI styles, and
markdown rendered with rich (imported on first use). It never reads input. Everything written goes
through `termsafe.visible`: only the style codes this Screen made itself reach the terminal as codes;
the model's (or a tool's) escape sequences are shown as text (issue 19, a51)."""

from __future__ import annotations

import io
import shutil
import threading
from typing import TextIO

from hermes_agent import lazyre

_TRAILING = lazyre.compile(r" +\n")
STYLES = {"dim": "2", "bold": "1", "yellow": "33", "red": "31", "green": "32", "cyan": "36",
          "magenta": "35", "dim_yellow": "2;33", "bold_cyan": "1;36"}


class Screen:
    """Thread-safe writer of finished blocks. `out` is the prompt_toolkit stdout proxy while the REPL
    runs (so text lands above the input line) or any text stream in tests and before the prompt."""

    def __init__(self, out: TextIO, *, color: bool = True, width: int | None = None) -> None:
        self.out = out
        self.color = color
        self._width = width
        self._lock = threading.Lock()
        self._own: set[str] = {"\x1b[0m"}  # the escape sequences this Screen emitted itself

    def width(self) -> int:
        """Columns available for rendering."""
        return self._width or shutil.get_terminal_size((100, 24)).columns

    def style(self, text: str, style: str | None) -> str:
        """`text` wrapped in the ANSI codes of a STYLES name (plain when colour is off)."""
        if not style or not self.color or not text:
            return text
        code = f"\x1b[{STYLES.get(style, style)}m"
        self._own.add(code)
        return f"{code}{text}\x1b[0m"

    def write(self, text: str) -> None:
        """Write text (should end with a newline) and flush it through; controls not made here are shown."""
        from hermes_agent.termsafe import visible

        self.write_trusted(visible(text, self._own))

    def control(self, sequence: str) -> None:
        """A terminal control hermes itself sends (clear screen for /clear)."""
        self.write_trusted(sequence)

    def write_trusted(self, text: str) -> None:
        """Write text whose escape sequences hermes made (styles, rich's rendering of cleaned text)."""
        with self._lock:
            try:
                self.out.write(text)
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line (may contain newlines) in a style."""
        self.write("\n".join(self.style(part, style) for part in text.split("\n")) + "\n")

    def lines(self, rows: list[str], style: str | None = None) -> None:
        """Several lines in one write, so other threads cannot interleave."""
        if rows:
            self.write("".join(self.style(r, style) + "\n" for r in rows))

    def markdown(self, text: str) -> None:
        """Render `text` as markdown (plain text when it has no markdown at all)."""
        if not text.strip():
            return
        from hermes_agent.termsafe import visible

        self.write_trusted(render_markdown(visible(text.strip("\n")), self.width(), self.color))


class PromptWriter:
    """A text stream whose writes land above a running prompt_toolkit app. Unlike prompt_toolkit's
    run_in_terminal it never switches the tty to cooked mode, so a Ctrl-C or Ctrl-D typed while output
    is printed still reaches the key bindings instead of becoming a signal or a lost EOF."""

    def __init__(self, app: object, real: TextIO) -> None:
        self.app = app
        self.real = real
        self._partial = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            head, sep, tail = (self._partial + text).rpartition("\n")
            self._partial = tail
            if sep:
                self._send(head + sep)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            if self._partial:
                self._send(self._partial)
                self._partial = ""

    def isatty(self) -> bool:
        return self.real.isatty()

    def fileno(self) -> int:
        return self.real.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.real, "encoding", "utf-8")

    def _send(self, text: str) -> None:
        app = self.app
        loop = getattr(app, "loop", None)
        if loop is not None and getattr(app, "is_running", False):
            try:
                loop.call_soon_threadsafe(self._emit, text)
                return
            except RuntimeError:  # the loop closed between the check and the call
                pass
        self._direct(text)

    def _direct(self, text: str) -> None:
        try:
            self.real.write(text)
            self.real.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def _emit(self, text: str) -> None:
        """On the app's loop: erase the prompt, print, and let the prompt redraw below."""
        app = self.app
        if not app.is_running:  # type: ignore[attr-defined]
            self._direct(text)
            return
        app.renderer.erase()  # type: ignore[attr-defined]
        app.output.write_raw(text)  # type: ignore[attr-defined]
        app.output.flush()  # type: ignore[attr-defined]
        app.renderer.request_absolute_cursor_position()  # type: ignore[attr-defined]
        app.invalidate()  # type: ignore[attr-defined]


def _looks_like_markdown(text: str) -> bool:
    return any(mark in text for mark in ("*", "_", "`", "#", "[", "|", "\n- ", "\n1.", ">")) or \
        text.startswith(("- ", "1."))


def render_markdown(text: str, width: int, color: bool) -> str:
    """ANSI text of `text` rendered as markdown for a terminal `width` columns wide."""
    if not _looks_like_markdown(text):
        return text + "\n"
    from rich.console import Console
    from rich.markdown import Markdown

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=max(20, width),
                      color_system="auto" if color else None, highlight=False, emoji=False, soft_wrap=False)
    console.print(Markdown(text, code_theme="monokai", hyperlinks=False))
    return _TRAILING.sub("\n", buf.getvalue())


def prewarm() -> None:
    """Import rich's markdown stack ahead of the first answer (called from a background thread)."""
    render_markdown("**warm**", 40, True)
