"""A venv made inside the sandbox by `uv venv` or `virtualenv` keeps its activate scripts (prov8, issue 19 item 6):
the run-later guard knows them by their shape (terminal/sandbox/venvshapes.py), not by name, so a line planted
in one of them is still put back. Through the real `hermes chat -q`, under bubblewrap and Landlock, HOME
outside /tmp. Needs the tools: `uv` and `virtualenv` on PATH, or HERMES_TEST_UV / HERMES_TEST_VIRTUALENV
(a virtualenv command line)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home

__all__ = ["home"]  # fixture

UV = os.environ.get("HERMES_TEST_UV") or shutil.which("uv")
VIRTUALENV = os.environ.get("HERMES_TEST_VIRTUALENV") or shutil.which("virtualenv")
PY = shutil.which("python3") or "/usr/bin/python3"
FILES = ("activate", "activate.fish", "activate.csh", "activate_this.py")


def _makers() -> list:
    out = [pytest.param(f"{PY} -m venv --without-pip", id="venv")]  # the stdlib's: its template, as before
    for name, cmd in (("uv", f"{UV} venv -q --no-cache --python {PY}" if UV else None),
                      ("virtualenv", f"{VIRTUALENV} -q --no-seed --no-periodic-update -p {PY}" if VIRTUALENV else None)):
        out.append(pytest.param(cmd, id=name, marks=pytest.mark.skipif(cmd is None, reason=f"no {name} here")))
    return out


@pytest.mark.parametrize("make", _makers())
def test_a_venv_made_by_the_tool_keeps_its_activate_scripts_and_loses_a_planted_line(scripted, home, mechanism,
                                                                                     make):
    proj = home / "proj"
    plant = ("printf '\\ntouch \"$PWNED\"\\n' >> .venv/bin/activate;"
             " printf '\\nimport os; os.system(\"touch \" + os.environ[\"PWNED\"])\\n' >> .venv/bin/activate_this.py;"
             " printf '\\ntouch $PWNED\\n' >> .venv/bin/activate.fish; echo PLANTED")
    results = _chat(scripted, home, [
        _terminal(f"{make} .venv && ls .venv/bin && echo MADE"),
        _terminal(plant),
        _terminal(f"{make} --prompt 'my tool' .w && echo MADE-AGAIN"),
    ], mechanism)
    assert "MADE" in results[0] and "the sandbox" not in results[0], results[0]
    assert "MADE-AGAIN" in results[2] and "the sandbox" not in results[2], results[2]
    for f in FILES if "-m venv" not in make else FILES[:3]:
        assert (proj / ".w" / "bin" / f).exists(), f  # a second venv with a prompt of its own: kept whole
    assert "PLANTED" in results[1] and "bin/activate" in results[1], results[1]
    for f in ("activate", "activate_this.py", "activate.fish"):
        text = (proj / ".venv" / "bin" / f).read_text() if (proj / ".venv" / "bin" / f).exists() else ""
        assert "PWNED" not in text, (f, text[-200:])
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PWNED": str(home / "pwned")}
    if (proj / ".venv" / "bin" / "activate").exists():
        subprocess.run(["bash", "-c", ". .venv/bin/activate && deactivate"], cwd=proj, env=env, timeout=60, check=True)
    if (proj / ".venv" / "bin" / "activate_this.py").exists():
        subprocess.run([PY, "-c", "exec(open('.venv/bin/activate_this.py').read(), {'__file__': '.venv/bin/activate_this.py'})"],
                       cwd=proj, env=env, timeout=60, check=False)
    assert not (home / "pwned").exists(), "a line planted in an activate script ran"
    assert shlex.split(make)  # the tool's command line was used as given
    assert Path(proj / ".venv" / "pyvenv.cfg").exists()
