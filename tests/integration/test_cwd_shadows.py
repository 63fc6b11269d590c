"""rt13 a44 through the real `hermes chat -q`: python run in the workspace (`python -m X`, `-c`, the REPL) puts
it first on sys.path, so a module a command leaves there named like one the user's Python imports (yaml.py,
a `hermes_agent/` package) runs at the user's next `python -m hermes_agent` unconfined. Such a module is put
back with a line; a standard module's name (random.py: a beginner's own file) stays in an ordinary turn; the
project's own modules stay."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home  # noqa: F401

PLANT = ("mkdir -p hermes_agent && echo 'open(\"/tmp/x\",\"w\")' > hermes_agent/__init__.py && "
         "echo 'import os; os.system(\"touch PWNED\")' > yaml.py && echo 'print(4)' > random.py && "
         "echo 'x = 1' > mymodule.py && echo PLANTED")


def test_modules_shadowing_imports_in_the_workspace_are_put_back(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    results = _chat(scripted, home, [_terminal(PLANT)], mechanism)
    assert "PLANTED" in results[0], results[0]
    assert not (proj / "yaml.py").exists() and not (proj / "hermes_agent").exists(), results[0]
    assert "yaml.py" in results[0] and "hermes_agent" in results[0], results[0]
    assert (proj / "random.py").read_text() == "print(4)\n" and (proj / "mymodule.py").exists()
    out = subprocess.run([sys.executable, "-c", "import yaml; print(yaml.__file__)"], cwd=proj, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert str(proj) not in out.stdout and not (proj / "PWNED").exists(), out.stdout + out.stderr


def _commit_files(home_dir, proj, files: dict[str, str]) -> None:  # noqa: ANN001
    for rel, text in files.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=proj, check=True, env={**os.environ, "HOME": str(home_dir)})
    subprocess.run(["git", "commit", "-qm", "files"], cwd=proj, check=True, env={**os.environ, "HOME": str(home_dir)})


def test_shadows_beside_a_script_or_a_test_at_any_depth_are_put_back(scripted, home, mechanism):  # noqa: F811
    """rt13 a58: `python scripts/tool.py` puts scripts/ first on sys.path, pytest's prepend mode a test's
    directory (or, for tests in a package, the first directory above it: src/): a new yaml.py / tomli_w.py /
    rich/ there runs at the user's next run, at any depth; the project's own module of such a name edited by a
    command, a new module of its own name, and modules in a package's own directory stay."""
    proj = home / "proj"
    _commit_files(home, proj, {"scripts/tool.py": "import yaml\nprint('tool ok')\n",
                               "tests/test_x.py": "import tomli_w\n\ndef test_x():\n    assert True\n",
                               "a/b/c/d/e/run.py": "import certifi\n", "src/pkg/__init__.py": "",
                               "src/pkg/tests/__init__.py": "", "src/pkg/tests/test_p.py": "import idna\n",
                               "tools/yaml.py": "OWN = 1\n", "tools/go.py": "import yaml\n"})
    plant = ("echo 'open(\"PWNED\",\"w\")' > scripts/yaml.py && echo 'open(\"PWNED\",\"w\")' > tests/tomli_w.py && "
             "echo 'open(\"PWNED\",\"w\")' > a/b/c/d/e/certifi.py && mkdir src/rich && touch src/rich/__init__.py && "
             "echo 'import os' > src/pkg/tests/six.py && echo 'P = 1' > src/pkg/parser.py && "
             "echo 'OWN = 2' > tools/yaml.py && echo 'x = 1' > scripts/helpers.py && echo PLANTED")
    results = _chat(scripted, home, [_terminal(plant)], mechanism)
    assert "PLANTED" in results[0], results[0]
    for rel in ("scripts/yaml.py", "tests/tomli_w.py", "a/b/c/d/e/certifi.py", "src/rich"):
        assert not (proj / rel).exists(), f"{rel} left\n{results[0]}"
        assert rel in results[0], f"{rel} not named\n{results[0]}"
    assert (proj / "tools/yaml.py").read_text() == "OWN = 2\n" and (proj / "scripts/helpers.py").exists(), results[0]
    # a package's own directory: its modules are imported as pkg.parser, pkg.tests.six (a false alarm otherwise)
    assert (proj / "src/pkg/parser.py").exists() and (proj / "src/pkg/tests/six.py").exists(), results[0]
    out = subprocess.run([sys.executable, "scripts/tool.py"], cwd=proj, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": ""})
    assert not (proj / "PWNED").exists() and str(proj) not in out.stdout, out.stdout + out.stderr


def test_a_lone_shadow_beside_a_script_is_put_back(scripted, home, mechanism):  # noqa: F811
    """The whole command is the plant (nothing else the guard watches changes): the deep watch's word that a
    module named like an importable one appeared is enough for a look."""
    proj = home / "proj"
    _commit_files(home, proj, {"scripts/tool.py": "import yaml\n", "lib/x/deep/tests/test_x.py": "import rich\n"})
    results = _chat(scripted, home, [_terminal("echo 'open(\"PWNED\",\"w\")' > scripts/yaml.py && "
                                               "mkdir lib/x/deep/tests/rich && touch lib/x/deep/tests/rich/__init__.py"
                                               " && echo PLANTED")], mechanism)
    assert "PLANTED" in results[0], results[0]
    assert not (proj / "scripts/yaml.py").exists() and not (proj / "lib/x/deep/tests/rich").exists(), results[0]
