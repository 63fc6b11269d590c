"""~/.bashrc is sourced once per session in a call of its own: a slow start-up file (pyenv, nvm, conda) does not eat
the first command's timeout, and one that never finishes is given up on with a line, not sourced again each call."""

from __future__ import annotations

import os
import time

from hermes_agent.terminal import local
from hermes_agent.terminal.local import LocalBackend


def _backend(tmp_path, rc: str) -> LocalBackend:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(rc)
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return LocalBackend(str(work), env=env)


def test_a_slow_bashrc_does_not_eat_the_first_commands_timeout(tmp_path):
    b = _backend(tmp_path, "sleep 1.5\nexport FROM_RC=yes\nrcfn() { echo fn-from-rc; }\n")
    try:
        res = b.execute("echo started $FROM_RC; rcfn", timeout=1)
        assert not res.timed_out and res.output.split() == ["started", "yes", "fn-from-rc"]
        begun = time.monotonic()
        again = b.execute("echo $FROM_RC", timeout=1)  # sourced once: the saved state carries it
        assert again.output == "yes\n" and time.monotonic() - begun < 1.5
    finally:
        b.close()


def test_a_bashrc_that_never_finishes_is_given_up_on_with_a_line(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "_RC_LIMIT_S", 1.0)
    b = _backend(tmp_path, "export EARLY=1\nsleep 60\n")
    try:
        begun = time.monotonic()
        res = b.execute("echo ran ${EARLY:-without-rc}", timeout=20)
        assert res.exit_code == 0 and res.output.startswith("ran without-rc\n")
        assert "~/.bashrc did not finish within 1s" in res.output and time.monotonic() - begun < 10
        begun = time.monotonic()
        again = b.execute("echo second")
        assert again.output == "second\n" and time.monotonic() - begun < 5  # not tried again
    finally:
        b.close()
