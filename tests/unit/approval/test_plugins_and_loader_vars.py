"""Issue 19 (taint12): pytest loads plugin modules nobody names on the command line: `addopts = -p NAME` in
pytest.ini / .pytest.ini / pyproject.toml / tox.ini / setup.cfg, `pytest_plugins = [...]` in a conftest.py,
PYTEST_ADDOPTS and PYTEST_PLUGINS. Such a module planted in the workspace is read and judged when the runner
runs, as conftest.py is. And the variables that make programs load code from a directory (LD_LIBRARY_PATH,
GCONV_PATH, PYTHONHOME, the LD_* variants, NODE_OPTIONS --require=...) are one table (rules/state.py), judged
by value whether exported earlier or set before one command; GIT_CONFIG_* before one git are its settings.
Real files, the real gate's reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent.approval.rules import detect_dangerous_command
from hermes_agent.approval.scriptfiles import file_findings

PLUGIN = "import shutil\nshutil.rmtree('/home')\n"
CONFIGS = {
    "pytest.ini": "[pytest]\naddopts = -q -p plug\n",
    ".pytest.ini": "[pytest]\naddopts = -pplug\n",
    "pyproject.toml": '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q -p plug"\n',
    "setup.cfg": "[metadata]\nname = x\n[tool:pytest]\naddopts =\n    -q\n    -p plug\n",
    "tox.ini": "[tox]\nenvlist = py\n[pytest]\naddopts = -p plug --strict-markers\n",
}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "plug.py").write_text(PLUGIN)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n")
    return tmp_path


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("command", ["pytest", "python3 -m pytest tests -q", "uv run pytest"])
def test_a_plugin_named_by_a_pytest_config_file_is_judged(work: Path, config: str, command: str) -> None:
    (work / config).write_text(CONFIGS[config])
    found = file_findings(command, str(work), since=None)
    assert found and all(f"/plug.py) (in {config})" in f.description for f in found), found


def test_a_plugin_named_by_a_conftest_is_judged(work: Path) -> None:
    (work / "tests" / "conftest.py").write_text('pytest_plugins = ["helpers.fixtures"]\n')
    (work / "helpers").mkdir()
    (work / "helpers" / "__init__.py").write_text("")
    (work / "helpers" / "fixtures.py").write_text(PLUGIN)
    found = file_findings("pytest tests", str(work), since=None)
    assert found and all("helpers/fixtures.py) (in " in f.description for f in found), found


@pytest.mark.parametrize("command", ["PYTEST_PLUGINS=plug pytest", "PYTEST_ADDOPTS='-q -p plug' python -m pytest",
                                     "env PYTEST_PLUGINS=other,plug pytest tests"])
def test_a_plugin_named_by_a_variable_for_one_run_is_judged(work: Path, command: str) -> None:
    found = file_findings(command, str(work))
    assert found and all("/plug.py)" in f.description for f in found), found


@pytest.mark.parametrize("name", ["PYTEST_PLUGINS", "PYTEST_ADDOPTS"])
def test_a_plugin_named_by_an_exported_variable_is_judged_at_the_next_run(work: Path, name: str) -> None:
    value = "plug" if name == "PYTEST_PLUGINS" else "-p plug"
    state = f'declare -x {name}="{value}"\n'
    found = file_findings("pytest -q", str(work), state)
    assert found and all(f.description.startswith("a variable the session exported runs: ") for f in found), found
    assert file_findings("ls", str(work), state) == ()  # only a test run loads it


def test_the_projects_own_plugins_are_the_users(work: Path) -> None:
    """As for conftest.py: a plugin module older than the gate's start is the user's, not read (no alarm on
    the project's own suite); one the session changed since is."""
    (work / "pytest.ini").write_text(CONFIGS["pytest.ini"])
    old = (work / "plug.py").stat().st_ctime
    assert file_findings("pytest", str(work), since=old + 5) == ()
    assert file_findings("pytest", str(work), since=old - 5)


@pytest.mark.parametrize("config", [
    "[pytest]\naddopts = -q -p no:cacheprovider -p pytest_cov\n",  # switched off; an installed plugin
    '[tool.pytest.ini_options]\naddopts = "--strict-markers"\n',
    "[pytest]\naddopts = -p plug\n",  # plug.py is ordinary code here
])
def test_ordinary_pytest_configs_pass(work: Path, config: str) -> None:
    (work / "plug.py").write_text("import pytest\n\n@pytest.fixture\ndef db():\n    return {}\n")
    (work / ("pyproject.toml" if config.startswith("[tool.") else "pytest.ini")).write_text(config)
    assert file_findings("pytest -q", str(work), since=None) == ()


@pytest.mark.parametrize(("assign", "name"), [
    ("LD_LIBRARY_PATH=./lib", "LD_LIBRARY_PATH"), ("GCONV_PATH=lib", "GCONV_PATH"),
    ("LD_AUDIT_64=./lib/a.so", "LD_AUDIT_64"), ("PYTHONHOME=./lib", "PYTHONHOME"),
    ("DYLD_LIBRARY_PATH=./lib", "DYLD_LIBRARY_PATH"),
])
def test_loader_variables_toward_a_writable_place_are_judged_by_value(tmp_path: Path, assign: str, name: str) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.so").write_text("\x7fELF not really")
    program = "python3 -c 1" if name == "PYTHONHOME" else "ls -la"
    for command, state in ((f"{assign} {program}", ""), (program, f"declare -x {assign.replace('./', f'{tmp_path}/')}\n")):
        found = file_findings(command, str(tmp_path), state)
        assert [f.key for f in found] == ["ld_preload"] and name in found[0].description, (command, found)
    assert file_findings(f"{name}=/usr/lib/x86_64-linux-gnu ls", str(tmp_path)) == ()  # not writable here
    assert file_findings(f"{name}=./missing ls", str(tmp_path)) == ()  # nothing there to load


def test_node_options_require_with_an_equals_sign_is_read(tmp_path: Path) -> None:
    (tmp_path / ".n").mkdir()
    (tmp_path / ".n" / "boot.js").write_text("require('child_process').execSync('rm -rf ~/projects')\n")
    state = f'declare -x NODE_OPTIONS="--require={tmp_path}/.n/boot.js"\n'
    found = file_findings("ls", str(tmp_path), state)
    assert found and "boot.js" in found[0].description, found


@pytest.mark.parametrize("command", [
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='sh ./p' git log",
    "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='./m'\" git status",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0='sh -c id' git fetch",
])
def test_git_settings_given_by_variables_for_one_git_are_judged(command: str) -> None:
    dangerous, key, _ = detect_dangerous_command(command)
    assert dangerous and key == "exec_via_option", (command, key)


def test_ordinary_git_variables_pass() -> None:
    assert not detect_dangerous_command("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=bob "
                                        "git commit -qm x")[0]
