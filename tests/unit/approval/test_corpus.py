"""Detection rates over the labelled corpus (tests/fixtures/approval_corpus.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hermes_agent.approval.rules import detect_dangerous_command, detect_hardline_command, scan_command

CORPUS_PATH = Path(__file__).parents[2] / "fixtures" / "approval_corpus.yaml"
CORPUS = YAML(typ="safe", pure=True).load(CORPUS_PATH.read_text(encoding="utf-8"))
BYPASS_CLASSES = {
    "absolute_path", "quotes_in_word", "backslash", "shell_c", "wrapper_env", "env_split", "wrapper_assign",
    "wrapper_command", "wrapper_exec", "wrapper_nice", "wrapper_nohup", "wrapper_timeout", "wrapper_stdbuf",
    "wrapper_xargs", "wrapper_sudo", "wrapper_doas", "wrapper_time", "wrapper_busybox", "interpreter", "cmd_subst",
    "backticks", "eval", "compound", "ansi", "nul", "fullwidth", "zero_width", "ifs", "ansi_c_quote", "variable",
    "brace_expansion", "decoded_pipe", "decoded_subst", "heredoc", "curl_pipe", "process_subst", "remote_subst",
    "chmod_exec", "exec_option", "dynamic_name", "parse_failure", "cwd", "su_c", "watch", "ssh_remote", "find_exec",
    "herestring", "alias", "nested", "echo_pipe", "env_program", "wrapper_npx", "write_then_run",
    "function", "param_expansion", "glob", "symlink", "long_option",
}


def test_corpus_size() -> None:
    hard, dangerous, benign = CORPUS["hardline"], CORPUS["dangerous"], CORPUS["benign"]
    assert len(hard) + len(dangerous) + len(benign) >= 300
    assert len(hard) + len(dangerous) >= 150 and len(benign) >= 150


def test_every_bypass_class_is_in_the_corpus() -> None:
    present = {e["cls"] for e in CORPUS["hardline"] + CORPUS["dangerous"] if "cls" in e}
    assert BYPASS_CLASSES <= present, sorted(BYPASS_CLASSES - present)


@pytest.mark.parametrize("entry", CORPUS["hardline"], ids=lambda e: repr(e["cmd"])[:60])
def test_hardline_detected(entry: dict) -> None:
    is_hard, key, _ = detect_hardline_command(entry["cmd"])
    assert is_hard, entry["cmd"]
    assert entry["key"] in scan_command(entry["cmd"]).keys
    assert detect_dangerous_command(entry["cmd"])[0]
    assert key is not None


@pytest.mark.parametrize("entry", CORPUS["dangerous"], ids=lambda e: repr(e["cmd"])[:60])
def test_dangerous_detected(entry: dict) -> None:
    is_dangerous, key, description = detect_dangerous_command(entry["cmd"])
    assert is_dangerous, entry["cmd"]
    assert description
    assert entry["key"] in scan_command(entry["cmd"]).keys, (entry["cmd"], scan_command(entry["cmd"]).keys)


@pytest.mark.parametrize("cmd", CORPUS["benign"], ids=lambda c: repr(c)[:60])
def test_benign_not_flagged(cmd: str) -> None:
    assert detect_dangerous_command(cmd) == (False, None, None), scan_command(cmd).keys


def test_rates() -> None:
    flagged = [e["cmd"] for e in CORPUS["hardline"] + CORPUS["dangerous"] if detect_dangerous_command(e["cmd"])[0]]
    false_pos = [c for c in CORPUS["benign"] if detect_dangerous_command(c)[0]]
    assert len(flagged) == len(CORPUS["hardline"]) + len(CORPUS["dangerous"])
    assert false_pos == []
