"""Completion scripts are generated from the real parser and actually complete in real shells."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hermes_agent.cli.completion_gen import GENERATORS, walk
from hermes_agent.cli.main import build_parser


def _script(shell: str) -> str:
    return GENERATORS[shell](walk(build_parser()))


def _bash_complete(script_path, *words: str) -> list[str]:
    line = " ".join(f"'{w}'" for w in words)
    prog = (f"source {script_path}\nCOMP_WORDS=({line}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
            "_hermes_complete; printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    return [w for w in out.stdout.splitlines() if w]


def test_bash_completes_subcommands_actions_and_flags(tmp_path):
    script = tmp_path / "hermes.bash"
    script.write_text(_script("bash"))
    assert "sessions" in _bash_complete(script, "hermes", "")
    assert "chat" in _bash_complete(script, "hermes", "")
    assert _bash_complete(script, "hermes", "con") == ["config"]
    # a flag's value (-m gpt) is skipped when finding the command path
    assert sorted(_bash_complete(script, "hermes", "-m", "gpt", "config", "s")) == ["set", "show"]
    assert "--string" in _bash_complete(script, "hermes", "config", "set", "--")
    assert "--limit" in _bash_complete(script, "hermes", "sessions", "list", "--")


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_script_completes(tmp_path):
    script = tmp_path / "hermes.fish"
    script.write_text(_script("fish"))
    out = subprocess.run(["fish", "-c", f"source {script}; complete -C 'hermes config s'"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and out.stderr == ""
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["set", "show"]


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_script_parses_and_describes(tmp_path):
    script = tmp_path / "_hermes"
    script.write_text(_script("zsh"))
    out = subprocess.run(["zsh", "-c", f"source {script} 2>/dev/null; _hermes_described 'subs config'"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0
    assert any(line.startswith("migrate:") for line in out.stdout.splitlines())
    assert subprocess.run(["zsh", "-n", str(script)], timeout=10).returncode == 0
