"""The shell state a terminal session carries between calls (`declare -f` and `alias -p` output that the
confined shell hands back as data), read for classification only: a later call's bare word that names an
alias or a function defined there is judged by what it expands to (`alias ll='rm -rf src'` in one call,
`ll` in the next); a variable exported there that makes later programs run a file or a command line
(`export BASH_ENV=./hook.sh`, `GIT_EXTERNAL_DIFF`, `PYTHONPATH=dir` with a sitecustomize.py) is turned into
the shell text those programs would run (`hook_text`), so the file is judged like one the command names.
The state text is parsed by the rules' own lexer and never run. Pure string work."""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from hermes_agent.approval.rules.lazyre import lazy

MAX_STATE_CHARS = 2_000_000
MAX_DEFINITIONS = 64
_FUNC_HEAD = lazy(r"\A([^\s()=|&;<>`$'\"]+) \(\) ?\Z")
_ALIAS = lazy(r"\Aalias (?:-- )?([^\s=]+)=")
_NAMES = lazy(r"^(?:([^\s()=|&;<>`$'\"]+) \(\) ?$|alias (?:-- )?([^\s=]+)=)", re.M)
_WORD = lazy(r"[^\s|&;<>()`$'\"{}]+")
# `declare -x NAME="value"` (bash) or `export NAME='value'` (sh): one exported variable per line
_EXPORT = lazy(r"^(?:declare -[a-zA-Z]*x[a-zA-Z]* |export )([A-Za-z_]\w*)=(.*)$", re.M)
# Variables whose value is a file every shell runs, a command line git or a pager runs, or a search path
_SHELL_FILES = ("BASH_ENV", "ENV")
_GIT_COMMANDS = ("GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EDITOR",
                 "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_PROXY_COMMAND", "SSH_ASKPASS")
_PAGERS = ("PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL")
_PYTHON = lazy(r"(?:^|[\s/;&|(])python[\d.]*\b|(?:^|[\s;&|(])(?:pip[\d.]*|pytest|tox|nox|poetry|uv)\b")
_GITISH = lazy(r"(?:^|[\s/;&|(])(?:git|ssh|scp|rsync)\b")
_NODE = lazy(r"(?:^|[\s/;&|(])(?:node|npm|npx|pnpm|yarn|bun)\b")


@lru_cache(maxsize=4)
def _names(state: str) -> frozenset[str]:
    """Every name the state defines (a cheap scan; the full parse only when a command uses one)."""
    return frozenset(m.group(1) or m.group(2) for m in _NAMES.finditer(state[:MAX_STATE_CHARS]))


@lru_cache(maxsize=4)
def definitions(state: str) -> dict[str, str]:
    """name -> shell text defining it (an `alias NAME=...` line or a function's `NAME () { ... }` block)."""
    found: dict[str, str] = {}
    lines = state[:MAX_STATE_CHARS].splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _FUNC_HEAD.match(line)
        if head and i + 1 < len(lines) and lines[i + 1].strip() == "{":
            end = i + 2
            while end < len(lines) and lines[end] != "}":
                end += 1
            found[head.group(1)] = "\n".join(lines[i:end + 1])
            i = end + 1
            continue
        alias = _ALIAS.match(line)
        if alias:
            found[alias.group(1)] = line
        i += 1
    return found


def relevant(state: str, command: str) -> str:
    """The definitions of the names `command` uses (and of the names those use), as one shell text."""
    if not state or ("alias " not in state and "() " not in state):
        return ""
    words = dict.fromkeys(_WORD.findall(command))
    if not any(w in _names(state) for w in words):
        return ""  # the usual case: nothing the command names is defined there
    defined = definitions(state)
    wanted = [w for w in words if w in defined]
    chosen: dict[str, str] = {}
    while wanted and len(chosen) < MAX_DEFINITIONS:
        name = wanted.pop(0)
        if name in chosen:
            continue
        chosen[name] = defined[name]
        wanted.extend(w for w in dict.fromkeys(_WORD.findall(defined[name])) if w in defined and w not in chosen)
    return "\n".join(chosen.values())


@lru_cache(maxsize=4)
def exported(state: str) -> dict[str, str]:
    """NAME -> value of the variables the saved state exports (the shell's own quoting undone)."""
    found: dict[str, str] = {}
    for m in _EXPORT.finditer(state[:MAX_STATE_CHARS]):
        raw = m.group(2)
        try:
            words = shlex.split(raw.replace("\\$", "$"))
        except ValueError:
            continue
        found[m.group(1)] = words[0] if len(words) == 1 else raw
    return found


