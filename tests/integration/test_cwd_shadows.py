"""rt13 a44 through the real `hermes chat -q`: python run in the workspace (`python -m X`, `-c`, the REPL) puts
it first on sys.path, so a module a command leaves there named like one the user's Python imports (yaml.py,
a `hermes_agent/` package) runs at the user's next `python -m hermes_agent` unconfined. Such a module is put
back with a line; a standard module's name (random.py: a beginner's own file) stays in an ordinary turn; the
project's own modules stay."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home, mechanism  # noqa: F401

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
