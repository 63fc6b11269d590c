"""The interactive chat: the prompt stays on the main thread; the agent is built and every turn runs on
one runner thread, so typing, queueing, Ctrl-C and approvals work while the model streams."""

from __future__ import annotations

import argparse
import logging
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any

from hermes_agent import paths
from hermes_agent.cli.repl_state import Job, SlashCommand, Totals
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError, HermesError

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from hermes_agent.bootstrap.options import RunOptions
    from hermes_agent.cli.early_line import EarlyLine
    from hermes_agent.core.contract import AgentSession

log = logging.getLogger(__name__)


def run_repl(args: argparse.Namespace, settings: Settings, options: RunOptions | None = None,
             banner_shown: bool = False, early: EarlyLine | None = None) -> int:
    """Open the interactive chat (options: the bootstrap RunOptions of the chat flags; banner_shown: the banner
    and the early prompt are on screen already; early: the first line's editor running since); returns the
    exit code."""
    try:
        repl = Repl(args, settings)
    except BaseException:
        if early is not None:
            early.finish(leaving=True)
        raise
    repl.options = options
    return repl.run(banner_shown, early)


class Repl:
    """State shared by the prompt, the runner thread and the slash-command handlers."""

    def __init__(self, args: argparse.Namespace, settings: Settings) -> None:
        from hermes_agent.cli.approver import Asker, ReplApprover
        from hermes_agent.cli.live import LiveView
        from hermes_agent.cli.screen import Screen

        self.args, self.settings = args, settings
        raw = getattr(args, "toolsets", None)
        self.toolsets = [t.strip() for t in raw.split(",") if t.strip()] if raw else None
        self.agent: AgentSession | None = None
        self.ready = threading.Event()
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.side: queue.Queue[Job | None] = queue.Queue()  # immediate commands, never blocking the prompt
        self.exit_code: int | None = None
        self.totals = Totals()
        self.session: PromptSession[object] | None = None
        self.color = not settings.env.get("NO_COLOR")
        self.screen = Screen(sys.stdout, color=self.color)
        display = settings.cfg.display
        self.live = LiveView(self.screen, self.invalidate, show_reasoning=display.show_reasoning,
                             progress=display.tool_progress,
                             stream=display.streaming)
        self.asker = Asker(self.screen, self.invalidate)
        self.approver = ReplApprover(self.asker, timeout=settings.cfg.approvals.timeout,
                                     yolo=settings.yolo)
        self._runner: threading.Thread | None = None
        self.personality: str | None = None  # chosen with /personality; re-applied after /new
        self._first = ("", 0)  # the first prompt's text and cursor (from the first line's editor)
        self.options: RunOptions | None = None  # RunOptions from the chat flags (-s, --ignore-rules, --safe-mode, -c NAME)

    # -- the prompt (main thread) ---------------------------------------------------------------

    def run(self, banner_shown: bool = False, early: EarlyLine | None = None) -> int:
        from hermes_agent.cli.screen import PromptWriter

        if not banner_shown:
            from hermes_agent.cli.banner import show_early_prompt

            early = show_early_prompt(self.settings)
        try:
            from hermes_agent.cli.prompt import make_session

            self.session = session = make_session(self, paths.hermes_home() / ".hermes_history")
        except BaseException:
            if early is not None:
                early.finish(leaving=True)
            raise
        session.app.after_render += self._start_runner
        if early is None:
            sys.stdout.write("\r\x1b[K")  # the real prompt draws from the start of this line
            sys.stdout.flush()
        elif not self._take_over(early.finish(), session):
            return 0

        saved = sys.stdout, sys.stderr
        writer = PromptWriter(session.app, saved[0])
        # stray prints also land above the prompt (a duck-typed stream: PromptWriter is not a typing.TextIO)
        self.screen.out = sys.stdout = sys.stderr = writer  # type: ignore[assignment]
        session_id = None
        try:
            self._loop(session)
        finally:
            session_id = self._shutdown()
            writer.flush()
            sys.stdout, sys.stderr = saved
            self.screen.out = sys.stdout
        if session_id:  # like Hermes: how to come back to this conversation
            print(f"\nResume this session with:\n  hermes --resume {session_id}\n  hermes chat --continue")
        return self.exit_code or 0

    def _take_over(self, early: EarlyLine, session: PromptSession[object]) -> bool:
        """What the first line's editor got: lines entered (queued, kept in the history, already on screen) and
        the line being edited (the prompt starts with it); False when it was left with Ctrl-D/Ctrl-C."""
        for text in early.lines:
            if text.strip():
                session.history.append_string(text)
            self.submit(text, echoed=True)
        self._first = (early.text, early.cursor)
        return not early.eof

    def _loop(self, session: PromptSession[object]) -> None:
        """One prompt for the whole session: input is handled inside it (`_accept`), so the terminal
        never drops back to cooked mode between messages and keys typed at any moment are kept."""
        from prompt_toolkit.document import Document

        session.default_buffer.accept_handler = self._accept
        while self.exit_code is None:
            text, cursor = self._first
            self._first = ("", 0)
            try:
                session.prompt(pre_run=self._pre_run, default=Document(text, cursor))
            except (EOFError, KeyboardInterrupt):
                return

    def _pre_run(self) -> None:
        if self.exit_code is not None and self.session is not None:
            self.session.app.exit(exception=EOFError)

    def _accept(self, buffer: Buffer) -> bool:
        """Enter: answer a pending question, or submit; the input line is cleared either way."""
        text = buffer.text
        if self.asker.answer(text):
            buffer.reset()  # answers stay out of the input history
            return False
        self.submit(text)
        return False

    def submit(self, text: str, echoed: bool = False) -> None:
        """Route one line of input: immediate commands run on the side thread, the rest queue (echoed: the
        line is on screen already, as the first line's editor left it)."""
        from hermes_agent.cli import slash

        stripped = text.strip()
        if not stripped:
            return
        if not slash.is_command(stripped):
            self.enqueue(Job(text, echoed=echoed))
            return
        command, arg = slash.lookup(stripped)
        skill = slash.skill_message(self.settings, stripped) if command is None else None
        if skill is not None:  # installed skills are slash commands too
            self.enqueue(Job(stripped, message=skill, echoed=echoed))
            return
        if command is None or command.immediate:
            self.side.put(Job(stripped, command, arg, echoed=echoed))
        else:
            self.enqueue(Job(stripped, command, arg, echoed=echoed))

    def enqueue(self, job: Job) -> None:
        self.live.queued.append(job.text)
        self.jobs.put(job)
        self.invalidate()

    def echo(self, text: str) -> None:
        """Print what the user typed, as it would have looked at the prompt."""
        rows = text.split("\n")
        self.screen.lines([self.screen.style("❯ ", "bold_cyan") + rows[0], *("  " + r for r in rows[1:])])

    def on_ctrl_c(self, app: Application[Any]) -> None:
        """Ctrl-C: cancel a question, else stop the turn, else clear the line, else exit."""
        buf = app.current_buffer
        if self.asker.pending is not None:
            self.asker.answer(None)
            self.interrupt()
        elif self.live.busy:
            self.interrupt()
        elif buf.text:
            buf.reset()
        else:
            app.exit(exception=EOFError)

    def interrupt(self) -> None:
        """Stop the running turn and drop queued input."""
        dropped = 0
        while True:
            try:
                if self.jobs.get_nowait() is not None:
                    dropped += 1
            except queue.Empty:
                break
        self.live.queued.clear()
        if self.agent is not None:
            self.agent.interrupt()
        if dropped:
            self.screen.line(f"dropped {dropped} queued message(s)", "dim")
        self.invalidate()

    def prompt_fragments(self) -> StyleAndTextTuples:
        """What the prompt draws above and at the input: live region, question or `❯`."""
        size = self.session.app.output.get_size() if self.session else None
        cols, rows = (size.columns, size.rows) if size else (100, 24)
        out: StyleAndTextTuples = list(self.live.fragments(cols, max(3, min(14, rows - 8))))
        question = self.asker.pending
        if question is None:
            return [*out, ("class:symbol", "❯ ")]
        for i, choice in enumerate(question.choices):
            style = "class:choice.selected" if i == question.selected else "class:choice"
            out.append((style, f"  {i + 1}. {choice}"))
            out.append(("", "\n"))
        return [*out, ("class:question", question.prompt)]

    def invalidate(self) -> None:
        """Redraw the prompt soon (safe from any thread)."""
        app = self.session.app if self.session is not None else None
        if app is not None and app.is_running:
            app.invalidate()

    def request_exit(self, code: int = 0) -> None:
        """Leave the REPL after the current input (safe from any thread)."""
        self.exit_code = code
        app = self.session.app if self.session is not None else None
        if app is not None and app.is_running and app.loop is not None:
            app.loop.call_soon_threadsafe(_exit_app, app)

    # -- agent access ---------------------------------------------------------------------------

    def require_agent(self, timeout: float = 60.0) -> AgentSession:
        """The agent, waiting for the background build; raises HermesError when it failed."""
        if not self.ready.wait(timeout):
            raise HermesError("the agent is still starting; try again in a moment")
        if self.agent is None:
            raise HermesError("the agent could not be started (see the error above)")
        return self.agent

    def command_names(self) -> list[tuple[str, str]]:
        from hermes_agent.cli import slash

        return slash.completions()

    def command_arguments(self, name: str) -> list[str]:
        from hermes_agent.cli import slash

        return slash.argument_values(self, name)

    def run_command(self, command: SlashCommand, arg: str) -> None:
        """Run a slash command; failures become one line."""
        try:
            command.handler(self, arg)
        except HermesError as exc:
            self.screen.line(f"error: {exc}", "red")
        except Exception as exc:  # a frontend boundary: one line for the user, details in the log
            log.debug("slash command failed", exc_info=True)
            self.screen.line(f"error: {type(exc).__name__}: {exc}", "red")

    # -- the runner thread ----------------------------------------------------------------------

    def _start_runner(self, _sender: object = None) -> None:
        if self._runner is None:
            self._runner = threading.Thread(target=self._run_jobs, name="hermes-repl-runner", daemon=True)
            self._runner.start()
            threading.Thread(target=self._run_side, name="hermes-repl-commands", daemon=True).start()

    def _run_side(self) -> None:
        from hermes_agent.cli import slash

        while True:
            job = self.side.get()
            if job is None:
                return
            if not job.echoed:
                self.echo(job.text)
            if job.command is None:
                self.screen.line(slash.unknown_message(job.text), "yellow")
            else:
                self.run_command(job.command, job.arg)

    def _run_jobs(self) -> None:
        from hermes_agent.cli.session import build

        build(self)
        while True:
            job = self.jobs.get()
            if job is None or self.exit_code is not None:
                return
            if self.live.queued:
                self.live.queued.pop(0)
            self.live.begin("thinking" if job.command is None else "working")
            try:
                if not job.echoed:
                    self.echo(job.text)
                if job.command is None:
                    self.run_message(job.message or job.text)
                else:
                    self.run_command(job.command, job.arg)
            finally:
                self.live.end()

    def run_message(self, text: str) -> None:
        """Run one user turn on this thread (the runner) and add its usage to the totals."""
        try:
            agent = self.require_agent()
            outcome = agent.run_turn(text)
        except ConfigError as exc:
            self.screen.line(f"config error: {exc}", "red")
            return
        except HermesError as exc:
            self.screen.line(f"error: {exc}", "red")
            return
        except Exception as exc:  # frontend boundary: keep the REPL alive
            log.debug("turn failed", exc_info=True)
            self.screen.line(f"error: {type(exc).__name__}: {exc}", "red")
            return
        self.totals.usage = self.totals.usage + outcome.usage
        self.totals.api_calls += outcome.api_calls
        self.totals.turns += 1
        from hermes_agent.cli.commands.chat import run_later_report

        run_later_report(lambda line: self.screen.line(line, "yellow"))

    def _shutdown(self) -> str | None:
        """Stop the runner and close the agent; returns the id of the session it wrote, if any."""
        self.asker.answer(None)
        if self.live.busy and self.agent is not None:
            self.agent.interrupt()
        self.jobs.put(None)
        self.side.put(None)
        if self._runner is not None:
            self._runner.join(timeout=10)
        if self.agent is None:
            return None
        session_id = self.agent.session_id
        try:
            self.agent.close()
        except Exception:  # closing must not turn a clean exit into a traceback
            log.debug("agent.close failed", exc_info=True)
        return session_id


def _exit_app(app: Application[Any]) -> None:
    try:
        if app.is_running and app.future is not None and not app.future.done():
            app.exit(exception=EOFError)
    except Exception:  # already exiting
        log.debug("app.exit failed", exc_info=True)
