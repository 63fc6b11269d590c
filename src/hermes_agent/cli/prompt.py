"""The REPL's input line (prompt_toolkit): persistent history, Alt-Enter newlines, bracketed paste,
completion of slash commands and file paths, and Ctrl-C/Ctrl-D routed to the REPL."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style

if TYPE_CHECKING:
    from hermes_agent.cli.repl_state import ReplHost

STYLE = {
    "prompt": "",
    "symbol": "ansicyan bold",
    "spinner": "ansicyan",
    "status": "",
    "hint": "ansibrightblack",
    "reasoning": "ansibrightblack italic",
    "question": "ansiyellow bold",
    "choice": "",
    "choice.selected": "reverse",
    "completion-menu": "bg:#303030 #d0d0d0",
    "completion-menu.completion.current": "bg:#5f87af #ffffff",
}


class ReplCompleter(Completer):
    """`/com` completes command names (with their help); a word that looks like a path completes paths."""

    def __init__(self, commands: Callable[[], Iterable[tuple[str, str]]],
                 arguments: Callable[[str], Iterable[str]]) -> None:
        self.commands = commands
        self.arguments = arguments
        self._paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text and "\n" not in text:
            for name, help_text in self.commands():
                if name.startswith(text[1:]):
                    yield Completion("/" + name, start_position=-len(text), display_meta=help_text)
            return
        if text.startswith("/") and text.count(" ") == 1 and "\n" not in text:
            command, _, partial = text[1:].partition(" ")
            for value in self.arguments(command):
                if value.startswith(partial):
                    yield Completion(value, start_position=-len(partial))
            return
        word = text.split()[-1] if text and not text[-1].isspace() else ""
        if word.startswith("@"):
            word = word[1:]
        if "/" in word or word.startswith(("~", ".")):
            yield from self._paths.get_completions(Document(word, len(word)), complete_event)


def make_session(repl: ReplHost, history_path: Path) -> PromptSession:
    """A PromptSession whose message is the REPL's live region plus the prompt symbol."""
    history_path.parent.mkdir(parents=True, exist_ok=True)
    kb = KeyBindings()
    asking_choices = Condition(lambda: bool(repl.asker.pending and repl.asker.pending.choices))
    empty = Condition(lambda: repl.session is None or not repl.session.default_buffer.text)

    @kb.add("c-c")
    @kb.add("<sigint>")
    def _ctrl_c(event) -> None:
        repl.on_ctrl_c(event.app)

    @kb.add("c-d", filter=empty)
    def _ctrl_d(event) -> None:
        event.app.exit(exception=EOFError)

    @kb.add("escape", "enter")
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("up", filter=asking_choices & empty)
    def _up(event) -> None:
        if repl.asker.pending is not None:
            repl.asker.pending.move(-1)

    @kb.add("down", filter=asking_choices & empty)
    def _down(event) -> None:
        if repl.asker.pending is not None:
            repl.asker.pending.move(1)

    completer = ReplCompleter(repl.command_names, repl.command_arguments)
    session: PromptSession = PromptSession(
        message=repl.prompt_fragments, history=FileHistory(str(history_path)), completer=completer,
        complete_while_typing=True, key_bindings=kb, erase_when_done=True, reserve_space_for_menu=4,
        style=Style.from_dict(STYLE), include_default_pygments_style=False, prompt_continuation="  ",
        enable_suspend=True)
    session.app.min_redraw_interval = 0.01
    return session
