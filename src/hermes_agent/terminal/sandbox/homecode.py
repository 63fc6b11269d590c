"""Code the user runs later from HOME, for a workspace that is HOME (issue 19, red-team round 11 a11/a20/a25):
what `views.home_children` keeps read-only besides what the start-up files source or put on PATH
(shellrc.protected_paths). One rule — every existing path under HOME that a start-up file or the environment
names, and the code locations of HOME's toolchains — so ordinary folders (~/notes, ~/projects/app) stay
writable while these do not:

- toolchain code in HOME that tools load without asking: Go's module cache and GOPATH (~/go), node's
  ~/node_modules (resolved up to HOME from every project below it), R's ~/R/<platform>-library, local::lib's
  ~/perl5, SDK and conda installs;
- directories named by the library variables of the user's environment (PERL5LIB, NODE_PATH, PYTHONPATH,
  GEM_HOME, GOPATH, R_LIBS_USER, CLASSPATH, ...), read from the environment the user started hermes with
  (`paths.user_environ`), and files any other variable names (EDITOR, BASH_ENV, PYTHONSTARTUP, GIT_SSH,
  NODE_OPTIONS=--require F, ...);
- every file or directory under HOME a start-up file (and what it sources) names — existing, or not made yet
  in an existing directory (kept from being made) — however it uses it: an
  alias target, BASH_ENV, PROMPT_COMMAND, `complete -C`, `eval "$(cat ~/x)"`, `source <(cat ~/y)`, `-I~/lib`.
  Not the target of `cd`/`pushd` (a folder the user works in). A name hidden behind a variable the files do
  not assign is missed: the heuristic of shellrc.py, widened from two verbs to every word.

Bounded: the files shellrc.py follows (32 files of 64 KiB at most), each line split once. Stdlib only;
regexes compiled on first use."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping

from hermes_agent.paths import is_under as under

# Non-dot entries of HOME that hold code tools load from there (dot-entries are hidden or read-only already).
TOOL_DIRS = ("go", "node_modules", "R", "perl5", "sdk", "miniconda3", "anaconda3", "miniforge3", "mambaforge",
             "micromamba")
# Variables naming directories interpreters and tools load code from: every entry under HOME is kept whole.
LIB_VARS = frozenset({
    "PERL5LIB", "PERLLIB", "PERL_LOCAL_LIB_ROOT", "NODE_PATH", "PYTHONPATH", "PYTHONUSERBASE", "PYTHONHOME",
    "GEM_HOME", "GEM_PATH", "RUBYLIB", "GOPATH", "GOMODCACHE", "GOBIN", "GOROOT", "R_LIBS", "R_LIBS_USER",
    "R_LIBS_SITE", "CLASSPATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "LUA_PATH", "LUA_CPATH", "JULIA_DEPOT_PATH",
    "JULIA_LOAD_PATH", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "PYENV_ROOT", "BUN_INSTALL", "DENO_INSTALL",
    "PNPM_HOME", "VOLTA_HOME", "SDKMAN_DIR", "ASDF_DIR", "ASDF_DATA_DIR", "CONDA_EXE", "MAVEN_HOME", "GRADLE_HOME",
    "JAVA_HOME", "ZDOTDIR", "BASH_ENV", "ENV", "PYTHONSTARTUP", "NODE_OPTIONS", "RUBYOPT", "PERL5OPT",
})
# Variables that name where the user works, not code: never kept (the workspace itself stays writable).
_NOT_CODE = frozenset({"PWD", "OLDPWD", "HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "TMPDIR", "TMP", "TEMP", "INIT_CWD",
                       "MAIL", "XDG_RUNTIME_DIR", "_"})
_NOT_CODE_PREFIX = ("HERMES_", "DIRENV_", "PYTEST_")
_CD = frozenset({"cd", "pushd", "CDPATH"})


@functools.cache
def _split() -> re.Pattern[str]:
    return re.compile(r"[\s=:;,'\"()<>|&`]+")


def code_paths(home: str, environ: Mapping[str, str] | None = None, protected: Iterable[str] | None = None) -> list[str]:
    """Existing paths inside HOME (not HOME itself) to keep read-only when the workspace is HOME, with their
    resolved targets when they lie in HOME too. `protected`: shellrc.protected_paths(home), when at hand (the
    start-up files and what they source are read from it)."""
    if not home or not os.path.isdir(home):
        return []
    from hermes_agent import paths

    env = paths.user_environ() if environ is None else environ
    found = [os.path.join(home, d) for d in TOOL_DIRS]
    found += _shadowing_modules(home)
    found += _from_environ(home, env)
    found += _from_startup(home, protected)
    out: list[str] = []
    for p in dict.fromkeys(found):
        if p == home or not under(p, home) or not _placed(p):
            continue
        out.append(p)
        real = os.path.realpath(p)
        if real != p and real != home and under(real, home):
            out.append(real)
    return list(dict.fromkeys(out))


def _shadowing_modules(home: str) -> list[str]:
    """HOME's own `json.py`-like files: `python3 -c`/`-m` started in HOME imports them before the stdlib."""
    try:
        names = os.listdir(home)
    except OSError:
        return []
    std = sys.stdlib_module_names
    return [os.path.join(home, n) for n in names if n.endswith(".py") and n[:-3] in std]


