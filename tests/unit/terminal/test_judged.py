"""terminal/judged.py: what the approval gate judged is what the local backend spawns (issue 19, a50/b29)."""

from __future__ import annotations

import os

import pytest

from hermes_agent.terminal import judged


def _check(files: dict, *, sandbox: bool = True, strays: bool = False) -> None:
    with judged.expecting(files, "bash run.sh"):
        judged.check(sandbox, lambda: strays)


def test_the_judged_bytes_pass_and_any_other_bytes_are_refused(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("echo building\n")
    files = {str(script): judged.current(str(script))}
    _check(files)
    os.utime(script, (1, 1))
    _check(files)  # touched, same bytes: runs
    (tmp_path / "new").write_text("rm -rf ~\n")
    os.replace(tmp_path / "new", script)  # swapped by rename
    with pytest.raises(judged.JudgedChanged, match="changed between the approval check and the run"):
        _check(files)


def test_a_file_absent_when_judged_or_swapped_for_a_symlink_is_refused(tmp_path):
    script = str(tmp_path / "run.sh")
    with pytest.raises(judged.JudgedChanged):
        (tmp_path / "run.sh").write_text("echo late\n")
        _check({script: judged.ABSENT})
    judgement = {script: judged.current(script)}
    os.remove(script)
    (tmp_path / "other").write_text("echo late\n")
    os.symlink(tmp_path / "other", script)  # the same bytes behind a link: not what was judged
    with pytest.raises(judged.JudgedChanged):
        _check(judgement)


def test_leaving_the_sandbox_with_a_judged_file_needs_no_confined_process_alive(tmp_path):
    big = tmp_path / "Makefile"
    big.write_text("x" * 70000)  # not inspectable: asked about as such, never re-checked...
    files = {str(big): judged.UNJUDGED}
    _check(files)
    _check(files, sandbox=False)
    with pytest.raises(judged.JudgedChanged, match="was not run outside the sandbox: it runs Makefile"):
        _check(files, sandbox=False, strays=True)  # ...but still kept inside while something confined lives
    judged.add_confined(1, lambda: True)
    try:
        with pytest.raises(judged.JudgedChanged, match="an MCP server"):
            _check(files, sandbox=False)
    finally:
        judged.drop_confined(1)
    _check({}, sandbox=False, strays=True)  # a call that runs no workspace file: nothing to keep
