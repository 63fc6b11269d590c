"""Every subcommand of the real `hermes`, walked from its argparse tree, run with bad input (unknown names and
ids, negative and huge numbers, odd characters, a path that is not what was asked for, an empty string):
each must end with a clear message and an exit status, never a traceback, an internal error or a hang.
Long-running servers and the commands that change the installation are left out (tests of their own cover
their bad input: test_first_hour.py, test_api_server.py, test_dashboard.py, test_gateway_*.py)."""

from __future__ import annotations

import argparse
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hermes_agent.cli.main import SUBCOMMANDS, build_parser
from tests.helpers import HERMES

SKIP = {("update",), ("uninstall",), ("api",), ("dashboard",), ("acp",), ("cron", "daemon"), ("gateway", "run"),
        ("gateway", "start"), ("gateway", "restart"), ("gateway", "install"), ("gateway", "uninstall")}
NUMBERS = ["-5", "0", "99999999999999999999"]
# "@DIR@" is a directory inside the test's own tmp dir where a file is expected (never a real system file: these
# commands run as the user, often root, and an export to a path writes there); "../../x" stays inside it too.
BAD = ["no-such-thing", "-5", "💥%s{}'\"", "99999999999999999999", "@DIR@", "", "a=b", "../../x"]


def _leaves(parser: argparse.ArgumentParser, prefix: list[str]):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, [*prefix, name])


def _cases(command: str) -> list[list[str]]:
    """argv lists for one top-level command: each leaf with bad positionals; once more with every free-text
    option set to a bad value; and each typed option alone with each of NUMBERS (negative, zero, huge). The bad values rotate through BAD and NUMBERS."""
    out: list[list[str]] = []
    turn = 0
    for path, parser in _leaves(build_parser(command), []):
        if not path or path[0] != command or tuple(path) in SKIP:
            continue
        positionals = [a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]
        args = []
        for a in positionals:
            args.append(sorted(a.choices)[0] if a.choices else BAD[turn % len(BAD)])
            turn += 1
        out.append([*path, *args])
        text = []
        for opt in parser._actions:
            if not opt.option_strings or opt.nargs == 0 or opt.choices is not None or opt.dest == "help":
                continue
            turn += 1
            if opt.type not in (None, str):  # int, float or a checking type of the command's own
                out += [[*path, *args, opt.option_strings[-1], n] for n in NUMBERS]
            else:
                text += [opt.option_strings[-1], BAD[turn % len(BAD)]]
        if text:
            out.append([*path, *args, *text])
    return out


@pytest.fixture
def walk_env(tmp_path: Path) -> dict:
    home, user = tmp_path / "hermes_home", tmp_path / "user"
    user.mkdir()
    (home / "config.yaml").write_text("model:\n  provider: custom\n  default: m\n  base_url: http://127.0.0.1:9/v1\n"
                                      "  api_key: k\nagent:\n  retry_base_delay: 0.01\n  api_max_retries: 0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(home), HOME=str(user))
    env.pop("EDITOR", None)
    env.pop("VISUAL", None)
    return env


@pytest.mark.parametrize("command", sorted(c for c in SUBCOMMANDS if (c,) not in SKIP))
def test_bad_input_never_shows_a_traceback(command: str, walk_env: dict, tmp_path: Path) -> None:
    target, cwd = tmp_path / "dir-not-file", tmp_path / "a" / "b" / "c"
    target.mkdir()
    cwd.mkdir(parents=True)
    cases = [[arg.replace("@DIR@", str(target)) for arg in argv] for argv in _cases(command)]

    def run(argv: list[str]) -> str:
        try:
            proc = subprocess.run([HERMES, *argv], env=walk_env, cwd=str(cwd), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return f"hermes {argv}: still running after 30 s"
        out = proc.stdout + proc.stderr
        if "Traceback" in out or "internal error" in out:
            return f"hermes {argv} (exit {proc.returncode}):\n{out[-1500:]}"
        if proc.returncode < 0:
            return f"hermes {argv}: killed by signal {-proc.returncode}"
        return ""

    with ThreadPoolExecutor(2) as pool:
        problems = [p for p in pool.map(run, cases) if p]
    assert not problems, "\n\n".join(problems)
