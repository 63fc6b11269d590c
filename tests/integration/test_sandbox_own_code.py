"""Red-team round 6 a16: hermes installed in the project's own virtualenv (`uv add hermes-agent; uv run hermes`).
A confined command dropped a `.pth` into that venv's site-packages (or could edit hermes's modules), and the next
unconfined `hermes` ran it. hermes's code and the Python it runs on are now read-only wherever they lie, under
bubblewrap and Landlock; the rest of the workspace stays writable. Through the real CLI with the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.helpers import model_config
from tests.integration.test_sandbox_secrets import _mechanisms

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.parametrize("mechanism", _mechanisms())
def test_a_command_cannot_change_the_venv_hermes_runs_from(scripted, hermes_home, outside_dir, mechanism):
    ws = outside_dir / "proj"
    ws.mkdir()
    (outside_dir / "home").mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    site = next((ws / ".venv/lib").glob("python3.*/site-packages"))
    (site / "hermes_install.pth").write_text(f"{SRC}\n{sysconfig.get_paths()['purelib']}\n")
    model_config(hermes_home, scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    plant = ("printf 'import os; open(os.path.expanduser(\"~/PWNED\"), \"w\")\\n' > "
             f"{site.relative_to(ws)}/zz.pth; echo x >> {site.relative_to(ws)}/hermes_install.pth; "
             "echo ok > notes.txt; cat notes.txt")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": plant}}]}, {"content": "done"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_", "PYTHONPATH"))}
    env.update(HERMES_HOME=str(hermes_home), HOME=str(outside_dir / "home"), PATH=f"{ws}/.venv/bin:{env['PATH']}")
    hermes = [str(ws / ".venv/bin/python"), "-m", "hermes_agent"]
    out = subprocess.run([*hermes, "chat", "-q", "go", "--yolo"], cwd=ws, env=env, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-1500:]
    result = json.loads(next(m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"))
    assert "ok" in result["output"], result  # the workspace itself stays writable
    assert not (site / "zz.pth").exists() and "x" not in (site / "hermes_install.pth").read_text().split("\n")
    subprocess.run([*hermes, "--version"], cwd=ws, env=env, capture_output=True, timeout=60, check=True)
    assert not (outside_dir / "home/PWNED").exists()
