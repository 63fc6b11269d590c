"""Which subcommand's parser `hermes` builds (cli/main.py _subcommand_in): a subcommand named first is taken as is
(no throwaway parser, issue 24 speed13); flags of hermes's own before it are still skipped with their values."""

from __future__ import annotations

import pytest

from hermes_agent.cli.main import _subcommand_in


@pytest.mark.parametrize(("argv", "expected"), [
    (["chat", "-q", "hi", "-Q"], "chat"),
    (["gateway", "run"], "gateway"),
    (["sessions", "list"], "sessions"),
    (["-m", "gateway", "chat", "-q", "hi"], "chat"),  # "gateway" is -m's value, not the subcommand
    (["--yolo", "-t", "web", "cron", "list"], "cron"),
    (["-m", "x", "--yolo"], "chat"),  # no subcommand: chat (the REPL)
    (["chta", "-q", "hi"], None),  # a typo: every parser, for argparse's "invalid choice"
    (["--help"], None),
])
def test_the_subcommand_is_found_with_or_without_flags_before_it(argv: list[str], expected: str | None) -> None:
    assert _subcommand_in(argv) == expected
