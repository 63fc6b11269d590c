"""Issue 19: a module a confined command writes in a PYTHONPATH directory of the user (`PYTHONPATH=src`,
relative, as people set it) named like one python or hermes imports (`yaml.py`, a `json/` package) would run
unconfined at the user's next `hermes` (or python) start: the guard removes it, says so once, and leaves the
project's own new modules alone. Through the real `hermes chat -q`, bwrap and Landlock, HOME outside /tmp."""

from __future__ import annotations

import os
import subprocess

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import _terminal, home, mechanism

__all__ = ["home", "mechanism"]  # fixtures


def test_a_module_shadowing_one_hermes_imports_on_the_users_pythonpath_is_removed(scripted, home, mechanism):
    proj = home / "proj"
    (proj / "src").mkdir(parents=True)
    pwned = home / "pwned"
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    payload = f"open({str(pwned)!r}, 'w').close()\\n"
    scripted.add(_terminal(f"printf \"{payload}\" > src/yaml.py; mkdir src/json; printf \"{payload}\" > "
                           "src/json/__init__.py; printf 'X = 1\\n' > src/mylib.py; echo PLANTED"),
                 {"content": "done"})
    pythonpath = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), "src") if p)
    env = {"HOME": str(home), "PYTHONPATH": pythonpath}
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(proj), timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    result = scripted.requests[-1]["body"]["messages"][-1]["content"]
    assert "PLANTED" in result
    assert not (proj / "src/yaml.py").exists() and not (proj / "src/json").exists(), result
    assert "src/yaml.py" in result and "PYTHONPATH" in result, result  # the model is told, in one line each
    assert (proj / "src/mylib.py").read_text() == "X = 1\n", "the project's own new module was touched"
    again = run_hermes("--version", home=home / ".hermes", cwd=str(proj), env=env, timeout=60)
    assert again.returncode == 0, again.stderr
    subprocess.run(["python3", "-c", "import yaml, json"], cwd=proj, env={**os.environ, **env}, timeout=60,
                   capture_output=True)
    assert not pwned.exists(), "the planted module ran"


def test_hermes_never_imports_from_the_directory_it_starts_in_yet_runs_from_its_own_venv(tmp_path):
    """`python -m hermes_agent` puts the working directory first on sys.path: a `ruamel.py` a command left
    there must not be what hermes imports next (config show imports ruamel.yaml lazily); and hermes started
    inside the directory that holds its own venv (a developer's checkout) keeps its dependencies."""
    import sys

    work = tmp_path / "work"
    work.mkdir()
    (work / "ruamel.py").write_text("raise SystemExit('SHADOWED: the workspace module ran')\n")
    home = tmp_path / "hermes"
    home.mkdir()
    env = {**os.environ, "HERMES_HOME": str(home), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "hermes_agent", "config", "show"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "SHADOWED" not in out.stdout + out.stderr, out.stderr
    own = os.path.dirname(os.path.realpath(sys.prefix))  # the directory holding hermes's venv
    out = run_hermes("config", "show", home=home, cwd=own, timeout=120)
    assert out.returncode == 0, out.stderr
