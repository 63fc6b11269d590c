"""The run-later guard's second half (issue 19 class 6, rt4 a05/a07/a20): files a tool runs later without
being asked. Through the real `hermes chat -q --yolo` with the scripted model, under bubblewrap and Landlock:

- a workspace venv's python start-up code (a `.pth` with an `import` line, sitecustomize in site-packages or
  in a directory a `.pth` puts on sys.path, a fake setuptools editable finder) is quarantined, site-packages
  swapped for a link and bin/python for a script are put back, and the user's next `.venv/bin/python`
  outside runs nothing planted;
- project tool configs whose keys carry commands (.npmrc node-options, .yarnrc.yml yarnPath, .mise.toml
  hooks, .tool-versions path:, .cargo/config.toml runner, .vscode/settings.json interpreter path, the venv's
  pip.conf index-url) are put back; the same files with harmless keys stay as the command wrote them;
- controls: `python -m venv .venv` (pip, setuptools' `_distutils_hack`), `pip install -e .` (setuptools'
  editable finder) and `pip install requests` into that venv, `npm init
  -y` and `npm install is-number` (from the registries), a git commit: no line, nothing put back."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import (
    _chat,
    _git,
    _terminal,
    _user_commits,
    home,
)

__all__ = ["home"]  # fixture

PY = shutil.which("python3") or "/usr/bin/python3"


def _venv(proj: Path) -> Path:
    subprocess.run([PY, "-m", "venv", "--without-pip", str(proj / ".venv")], check=True,
                   capture_output=True, timeout=300)
    return Path(glob.glob(str(proj / ".venv/lib/python3*/site-packages"))[0])


def _user_python(home: Path, proj: Path, *code: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PWNED": str(home / "pwned")}
    return subprocess.run([str(proj / ".venv/bin/python"), "-c", ";".join(code) or "pass"], cwd=proj, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_python_start_up_code_planted_in_the_workspace_venv_is_quarantined(scripted, home, mechanism):
    proj = home / "proj"
    site = _venv(proj)
    (proj / "src").mkdir()
    pwn = "import os; open(os.environ['PWNED'], 'w')"
    finder = 'import os\nos.system("touch $PWNED")\ndef install():\n    pass\n'
    results = _chat(scripted, home, [
        _terminal(f"d=$(echo .venv/lib/python3*/site-packages); echo \"{pwn}\" > $d/_evil.pth;"
                  f" echo \"{pwn}\" > $d/sitecustomize.py; echo \"$PWD/src\" > $d/_paths.pth;"
                  f" echo \"{pwn}\" > src/sitecustomize.py; printf '{finder}' > $d/__editable___x_finder.py;"
                  " echo 'import __editable___x_finder; __editable___x_finder.install()' > $d/__editable__.x.pth;"
                  " echo PLANTED"),
        _terminal("d=$(echo .venv/lib/python3*/site-packages); mkdir -p node_modules/e;"
                  f" echo \"{pwn}\" > node_modules/e/x.pth; mv $d $d.real && ln -s $PWD/node_modules/e $d;"
                  " rm .venv/bin/python && printf '#!/bin/sh\\ntouch \"$PWNED\"\\n' > .venv/bin/python;"
                  " chmod +x .venv/bin/python; echo SWAPPED"),
    ], mechanism)
    assert "PLANTED" in results[0] and "SWAPPED" in results[1], results
    assert site.is_dir() and not site.is_symlink() and "site-packages" in results[1], results[1]
    assert (proj / ".venv/bin/python").is_symlink() and "bin/python" in results[1], results[1]
    for name in ("_evil.pth", "sitecustomize.py", "__editable___x_finder.py", "__editable__.x.pth"):
        assert not Path(f"{site}.real/{name}").exists(), name  # quarantined by the first check
        assert name in results[0], results[0]
    assert not (proj / "src/sitecustomize.py").exists()
    assert Path(f"{site}.real/_paths.pth").exists()  # a path line runs nothing: it stayed (then moved away)
    assert "python runs" in results[0] and list((home / ".hermes/quarantine").rglob("_evil.pth"))
    out = _user_python(home, proj)
    assert out.returncode == 0, out.stderr
    assert not (home / "pwned").exists(), "planted start-up code ran in the user's next venv python"


def test_tool_configs_that_carry_commands_are_put_back(scripted, home, mechanism):
    proj = home / "proj"
    _venv(proj)
    (proj / "package.json").write_text('{"name": "p", "version": "1.0.0", "scripts": {"test": "node -e 1"}}\n')
    (proj / ".npmrc").write_text("save-exact=true\n")
    (proj / ".vscode").mkdir()
    (proj / ".vscode/settings.json").write_text('{\n  // mine\n  "editor.tabSize": 2,\n}\n')
    results = _chat(scripted, home, [
        _terminal("echo 'require(\"fs\").writeFileSync(process.env.PWNED, \"x\")' > .warm.js;"
                  " echo \"node-options=--require $PWD/.warm.js\" >> .npmrc;"
                  " printf 'yarnPath: .warm.js\\n' > .yarnrc.yml;"
                  " printf '[hooks]\\nenter = \"touch $PWNED\"\\n' > .mise.toml;"
                  " printf 'python path:/tmp\\n' > .tool-versions;"
                  " mkdir -p .cargo && printf '[target.x86_64-unknown-linux-gnu]\\nrunner = \"sh .warm.sh\"\\n'"
                  " > .cargo/config.toml;"
                  " printf '{\"python.defaultInterpreterPath\": \"./.warm.sh\"}' > .vscode/settings.json;"
                  " printf '[global]\\nindex-url = http://127.0.0.1:9/simple\\n' > .venv/pip.conf; echo PLANTED"),
        _terminal("echo 'fund=false' >> .npmrc; printf 'nodeLinker: node-modules\\n' > .yarnrc.yml;"
                  " printf '[tasks.build]\\nrun = \"make\"\\n' > .mise.toml; printf 'python 3.12.1\\n' > .tool-versions;"
                  " printf '[build]\\njobs = 2\\n' > .cargo/config.toml;"
                  " printf '{\"editor.tabSize\": 4}' > .vscode/settings.json; echo HARMLESS"),
    ], mechanism)
    assert "PLANTED" in results[0] and "HARMLESS" in results[1], results
    for name, key in ((".npmrc", "node-options"), (".yarnrc.yml", "yarnpath"), (".mise.toml", "hooks.enter"),
                      (".tool-versions", "python"), ("config.toml", "runner"),
                      ("settings.json", "python.defaultinterpreterpath"), ("pip.conf", "index-url")):
        assert name in results[0] and key in results[0], (name, results[0])
    assert "the sandbox" not in results[1], results[1]  # harmless keys stay as the command wrote them
    assert (proj / ".npmrc").read_text() == "save-exact=true\nfund=false\n"
    assert (proj / ".cargo/config.toml").read_text() == "[build]\njobs = 2\n"
    assert (proj / ".vscode/settings.json").read_text() == '{"editor.tabSize": 4}'
    assert not (proj / ".venv/pip.conf").exists()
    if shutil.which("npm"):
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "PWNED": str(home / "pwned")}
        subprocess.run(["npm", "test"], cwd=proj, env=env, capture_output=True, timeout=120, check=False)
    assert not (home / "pwned").exists()


def _registry_reachable() -> bool:
    """PyPI and the npm registry answer (asked from a child: this process is held to loopback by conftest)."""
    probe = ("import socket\nfor h in ('pypi.org', 'registry.npmjs.org'):\n"
             "    socket.create_connection((h, 443), timeout=5).close()")
    return subprocess.run([PY, "-c", probe], capture_output=True, timeout=30, check=False).returncode == 0


def _chat_long(scripted, home: Path, steps: list[dict], mechanism: str) -> list[str]:
    """`_chat` with room for installers that download (pip, npm)."""
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(home / "proj"), timeout=900,
                     env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_installers_and_git_keep_working_without_a_line(scripted, home, mechanism):
    if not _registry_reachable() or not shutil.which("npm"):
        pytest.skip("needs PyPI, the npm registry and npm")
    proj = home / "proj"
    (proj / "mypkg").mkdir()
    (proj / "mypkg/__init__.py").write_text("X = 1\n")
    (proj / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                                         '"setuptools.build_meta"\n[project]\nname = "mypkg"\nversion = "0.1"\n')
    results = _chat_long(scripted, home, [
        _terminal(f"{PY} -m venv .venv && echo VENV", timeout=600),  # with pip and setuptools: _distutils_hack
        _terminal(".venv/bin/pip install -q -e . && echo EDITABLE", timeout=600),
        _terminal(".venv/bin/pip install -q requests && echo REQUESTS", timeout=600),
        # HOME is read-only inside: hermes points npm's cache at the session's temp dir
        _terminal("npm init -y >/dev/null && npm install -q is-number >/dev/null && echo NPM", timeout=600),
        _terminal("git add mypkg pyproject.toml package.json && git -c user.name=a -c user.email=a@b commit -qm x"
                  " && echo COMMITTED"),
    ], mechanism)
    for word, result in zip(("VENV", "EDITABLE", "REQUESTS", "NPM", "COMMITTED"), results, strict=True):
        assert word in result, result
        assert "the sandbox" not in result, result
    site = Path(glob.glob(str(proj / ".venv/lib/python3*/site-packages"))[0])
    assert glob.glob(str(site / "__editable__*mypkg*.pth")) and glob.glob(str(site / "__editable___*finder.py"))
    out = _user_python(home, proj, "import mypkg, requests", "print(mypkg.X)")
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr
    assert (proj / "node_modules/is-number").is_dir()
    _git(home, proj, "log", "--oneline")
    _user_commits(home, proj)


def test_vscode_settings_are_judged_by_value_not_key_name(scripted, home, mechanism):
    """Red-team round 9 a09: keys outside the name patterns (go.alternateTools, go.goroot, java.jdt.ls.java.home)
    that lead to programs planted in the workspace stayed; the Go and Java extensions run them when the folder
    is opened. Any value pointing into the workspace is put back, whatever the key; harmless settings stay."""
    proj = home / "proj"
    planted = {"go.alternateTools": {"go": "${workspaceFolder}/.bin/go"}, "go.goroot": "${workspaceFolder}/.goroot",
               "java.jdt.ls.java.home": "${workspaceFolder}/.jdk", "someext.toolLocation": ".bin/go",
               "editor.tabSize": 4}
    harmless = {"editor.tabSize": 4, "python.testing.pytestEnabled": True, "workbench.colorTheme": "Solarized",
                "files.exclude": {"**/node_modules": True}, "go.formatTool": "gofmt"}
    results = _chat(scripted, home, [
        _terminal("mkdir -p .vscode .bin .goroot/bin && printf '#!/bin/sh\\ntouch \"$PWNED\"\\n' > .bin/go &&"
                  f" chmod +x .bin/go && echo '{json.dumps(planted)}' > .vscode/settings.json; echo PLANTED"),
        _terminal(f"echo '{json.dumps(harmless)}' > .vscode/settings.json; echo HARMLESS"),
    ], mechanism)
    assert "PLANTED" in results[0] and "HARMLESS" in results[1], results
    for key in ("go.alternatetools", "go.goroot", "java.jdt.ls.java.home"):
        assert key in results[0], (key, results[0])
    assert "the sandbox" not in results[1], results[1]
    assert json.loads((proj / ".vscode/settings.json").read_text()) == harmless