def _from_environ(home: str, env: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for name, value in env.items():
        if name in _NOT_CODE or name.startswith(_NOT_CODE_PREFIX) or not value or name == "PATH":
            continue
        whole = name in LIB_VARS
        for piece in _split().split(value):
            for p in _anchored(piece, home, {"HOME": [home]}):
                if whole or not os.path.isdir(p):
                    out.append(p)
    return out


def _from_startup(home: str, protected: Iterable[str] | None) -> list[str]:
    from hermes_agent.terminal.sandbox import shellrc

    listed = shellrc.protected_paths(home, path_dirs=False) if protected is None else protected
    files = [p for p in listed if os.path.isfile(p)]
    env: dict[str, list[str]] = {"HOME": [home]}
    out: list[str] = []
    for path in list(dict.fromkeys(files))[:shellrc.MAX_FILES]:
        text = shellrc.read_start_file(os.path.realpath(path))
        if not text:
            continue
        shellrc.assignments(text, home, env)
        for line in text.splitlines():
            out += _named(line, home, env)
    return out


def _named(line: str, home: str, env: dict[str, list[str]]) -> list[str]:
    """Paths under HOME one line names, in any word (not a `cd` target)."""
    from hermes_agent.terminal.sandbox.shellrc import words

    out: list[str] = []
    pieces = [p for w in words(line) for p in _split().split(w) if p]  # `alias p='cd ~/x'`: cd inside a word
    for i, piece in enumerate(pieces):
        if i and pieces[i - 1] in _CD or piece == "CDPATH":
            continue
        out += _anchored(piece, home, env)
    return out


def _anchored(piece: str, home: str, env: dict[str, list[str]]) -> list[str]:
    """The existing paths under HOME a piece of a word names from its first `~/`, `$` or `/` on: `-I$HOME/lib`
    gives ~/lib. A variable neither assigned earlier nor HOME names nothing (not a pattern of every name)."""
    from hermes_agent.terminal.sandbox.shellrc import expand, glob_paths

    starts = [k for k in (piece.find("~/"), piece.find("$"), piece.find("/")) if k >= 0]
    if not starts:
        return []
    cand = piece[min(starts):]
    literal_glob = any(c in cand for c in "*?[")
    out: list[str] = []
    for value in expand(cand, home, env):
        if not literal_glob and any(c in value for c in "*?["):
            continue  # an unknown variable: not "every name here"
        if not os.path.isabs(value):
            continue
        for p in glob_paths(value) if literal_glob else [os.path.normpath(value)]:
            if p != home and under(p, home) and _placed(p):
                out.append(p)
    return out


def _placed(path: str) -> bool:
    """It exists, or its directory does: a named file not made yet (`alias ll=~/tools/llx`) keeps that
    directory from getting a new entry (views.home_children splits it), so it cannot be made from inside."""
    return os.path.lexists(path) or os.path.isdir(os.path.dirname(path))
