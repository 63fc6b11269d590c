"""Red-team round 6 a16: hermes installed in the project's own virtualenv (`uv add hermes-agent; uv run hermes`).
A confined command dropped a `.pth` into that venv's site-packages (or could edit hermes's modules), and the next
unconfined `hermes` ran it. hermes's code and the Python it runs on are now read-only wherever they lie, under
bubblewrap and Landlock; the rest of the workspace stays writable. Through the real CLI with the scripted model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from tests.helpers import model_config
from tests.integration.test_sandbox_secrets import UNPRIV, _can_drop_privileges, _mechanisms, _user_python

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _attempt(scripted, hermes_home: Path, base: Path, mechanism: str, user: bool = False) -> None:
    """hermes in `base`/proj/.venv (a .pth naming its code), a confined command planting a .pth there and
    appending to hermes's: neither stays, the workspace stays writable, the next start runs nothing planted.
    `user`: all of it as uid 65534 (from root), Landlock and bwrap without privileges."""
    ws = base / "proj"
    ws.mkdir()
    (base / "home").mkdir()
    python = _user_python()[-1] if user else sys.executable
    subprocess.run([python, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    site = next((ws / ".venv/lib").glob("python3.*/site-packages"))
    (site / "hermes_install.pth").write_text(f"{SRC}\n{sysconfig.get_paths()['purelib']}\n")
    model_config(hermes_home, scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    plant = ("printf 'import os; open(os.path.expanduser(\"~/PWNED\"), \"w\")\\n' > "
             f"{site.relative_to(ws)}/zz.pth; echo x >> {site.relative_to(ws)}/hermes_install.pth; "
             "echo ok > notes.txt; cat notes.txt")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": plant}}]}, {"content": "done"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "PYTHONPATH"))}
    env.update(HERMES_HOME=str(hermes_home), HOME=str(base / "home"), PATH=f"{ws}/.venv/bin:{env['PATH']}")
    hermes = [str(ws / ".venv/bin/python"), "-m", "hermes_agent"]
    if user:  # through sh: setpriv's own exec still holds root's capabilities, a child's does not
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(base)], check=True)
        hermes = ["setpriv", f"--reuid={UNPRIV}", f"--regid={UNPRIV}", "--clear-groups", "sh", "-c", '"$@"', "sh",
                  *hermes]
    out = subprocess.run([*hermes, "chat", "-q", "go", "--yolo"], cwd=ws, env=env, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-1500:]
    result = json.loads(next(m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"))
    assert "ok" in result["output"], result  # the workspace itself stays writable
    assert not (site / "zz.pth").exists() and "x" not in (site / "hermes_install.pth").read_text().split("\n")
    subprocess.run([*hermes, "--version"], cwd=ws, env=env, capture_output=True, timeout=60, check=True)
    assert not (base / "home/PWNED").exists()


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_a_command_cannot_change_the_venv_hermes_runs_from(scripted, hermes_home, outside_dir, mechanism):
    _attempt(scripted, hermes_home, outside_dir, mechanism)


@pytest.mark.skipif(not _can_drop_privileges(), reason="needs root, setpriv and a system python uid 65534 can run")
@pytest.mark.parametrize("mechanism", _mechanisms())
def test_a_normal_users_command_cannot_change_the_venv_hermes_runs_from(scripted, mechanism):
    """Issue 19 (a normal user): without privileges Landlock alone cannot make the venv inside the writable
    workspace read-only; the launcher binds it read-only in a mount namespace of its own user namespace."""
    base = Path(tempfile.mkdtemp(prefix="hermes-own-code-", dir="/home"))  # outside /tmp, reachable by uid 65534
    try:
        (base / "hh").mkdir()
        _attempt(scripted, base / "hh", base, mechanism, user=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
