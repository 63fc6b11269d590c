"""`hermes --help` lists the subcommands from cli/main.py's SUMMARIES without importing any command module:
the table must say what each module's own parser says, and the help a user sees must be the same either way."""

from __future__ import annotations

import argparse

from hermes_agent.cli.main import SUBCOMMANDS, SUMMARIES, build_parser
from tests.helpers import run_hermes


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in subs._choices_actions}


def test_summaries_match_each_command_modules_own_help() -> None:
    assert set(SUMMARIES) == set(SUBCOMMANDS)
    assert _summaries(build_parser(summaries_only=True)) == _summaries(build_parser()), (
        "a subcommand's help changed: update SUMMARIES in src/hermes_agent/cli/main.py")


def test_top_level_help_is_the_full_parsers_help(hermes_home, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # the same width in here and in the real `hermes`
    full = build_parser().format_help()
    proc = run_hermes("--help", home=hermes_home, env={"COLUMNS": "100"})
    assert proc.returncode == 0
    assert proc.stdout == full
    assert "gateway" in proc.stdout and "Messaging gateway" in proc.stdout


def test_a_subcommands_help_and_a_typo_still_work(hermes_home) -> None:
    proc = run_hermes("sessions", "--help", home=hermes_home)
    assert proc.returncode == 0 and "usage: hermes sessions" in proc.stdout
    proc = run_hermes("sesions", home=hermes_home)
    assert proc.returncode == 2 and "invalid choice: 'sesions'" in proc.stderr