def hook_text(state: str, command: str, cwd: str = "") -> str:
    """The shell text that programs of `command` would run because of variables the state exports: every shell
    sources $BASH_ENV, git runs $GIT_EXTERNAL_DIFF, python imports sitecustomize.py from $PYTHONPATH, node
    `--require`s from $NODE_OPTIONS, a pager runs $LESSOPEN. Empty when nothing applies (the usual case)."""
    if not state or "=" not in state:
        return ""
    env = exported(state)
    lines = [f". {shlex.quote(env[k])}" for k in _SHELL_FILES if env.get(k)]
    lines += _path_programs(env.get("PATH", ""), command, cwd)
    if _GITISH.search(command):
        lines += [env[k] for k in _GIT_COMMANDS if env.get(k)]
        lines += _git_settings(env, cwd)
    lines += [env[k].lstrip("|") for k in _PAGERS if env.get(k) and not env[k].startswith(("less", "more"))]
    if _PYTHON.search(command):
        for d in filter(None, env.get("PYTHONPATH", "").split(":")):
            lines += [f"python3 {shlex.quote(d.rstrip('/') + '/' + f)}" for f in ("sitecustomize.py",
                                                                                    "usercustomize.py")]
        if env.get("PYTHONSTARTUP"):
            lines.append(f"python3 {shlex.quote(env['PYTHONSTARTUP'])}")
    if _NODE.search(command) and env.get("NODE_OPTIONS"):
        words = env["NODE_OPTIONS"].split()
        lines += [f"node {shlex.quote(words[i + 1])}" for i, w in enumerate(words[:-1])
                  if w in ("-r", "--require", "--import", "--loader", "--experimental-loader")]
    return "\n".join(lines)


_GIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-push", "post-checkout",
              "post-merge", "pre-rebase", "post-rewrite", "pre-auto-gc", "reference-transaction", "fsmonitor-watchman")
CONFIG_FILE_WORD = "__hermes_git_config_file"  # workfiles.py reads the file it names as git configuration
_WRITABLE = ("/tmp/", "/var/tmp/", "/dev/shm/")


def _git_settings(env: dict[str, str], cwd: str) -> list[str]:
    """Git settings the carried variables give every later git: `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n` and
    `GIT_CONFIG_PARAMETERS` as `git config KEY VALUE` lines (judged like the command setting them), and config
    files named by GIT_CONFIG_GLOBAL/SYSTEM, XDG_CONFIG_HOME, HOME or GIT_DIR when they lie where commands write
    (the workspace, temp dirs): those are read as git configuration (a fsmonitor or pager there runs)."""
    pairs: list[tuple[str, str]] = []
    count = env.get("GIT_CONFIG_COUNT", "")
    for i in range(min(int(count), 64) if count.isdigit() else 0):
        pairs.append((env.get(f"GIT_CONFIG_KEY_{i}", ""), env.get(f"GIT_CONFIG_VALUE_{i}", "")))
    try:
        words = shlex.split(env.get("GIT_CONFIG_PARAMETERS", ""))
    except ValueError:
        words = []
    pairs += [tuple(w.split("=", 1)) for w in words if "=" in w]  # type: ignore[misc]
    lines = [f"git config {shlex.quote(k)} {shlex.quote(v)}" for k, v in pairs if k]
    files = [env.get("GIT_CONFIG_GLOBAL", ""), env.get("GIT_CONFIG_SYSTEM", ""), env.get("GIT_CONFIG", "")]
    if env.get("XDG_CONFIG_HOME"):
        files.append(env["XDG_CONFIG_HOME"].rstrip("/") + "/git/config")
    if env.get("HOME"):
        files += [env["HOME"].rstrip("/") + "/.gitconfig", env["HOME"].rstrip("/") + "/.config/git/config"]
    if env.get("GIT_DIR"):
        files.append(env["GIT_DIR"].rstrip("/") + "/config")
    if env.get("GIT_TEMPLATE_DIR"):  # `git init`/`clone` copy its hooks into the new repository, which runs them
        hooks = env["GIT_TEMPLATE_DIR"].rstrip("/") + "/hooks/"
        lines += [f"sh {shlex.quote(hooks + h)}" for h in _GIT_HOOKS]
    base = cwd.rstrip("/") + "/" if cwd else None
    for f in files:
        if f and (not f.startswith("/") or (base and f.startswith(base)) or f.startswith(_WRITABLE)):
            lines.append(f"{CONFIG_FILE_WORD} {shlex.quote(f)}")
    return lines


def _path_programs(path: str, command: str, cwd: str) -> list[str]:
    """A carried PATH with an entry where commands write (the workspace, temp dirs) turns a bare `ls` into that
    entry's `ls` when one is there (red-team round 10 2a): each word of `command` that could be a program, as a
    path into each such entry, for the reader to judge (a missing file is skipped)."""
    from hermes_agent.paths import user_path

    base = cwd.rstrip("/") + "/" if cwd else None
    own = set(user_path().split(":"))  # the user's own PATH (an activated project venv) is theirs, not planted
    entries = [e for e in path.split(":") if e and e not in own and (
        not e.startswith("/") or (base and (e + "/").startswith(base)) or (e + "/").startswith(_WRITABLE))][:4]
    if not entries:
        return []
    words = [w for w in dict.fromkeys(_WORD.findall(command)) if "/" not in w and "=" not in w
             and not w.startswith("-")][:24]
    return [shlex.quote(e.rstrip("/") + "/" + w) for e in entries for w in words]
