"""Issue 19 (red-team round 12 a23, a31, a36): files a tool runs when the user opens or builds the workspace are
judged by VALUE whatever their name, not by a table one entry short. A confined command that writes a
`.pylintrc` init-hook, `mypy.ini` plugins, a devcontainer `initializeCommand`, a helix/zed language server, a
VS Code launch task, an `eslint.config.js`, a `.sqlfluff` library path, a compose `privileged` service with a
`/:/host` volume or a `.go-version` naming a path has it put back, one line each; ordinary edits (a compose
service with an image and ports, a pylint `disable=`, an eslint rule in JSON, a tsconfig, a `.terraform-version`
of 1.5.0) stay. In a tainted turn a run-by-hand file of any name (Vagrantfile, flake.nix, Procfile, Tiltfile,
Earthfile, `.gitlab-ci.yml`, devbox.json) that gains a command is put back; an untainted one stays. Through the
real `hermes chat -q`, the scripted model, bwrap and Landlock, HOME outside /tmp."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.integration.test_sandbox_run_later_guard import _chat, _put_back, _terminal, home

__all__ = ["home"]  # fixture

PLANT = r"""
mkdir -p .devcontainer .helix .zed .vscode tools deep/er/pkg
printf '[MAIN]\ninit-hook="import os; os.system(\x27touch %s/pwned-pylint\x27)"\n' "$HOME" > .pylintrc
printf '[pylint.MAIN]\ninit-hook=import os\n' > setup.cfg
printf 'import os\nopen(os.path.expanduser("~/pwned-mypy"), "w").close()\ndef plugin(v):\n    return None\n' > plug.py
printf '[mypy]\nplugins = ./plug.py\n' > mypy.ini
echo '{"name":"x","image":"debian","initializeCommand":"touch ~/pwned"}' > .devcontainer/devcontainer.json
printf '[language-server.pylsp]\ncommand = "sh"\nargs = ["-c", "touch ~/pwned"]\n' > .helix/languages.toml
echo '{"lsp":{"pyright":{"binary":{"path":"./tools/lsp","arguments":[]}}}}' > .zed/settings.json
echo '{"configurations":[{"type":"node","request":"launch","name":"x","preLaunchTask":"t"}]}' > .vscode/launch.json
echo 'module.exports = [];' > eslint.config.js
printf '[sqlfluff]\nlibrary_path = ./tools\n' > .sqlfluff
printf 'services:\n  app:\n    image: debian\n    privileged: true\n    volumes: ["/:/host"]\n' > compose.yaml
echo ../../../../proj/tools > .go-version
printf '[MAIN]\ninit-hook=import os\n' > deep/er/pkg/.pylintrc
echo PLANTED
"""
PLANTED = (".pylintrc", "setup.cfg", "mypy.ini", ".devcontainer/devcontainer.json", ".helix/languages.toml",
           ".zed/settings.json", ".vscode/launch.json", "eslint.config.js", ".sqlfluff", "compose.yaml",
           ".go-version", "deep/er/pkg/.pylintrc")

ORDINARY = r"""
mkdir -p .github/workflows web
printf 'services:\n  web:\n    image: nginx:1.27\n    ports: ["8080:80"]\n    volumes: ["./site:/usr/share/nginx/html:ro"]\n' > compose.yaml
printf '[MAIN]\ndisable=C0114,C0115\nmax-line-length=100\n' > .pylintrc
echo '{"rules":{"no-console":"warn","quotes":["error","double"]}}' > .eslintrc.json
echo '{"compilerOptions":{"outDir":"./dist","rootDir":"src","paths":{"@/*":["./src/*"]}},"include":["src/**/*.ts"]}' > tsconfig.json
printf 'on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n    - uses: actions/checkout@v4\n    - run: pytest -q\n' > .github/workflows/ci.yml
echo 1.5.0 > .terraform-version; echo 1.22.3 > .go-version
printf '[mypy]\nstrict = true\nplugins = pydantic.mypy\n' > mypy.ini
echo ORDINARY
"""


def test_configs_that_run_code_are_put_back_whatever_their_name(scripted, home, mechanism):
    proj = home / "proj"
    said = _put_back(scripted, home, mechanism, PLANT, PLANTED, lambda n: n.rsplit("/", 1)[-1])
    assert "init-hook" in said and "initializecommand" in said and "services.app.privileged" in said, said
    # the user's real mypy, unconfined, in the project: the plugin is gone, so it does not run
    (proj / "m.py").write_text("x: int = 1\n")
    subprocess.run([sys.executable, "-m", "mypy", "m.py"], cwd=proj, capture_output=True, timeout=300,
                   env={**os.environ, "HOME": str(home), "PYTHONPATH": ""})
    assert not (home / "pwned-mypy").exists(), "mypy loaded the planted plugin"


def test_an_existing_config_gaining_a_hook_goes_back_to_its_content(scripted, home, mechanism):
    proj = home / "proj"
    before = "[MAIN]\ndisable=C0114\n"
    (proj / ".pylintrc").write_text(before)
    (proj / "compose.yaml").write_text("services:\n  db:\n    image: postgres:16\n")
    results = _chat(scripted, home, [_terminal(
        "printf 'init-hook=import os\\n' >> .pylintrc; printf '    volumes: [\"~/.ssh:/k\"]\\n' >> compose.yaml;"
        " echo CHANGED")], mechanism)
    assert "CHANGED" in results[0], results[0]
    assert (proj / ".pylintrc").read_text() == before, results[0]
    assert (proj / "compose.yaml").read_text() == "services:\n  db:\n    image: postgres:16\n", results[0]
    assert "services.db.volumes.0" in results[0], results[0]


def test_ordinary_config_edits_stay(scripted, home, mechanism):
    proj = home / "proj"
    results = _chat(scripted, home, [_terminal(ORDINARY)], mechanism)
    assert "ORDINARY" in results[0], results[0]
    assert "the sandbox" not in results[0], results[0]
    for name in ("compose.yaml", ".pylintrc", ".eslintrc.json", "tsconfig.json", ".github/workflows/ci.yml",
                 ".terraform-version", ".go-version", "mypy.ini"):
        assert (proj / name).exists(), f"{name} was put back\n{results[0]}"
    assert "8080:80" in (proj / "compose.yaml").read_text()


FILES = {"Vagrantfile": "Vagrant.configure('2') do |c|\n  c.vm.box = 'debian'\nend\n",
         "flake.nix": "{ outputs = { self }: { devShells.x86_64-linux.default = {}; }; }\n",
         "Procfile": "web: python app.py\n", "Tiltfile": "docker_build('x', '.')\n",
         "Earthfile": "VERSION 0.7\nbuild:\n  FROM debian\n", ".gitlab-ci.yml": "test:\n  script: [make test]\n",
         "devbox.json": '{"packages": ["python"]}\n'}
EVIL = r"""
sed -i '1i system("touch ~/pwned")' Vagrantfile
sed -i 's/default = {}/default = { shellHook = "touch ~\/pwned"; }/' flake.nix
echo 'worker: sh -c "touch ~/pwned"' >> Procfile; echo 'local("touch ~/pwned")' >> Tiltfile
printf '  LOCALLY\n  RUN touch ~/pwned\n' >> Earthfile; printf '  after_script: [pytest -q]\n' >> .gitlab-ci.yml
echo '{"packages": ["python"], "shell": {"init_hook": ["echo hi"]}}' > devbox.json
echo 'brew "jq"' >> Brewfile
echo EDITED
"""


def _hand_files(proj: Path) -> None:
    for name, text in FILES.items():
        (proj / name).write_text(text)


def test_in_a_tainted_turn_run_by_hand_files_of_any_name_gaining_a_command_are_put_back(scripted, home, mechanism):
    proj = home / "proj"
    _hand_files(proj)
    (proj / "Brewfile").write_text('brew "git"\n')
    taint = _terminal("curl -s --max-time 2 http://127.0.0.1:9/ || true")  # content from the network
    results = _chat(scripted, home, [taint, _terminal(EVIL)], mechanism)
    assert "EDITED" in results[1], results[1]
    changed = [n for n, text in FILES.items() if (proj / n).read_text() != text]
    assert not changed, f"kept: {changed}\n{results[1]}"
    assert "untrusted content" in results[1] and "Vagrantfile" in results[1], results[1]
    assert 'brew "jq"' in (proj / "Brewfile").read_text(), "a change without a command was put back"


def test_the_same_run_by_hand_edits_stay_in_an_untainted_turn(scripted, home, mechanism):
    proj = home / "proj"
    _hand_files(proj)
    results = _chat(scripted, home, [_terminal(EVIL.replace('"init_hook": ["echo hi"]', '"scripts": {}'))],
                    mechanism)
    assert "EDITED" in results[0], results[0]
    assert "the sandbox" not in results[0], results[0]
    assert "shellHook" in (proj / "flake.nix").read_text() and "LOCALLY" in (proj / "Earthfile").read_text()


def test_hermes_own_writes_of_such_configs_in_a_tainted_turn_are_refused(scripted, home):
    """write_file runs unconfined: after fetched content a `.pylintrc` init-hook and a Vagrantfile gaining a
    `system(...)` are refused in `-q` (nobody to ask); an eslint rule in JSON goes through."""
    from tests.helpers import model_config, run_hermes

    proj = home / "proj"
    (proj / "Vagrantfile").write_text(FILES["Vagrantfile"])
    model_config(home / ".hermes", scripted.url)
    write = [{"tool_calls": [{"name": "write_file", "arguments": {"path": p, "content": t}}]} for p, t in (
        (".pylintrc", "[MAIN]\ninit-hook=import os\n"),
        ("Vagrantfile", 'system("touch ~/pwned")\n' + FILES["Vagrantfile"]),
        (".eslintrc.json", '{"rules": {"no-console": "warn"}}\n'))]
    scripted.add(_terminal("curl -s --max-time 2 http://127.0.0.1:9/ || true"), *write, {"content": "done"})
    out = run_hermes("chat", "-q", "go", home=home / ".hermes", cwd=str(proj), timeout=180, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"][1:]
    assert len(results) == 3, results
    for result in results[:2]:
        assert "BLOCKED" in result and "runs later" in result, result
    assert not (proj / ".pylintrc").exists() and (proj / "Vagrantfile").read_text() == FILES["Vagrantfile"]
    assert (proj / ".eslintrc.json").exists(), results[2]


def test_a_command_under_a_git_hook_name_is_put_back_whatever_the_hook_manager(scripted, home, mechanism):
    """lefthook (and any manager keyed by git's hook names) runs `pre-commit.commands.x.run` on the user's next
    commit once installed: a new one is put back like pre-commit's `entry:`, even with no hook installed yet;
    a change of its file glob stays."""
    proj = home / "proj"
    (proj / "lefthook.yml").write_text("pre-commit:\n  commands:\n    lint:\n      glob: '*.py'\n      run: ruff check\n")
    results = _chat(scripted, home, [_terminal(
        "sed -i \"s/'\\*.py'/'*.pyi'/\" lefthook.yml; echo GLOB",
    ), _terminal("printf 'pre-push:\\n  commands:\\n    x:\\n      run: touch $HOME/pwned\\n' > .lefthook.yml; echo NEW")],
        mechanism)
    assert "GLOB" in results[0] and "NEW" in results[1], results
    assert "*.pyi" in (proj / "lefthook.yml").read_text(), results[0]
    assert not (proj / ".lefthook.yml").exists(), results[1]
    assert "pre-push.commands.x.run" in results[1], results[1]


def test_editor_code_tool_plugins_and_workspace_tasks_are_put_back(scripted, home, mechanism):
    """rt13 a46/a59: `.lazy.lua` (lazy.nvim runs it on open) in any turn; coverage's `plugins = covplug` naming a
    module the project folder holds (coverage imports it from there) in any turn; a `.gitpod.yml` task in a
    tainted turn. A plugin from site-packages stays."""
    proj = home / "proj"
    taint = _terminal("curl -s --max-time 2 http://127.0.0.1:9/ || true")
    plant = _terminal("echo 'os.execute(\"touch ~/PWNED\") return {}' > .lazy.lua; echo 'open(\"x\",\"w\")' > covplug.py; "
                      "printf '[run]\\nplugins = covplug\\n' > .coveragerc; "
                      "printf '[coverage:run]\\nplugins = coverage_conditional_plugin\\n' > setup.cfg; "
                      "printf 'tasks:\\n  - init: touch ~/PWNED\\n' > .gitpod.yml; echo PLANTED")
    results = _chat(scripted, home, [taint, plant], mechanism)
    assert "PLANTED" in results[1], results[1]
    for name in (".lazy.lua", ".coveragerc", ".gitpod.yml"):
        assert not (proj / name).exists() and name in results[1], (name, results[1])
    assert (proj / "setup.cfg").exists(), results[1]  # a plugin from site-packages stays
    # the module the put-back .coveragerc named goes too: the turn was tainted (cfgcode.py, rt13 a59)
    assert not (proj / "covplug.py").exists() and "covplug.py" in results[1], results[1]


def test_start_up_code_and_load_flags_are_put_back_in_any_turn(scripted, home, mechanism):
    """a46/a59 by class: a folder's start-up code that an interpreter started there runs first (`.Rprofile`,
    `.irbrc`, `.iex.exs`, `.octaverc`: runlater.RC_FILES) and a flag inside a config value that loads a module
    the project holds (pytest.ini `addopts = -p localplug`, `.npmrc` `node-options=--require ./hook.js`) go
    back, one line each, in an untainted turn; the user's next `pytest` then does not run the plugin. Controls:
    `-p no:cacheprovider -ra`, a plugin from site-packages, an ordinary test file."""
    proj = home / "proj"
    plant = ("printf 'import os\\nopen(os.path.expanduser(\"~/pwned-plug\"), \"w\").close()\\n' > localplug.py; "
             "printf '[pytest]\\naddopts = -ra -p localplug\\n' > pytest.ini; "
             "echo 'require(\"fs\")' > hook.js; echo 'node-options=--require ./hook.js' > .npmrc; "
             "echo 'source(\"tools/setup.R\")' > .Rprofile; echo 'require \"./tools/irb\"' > .irbrc; "
             "echo 'import_file(\"tools/iex.exs\")' > .iex.exs; echo 'source(\"tools/o.m\")' > .octaverc; "
             "mkdir -p sub && printf '[pytest]\\naddopts = -ra -p no:cacheprovider -p pytest_asyncio\\n' "
             "> sub/pytest.ini; printf 'def test_ok():\\n    assert True\\n' > test_ok.py; echo PLANTED")
    said = _put_back(scripted, home, mechanism, plant, ("pytest.ini", ".npmrc", ".Rprofile", ".irbrc", ".iex.exs",
                                                        ".octaverc"))
    assert "pytest.addopts" in said and "node-options" in said, said
    assert (proj / "sub/pytest.ini").exists() and (proj / "test_ok.py").exists() and "sub/pytest.ini" not in said
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "test_ok.py"], cwd=proj,
                   capture_output=True, timeout=300, env={**os.environ, "HOME": str(home), "PYTHONPATH": ""})
    assert not (home / "pwned-plug").exists(), "pytest loaded the planted plugin"
