"""Test runners run the workspace's code without naming it: `pytest` / `python -m pytest` imports every
conftest.py, test_*.py / *_test.py and the __init__.py of their packages under its targets (and `-p` plugins),
`python -m unittest [discover]` and `nose2` import test*.py of the start directory, `tox` runs the commands of
tox.ini (and the package's setup.py), `nox` runs noxfile.py. Yields (kind, path, picks) like workfiles.runs:
"tests" entries are directories or files to be listed by the caller's lister (picks: the runner, its file
pattern), the rest are files read as they are. Pure."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_agent.approval.rules.lazyre import lazy

Run = tuple[str, str, tuple[str, ...]]
RUNNERS = frozenset({"pytest", "py.test", "nose2", "tox", "nox", "unittest"})
# options taking a value: the value is not a target
_PYTEST_VALUED = frozenset({"-k", "-m", "-p", "-c", "-o", "-W", "-n", "--rootdir", "--confcutdir", "--basetemp",
                            "--deselect", "--ignore", "--ignore-glob", "--junitxml", "--junit-xml", "--log-file",
                            "--maxfail", "--durations", "--tb", "--cov", "--cov-report", "--override-ini",
                            "--import-mode", "--dist", "--numprocesses", "--timeout", "-r", "--capture"})
_UNITTEST_VALUED = frozenset({"-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory", "-k"})
_NOSE2_VALUED = frozenset({"-s", "--start-dir", "-t", "--top-level-directory", "-c", "--config", "-A", "-E",
                           "--plugin", "--exclude-plugin", "-N"})
_TOX_KEY = lazy(r"^(commands(?:_pre|_post)?)\s*=\s*(.*)$")
_SECTION = lazy(r"^\[([^\]]+)\]\s*$")
_TOX_SUBST = {"{posargs}": "", "{toxinidir}": ".", "{envpython}": "python", "{envbindir}/": "", "{toxworkdir}": ".tox"}
_TOX_POSARGS = lazy(r"\{posargs:([^}]*)\}")


def runs(name: str, args: list[str], module: bool = False) -> Iterator[Run]:
    """What runner `name` (a command, or with `module` the name after `python -m`) runs, given its arguments."""
    if name in ("pytest", "py.test"):
        yield from _pytest(args)
    elif name == "unittest" and module:
        yield from _unittest(args)
    elif name == "nose2":
        yield from _nose2(args)
    elif name == "tox":
        config = _value(args, ("-c", "--conf")) or "tox.ini"
        yield "tox", config, ()
        yield "python", "setup.py", ()  # tox installs the package: its setup.py runs
    elif name == "nox":
        yield "python", _value(args, ("-f", "--noxfile")) or "noxfile.py", ()


PROJECT_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi"})
_PROJECT_VALUED = frozenset({"--with", "--python", "-p", "--directory", "--project", "--package", "--extra",
                             "--group", "--only-group", "--env-file", "--index", "--index-url", "-e", "--env",
                             "--with-requirements", "--with-editable", "--environment"})


def project_command(name: str, args: list[str]) -> list[str] | None:
    """The argv that `uv run ...`, `poetry run ...`, `hatch run [ENV:]...`, `hatch test` runs (None: not one)."""
    if name == "hatch" and args[:1] == ["test"]:
        return ["pytest", *[a for a in args[1:] if not a.startswith("-")]]
    if args[:1] != ["run"]:
        return None
    i, rest = 1, args
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "--":
        i += 2 if rest[i] in _PROJECT_VALUED else 1
    i += 1 if i < len(rest) and rest[i] == "--" else 0
    argv = list(rest[i:])
    if argv and name == "hatch" and ":" in argv[0] and "/" not in argv[0]:
        argv[0] = argv[0].split(":", 1)[1]
    return argv or None


def _value(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _operands(args: list[str], valued: frozenset[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(operands, (option, value) pairs) of a runner's arguments."""
    operands, values, skip = [], [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a.startswith("-") and a != "-":
            key, eq, val = a.partition("=")
            if key in valued and not eq:
                skip = True
                values.append((key, args[i + 1] if i + 1 < len(args) else ""))
            elif key in valued:
                values.append((key, val))
            elif len(key) > 2 and not key.startswith("--") and key[:2] in valued:
                values.append((key[:2], a[2:]))  # -ptests.plugin, -kexpr
            continue
        operands.append(a)
    return operands, values


def _pytest(args: list[str]) -> Iterator[Run]:
    operands, values = _operands(args, _PYTEST_VALUED)
    for key, val in values:
        if key == "-p" and val and not val.startswith("no:"):
            yield from dotted(val)  # a plugin module of the workspace
    config = dict(values).get("-c")
    for name in [config] if config else PYTEST_CONFIGS:  # `addopts = -p NAME` there loads NAME too
        yield "pytestcfg", name, (name.rsplit("/", 1)[-1],)
    for target in operands or ["."]:
        yield "tests", target.split("::", 1)[0], ("pytest", "test_*.py|*_test.py")


# pytest's configuration files, read from the invocation directory (its rootdir search starts there)
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}


