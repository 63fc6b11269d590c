"""Red team #22/#23 (issue 19): what a command runs from the workspace is judged too. A script run by
`bash a.sh` / `./a.sh` / `source`, a Makefile recipe, `python x.py` and package.json scripts are read
(fail-closed, 64 KB) and scanned with the same rules; findings name the file. Real files, the real gate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_agent.approval.rules import scan_command
from hermes_agent.approval.scriptfiles import file_findings
from tests.unit.approval.test_gate import gate_for

FILES = {
    "a.sh": "echo start\nrm -rf ~\n",
    "lib.sh": 'cleanup() { rm -rf "$HOME"; }\n',
    "x.py": "import shutil\nshutil.rmtree('/home')\n",
    "Makefile": "all: build\nbuild:\n\techo built\nclean:\n\t@$(RM) -r ~/\npush:\n\tgit push -f origin main\n",
    "package.json": '{"scripts": {"build": "tsc", "wipe": "rm -rf / --no-preserve-root", "test": "jest"}}',
    "run": "#!/bin/sh\ngit push --force origin main\n",
    "ok.sh": "pytest -q\nruff check .\n",
    "tool.py": "print('hello')\n",
}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "run").chmod(0o755)
    return tmp_path


@pytest.mark.parametrize(("command", "named"), [
    ("bash a.sh", "a.sh"), ("sh a.sh", "a.sh"), ("./a.sh", "./a.sh"), ("source a.sh", "a.sh"), (". a.sh", "a.sh"),
    ("source lib.sh && cleanup", "lib.sh"), ("python3 x.py", "x.py"), ("make clean", "Makefile"),
    ("make push", "Makefile"), ("npm run wipe", "package.json"), ("./run", "./run"), ("cd . && bash a.sh", "a.sh"),
])
def test_dangerous_workspace_files_are_found_and_named(work: Path, command: str, named: str) -> None:
    assert scan_command(command).findings == ()  # the text alone says nothing
    found = file_findings(command, str(work))
    assert found and all(f"(in {named})" in f.description for f in found), found


@pytest.mark.parametrize("command", ["bash ok.sh", "python3 tool.py", "make", "make build", "npm run build",
                                     "npm test", "cat a.sh", "bash missing.sh", "ls -la"])
def test_ordinary_workspace_files_pass(work: Path, command: str) -> None:
    assert file_findings(command, str(work)) == ()


def test_symlinked_or_huge_scripts_are_not_inspectable(work: Path) -> None:
    os.symlink(work / "ok.sh", work / "link.sh")
    (work / "big.sh").write_text("echo x\n" * 20000)
    for command in ("bash link.sh", "bash big.sh"):
        found = file_findings(command, str(work))
        assert [f.key for f in found] == ["script_uninspected"], found


def test_a_changed_file_is_read_again(work: Path) -> None:
    assert file_findings("bash ok.sh", str(work)) == ()
    (work / "ok.sh").write_text("rm -rf ~/ # now\n")
    assert file_findings("bash ok.sh", str(work))


def test_the_gate_asks_about_a_script_and_names_it(work: Path, hermes_home: Path) -> None:
    gate, approver = gate_for(hermes_home, answers=["deny"])
    decision = gate.check("bash a.sh", cwd=str(work))
    assert not decision.allowed
    assert any("a.sh" in str(r) for r in approver.requests), approver.requests
    assert gate.check("bash ok.sh", cwd=str(work)).allowed
