"""`hermes chat`: one-shot (-q) runs print the answer on stdout, progress on stderr; no -q opens the REPL."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent.config.settings import Settings

if TYPE_CHECKING:
    from hermes_agent.bootstrap.options import RunOptions


def add_parser(subparsers) -> None:
    from hermes_agent.cli.main import add_model_flags

    p = subparsers.add_parser("chat", help="chat with the agent (interactive, or one-shot with -q)")
    add_model_flags(p, sub=True)
    p.add_argument("-q", "--query", help="run one message and print the final answer")
    p.add_argument("-Q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--max-iterations", "--max-turns", dest="max_iterations", type=int,
                   help="max model calls per turn (default: agent.max_turns)")
    p.add_argument("--save-trajectories", action="store_true", help="append ShareGPT trajectories")
    p.add_argument("--image", metavar="PATH", help="attach a local image to the query (-q)")


SETS_UP_LOGGING = True  # after the interactive prompt shows: logging (with traceback, textwrap) is ~10 ms of import


def run(args: argparse.Namespace, settings: Settings) -> int:
    query = getattr(args, "query", None)
    if getattr(args, "oneshot", None):  # Hermes's `hermes -z PROMPT`; approvals still apply
        query, args.quiet = args.oneshot, True
    if getattr(args, "image", None) and query is None:  # as Hermes: an image alone is a one-shot question
        query = "What do you see in this image?"
    if query is None and not sys.stdin.isatty():
        query = sys.stdin.read().strip()
        if not query:
            print("hermes: nothing to do: pass -q \"message\" or pipe a message on stdin", file=sys.stderr)
            return 2
    if query is not None and not query.strip():
        print("hermes: empty message: nothing to send to the model", file=sys.stderr)
        return 2
    early = query is None and not getattr(args, "worktree", False)
    line = None
    if early:  # the prompt shows before the run's flags are read and the REPL is built (issue 24: prompt ready)
        from hermes_agent.cli.banner import show_early_prompt

        line = show_early_prompt(settings)
    from hermes_agent.cli.logs import setup_logging
    from hermes_agent.cli.run_flags import enter_worktree, image_data_url, run_options

    setup_logging()

    try:
        options = run_options(args, settings)
    except BaseException:
        if line is not None:  # a bad flag: its one line replaces the early prompt
            line.finish(leaving=True)
        elif early:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()
        raise
    images = (image_data_url(args.image),) if getattr(args, "image", None) else ()
    worktree, options = enter_worktree(args, options, sys.stdout if query is None else sys.stderr)
    try:
        if query is None:
            from hermes_agent.cli.repl import run_repl

            return run_repl(args, settings, options, banner_shown=early, early=line)
        if images:
            query = f"{query.strip()}\n\n[Image attached at: {Path(args.image).expanduser().resolve()}]"
        return run_oneshot(args, settings, query, options, images)
    finally:
        if worktree is not None:
            from hermes_agent.cli.worktree import finish

            print(finish(worktree), file=sys.stderr)


def run_oneshot(args: argparse.Namespace, settings: Settings, query: str, options: RunOptions | None = None,
                images: tuple[str, ...] = ()) -> int:
    """Run one turn; the answer goes to stdout."""
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.cli.render import ProgressPrinter
    from hermes_agent.cli.run_flags import resume_target

    toolsets = [t.strip() for t in args.toolsets.split(",")] if getattr(args, "toolsets", None) else None
    quiet = bool(getattr(args, "quiet", False))
    if not quiet:
        from hermes_agent.cli.logs import warnings_to_stderr

        warnings_to_stderr()
    printer = ProgressPrinter(quiet=quiet)
    agent = build_agent(settings, platform="cli", toolsets=toolsets, event_callback=printer,
                        max_iterations=getattr(args, "max_iterations", None), interactive=sys.stdin.isatty(),
                        save_trajectories=bool(getattr(args, "save_trajectories", False)),
                        resume=resume_target(args), options=options)
    try:
        outcome = agent.run_turn(query, images=images)
    except KeyboardInterrupt:
        agent.interrupt()
        print("hermes: interrupted", file=sys.stderr)
        return 130
    finally:
        session_id = agent.session_id
        agent.close()
        run_later_report()
    if session_id and not quiet:
        print(f"session {session_id} (continue with: hermes chat --resume {session_id})", file=sys.stderr)
    text = outcome.final_text
    if not text.strip():
        print("hermes: the model returned an empty answer", file=sys.stderr)
        return 1
    from hermes_agent.termsafe import visible

    print(visible(text))  # the model's answer: its escape sequences are shown, not sent to the terminal
    return 0 if outcome.reason == "stop" else 3


def run_later_report(say=None) -> None:  # noqa: ANN001 - a callable taking one line
    """Tell the user once which files they run by hand (package.json scripts, Makefile...) this session changed."""
    from hermes_agent.terminal.base import run_later_lines

    for line in run_later_lines():
        (say or (lambda text: print(text, file=sys.stderr)))(line)