PLUGIN_WORD = "__hermes_pytest_plugin"  # workfiles.runs: NAME, a plugin module pytest imports (its files listed)


def plugin_lines(names: list[str]) -> str:
    """`__hermes_pytest_plugin NAME` per plugin module: workfiles.runs hands its candidate files (`dotted`) to
    the caller's lister, which keeps those changed since the gate started, as it keeps conftest.py files (the
    project's own plugins are the user's); `no:NAME` (a plugin switched off) and non-module words are dropped."""
    mods = [n for n in dict.fromkeys(names) if n and not n.startswith("no:") and
            all(p.isidentifier() for p in n.split("."))]
    return "\n".join(f"{PLUGIN_WORD} {m}" for m in mods[:16])


def addopts_plugins(addopts: str | list) -> list[str]:
    """The `-p NAME` plugins of an addopts value (PYTEST_ADDOPTS, an ini's `addopts`, a TOML list)."""
    if isinstance(addopts, list):
        words = [str(w) for w in addopts]
    else:
        import shlex

        try:
            words = shlex.split(str(addopts))
        except ValueError:
            words = str(addopts).split()
    return [v for k, v in _operands(words, _PYTEST_VALUED)[1] if k == "-p"]


def config_plugins(name: str, text: str) -> str:
    """plugin_lines for a pytest configuration file `name` (pytest.ini, pyproject.toml, tox.ini, setup.cfg):
    its `addopts` (`-p NAME`) and, in pyproject, `[tool.pytest]` too. A file that does not parse: nothing (pytest
    would stop on it too)."""
    if "addopts" not in text:
        return ""
    if name.endswith(".toml"):
        import tomllib

        try:
            tool = tomllib.loads(text).get("tool", {}).get("pytest", {})
        except (tomllib.TOMLDecodeError, AttributeError):
            return ""
        found = [] if not isinstance(tool, dict) else [
            p for table in (tool, tool.get("ini_options")) if isinstance(table, dict)
            for p in addopts_plugins(table.get("addopts") or "")]
        return plugin_lines(found)
    import configparser

    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
        addopts = parser.get(_INI_SECTIONS.get(name, "pytest"), "addopts", fallback="")
    except configparser.Error:
        return ""
    return plugin_lines(addopts_plugins(" ".join(addopts.split())))


def conftest_plugins(text: str) -> str:
    """plugin_lines for `pytest_plugins = [...]` (or a string) at the top of a conftest.py or test module."""
    if "pytest_plugins" not in text:
        return ""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ""
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets) or node.value is None:
            continue
        items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple, ast.Set)) else [node.value]
        names += [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return plugin_lines(names)


def _unittest(args: list[str]) -> Iterator[Run]:
    operands, values = _operands(args, _UNITTEST_VALUED)
    opts = dict(values)
    if operands and operands[0] != "discover":  # named tests: modules or files
        for name in operands:
            if name.endswith(".py") or "/" in name:
                yield "python", name, ()
            else:
                yield from dotted(name)
        return
    rest = operands[1:]
    start = opts.get("-s") or opts.get("--start-directory") or (rest[0] if rest else ".")
    pattern = opts.get("-p") or opts.get("--pattern") or (rest[1] if len(rest) > 1 else "test*.py")
    yield "tests", start, ("unittest", pattern)


def _nose2(args: list[str]) -> Iterator[Run]:
    operands, values = _operands(args, _NOSE2_VALUED)
    opts = dict(values)
    for name in operands:
        yield from dotted(name)
    if not operands:
        yield "tests", opts.get("-s") or opts.get("--start-dir") or ".", ("nose2", "test*.py")


def dotted(name: str) -> Iterator[Run]:
    """`a.b.C.test_x` may be module a, a.b, a.b.C...: each prefix's a/b.py and a/b/__init__.py (the reader
    skips the files that are not there); `a.b` as `python -m` runs a/b/__main__.py too."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return
    for i in range(1, len(parts) + 1):
        yield "python", "/".join(parts[:i]) + "/__init__.py", ()
        yield "python", "/".join(parts[:i]) + ".py", ()
    yield "python", "/".join(parts) + "/__main__.py", ()


def tox_commands(text: str) -> str:
    """The shell text of every `commands`, `commands_pre` and `commands_post` of a tox.ini's test environments
    (continuation lines joined; tox's {posargs} and substitutions left as words)."""
    blocks: list[list[str]] = []
    section, current = "", None
    for raw in text.splitlines():
        if current is not None and raw[:1] in (" ", "\t") and raw.strip():
            current.append(raw.strip().rstrip("\\").strip())
            continue
        current = None
        head = _SECTION.match(raw.strip())
        if head:
            section = head.group(1).strip()
            continue
        key = _TOX_KEY.match(raw.strip())
        if key and section.startswith(("testenv", "tox:testenv")):
            current = [key.group(2).strip()] if key.group(2).strip() else []
            blocks.append(current)
    text = "\n".join(c.lstrip("- ") for block in blocks for c in block if c and not c.startswith("#"))
    for word, value in _TOX_SUBST.items():
        text = text.replace(word, value)
    return _TOX_POSARGS.sub(lambda m: m.group(1), text)
