"""Issue 19: a module a confined command writes in a PYTHONPATH directory of the user (`PYTHONPATH=src`,
relative, as people set it) named like one python or hermes imports (`yaml.py`, a `json/` package) would run
unconfined at the user's next `hermes` (or python) start: the guard removes it, says so once, and leaves the
project's own new modules alone. Through the real `hermes chat -q`, bwrap and Landlock, HOME outside /tmp."""

from __future__ import annotations

import os
import subprocess

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import _terminal, home

__all__ = ["home"]  # fixture


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


def _site(prefix, *names: str) -> None:
    """A Python prefix (an interpreter that resolves to the system's, its own site-packages holding `names`)."""
    import sys

    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin/python").symlink_to(os.path.realpath(sys.executable))
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for name in names:
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("")


def test_modules_are_judged_by_the_users_pythons_not_hermes_own(scripted, home, mechanism):
    """Red-team round 11 a21: hermes in a lean venv judged shadowing by its own site-packages, so a
    `requests.py` or `_pytest/` the user's next `python -m pytest` imports stayed. Names the user's Pythons
    import count: the interpreter on the user's PATH, a pipx-style tool whose shebang leads to its venv, the
    workspace venv, widely used distributions; the project's own package (installed editable: a `.pth` path
    line names src/, which is also on PYTHONPATH) and its new modules stay."""
    proj = home / "proj"
    _site(home / "tools", "zzuserlib")
    _site(home / "pipx/venvs/tool", "zzpipxlib")
    (home / ".local/bin").mkdir(parents=True)
    (home / ".local/bin/pytest").write_text(f"#!{home}/pipx/venvs/tool/bin/python\nimport sys\n")
    (home / ".local/bin/pytest").chmod(0o755)
    _site(proj / ".venv", "zzvenvlib")
    (proj / ".venv/pyvenv.cfg").write_text(f"home = {os.path.dirname(os.path.realpath('/usr/bin/python3'))}\n")
    site = next((proj / ".venv/lib").glob("python*/site-packages"))
    (site / "_myproj.pth").write_text(f"{proj}/src\n")  # `pip install -e .` with hatchling: a path line
    (site / "myproj-0.1.dist-info").mkdir()
    (proj / "src/myproj").mkdir(parents=True)
    (proj / "src/myproj/__init__.py").write_text("V = 1\n")
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    planted = ("zzuserlib/__init__.py", "zzpipxlib.py", "zzvenvlib.py", "requests.py", "_pytest/__init__.py")
    scripted.add(_terminal("cd src && for n in " + " ".join(planted) + "; do mkdir -p $(dirname $n);"
                           " echo 'raise SystemExit(\"PWNED\")' > $n; done; echo 'V = 2' > myproj/__init__.py;"
                           " echo 'X = 1' > newmod.py; echo 'Y = 1' > myproj/new.py; echo PLANTED"), {"content": "done"})
    pythonpath = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), "src") if p)
    env = {"HOME": str(home), "PYTHONPATH": pythonpath,
           "PATH": f"{home}/tools/bin:{home}/.local/bin:{os.environ['PATH']}"}
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(proj), timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    result = scripted.requests[-1]["body"]["messages"][-1]["content"]
    assert "PLANTED" in result, result
    left = [n for n in planted if (proj / "src" / n.split("/")[0]).exists()]
    assert not left, f"left: {left}\n{result}"
    for n in planted:
        assert f"src/{n.split('/')[0]}" in result, f"{n} not named\n{result}"
    assert (proj / "src/myproj/__init__.py").read_text() == "V = 2\n", "the project's own package was put back"
    assert (proj / "src/newmod.py").read_text() == "X = 1\n", "the project's new module was touched"
    assert (proj / "src/myproj/new.py").read_text() == "Y = 1\n"


def test_a_relative_pythonpath_entry_counts_in_every_directory(scripted, home, mechanism):
    """rt12 a28: `PYTHONPATH=src` is resolved wherever the user runs python later: a `json.py` in sub/src,
    app/tests/src (made by the command) and pkg/src (there before) is removed, one line each; a new
    sub/src/mylib.py stays."""
    proj = home / "proj"
    (proj / "pkg/src").mkdir(parents=True)
    pwned = home / "pwned"
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    payload = f"open({str(pwned)!r}, 'w').close()\\n"
    plant = "; ".join(f"mkdir -p {d} && printf \"{payload}\" > {d}/json.py" for d in ("sub/src", "app/tests/src",
                                                                                     "pkg/src"))
    scripted.add(_terminal(f"{plant}; printf 'X = 1\\n' > sub/src/mylib.py; echo PLANTED"), {"content": "done"})
    pythonpath = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), "src") if p)
    env = {"HOME": str(home), "PYTHONPATH": pythonpath}
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(proj), timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    result = scripted.requests[-1]["body"]["messages"][-1]["content"]
    assert "PLANTED" in result
    left = [str(p.relative_to(proj)) for p in proj.rglob("json.py")]
    assert left == [], (left, result)
    assert result.count("json.py") >= 3, result
    assert (proj / "sub/src/mylib.py").read_text() == "X = 1\n"
    for d in ("sub", "app/tests", "pkg"):
        subprocess.run(["python3", "-c", "import json"], cwd=proj / d, env={**os.environ, "PYTHONPATH": "src"},
                       timeout=60, capture_output=True)
    assert not pwned.exists(), "the planted module ran"
