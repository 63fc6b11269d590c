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
from hermes_agent.shellnames import RESERVED

MAX_STATE_CHARS = 2_000_000
MAX_DEFINITIONS = 64
_FUNC_HEAD = lazy(r"\A([^\s()=|&;<>`$'\"]+) \(\) ?\Z")
_ALIAS = lazy(r"\Aalias (?:-- )?([^\s=]+)=")
_NAMES = lazy(r"^(?:([^\s()=|&;<>`$'\"]+) \(\) ?$|alias (?:-- )?([^\s=]+)=)", re.M)
_WORD = lazy(r"[^\s|&;<>()`$'\"{}]+")
# `declare -x NAME="value"` (bash) or `export NAME='value'` (sh): one exported variable per line
_EXPORT = lazy(r"^(?:declare -[a-zA-Z]*x[a-zA-Z]* |export )([A-Za-z_]\w*)=(.*)$", re.M)
_GIT_COMMANDS = ("GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EDITOR",
                 "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_PROXY_COMMAND", "SSH_ASKPASS")
_PAGERS = ("PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "EDITOR", "VISUAL")
# One table: an exported variable -> (the commands it reaches, how its value becomes what they run). "any": every
# program may be one that reads it (a shebang script, a tool written in that language, a dynamically linked
# binary); each way below yields (shell text, the file that text needs: the line is dropped when it is missing).
_HOOKS: dict[str, tuple[str, str]] = {
    "BASH_ENV": ("any", "sourced"), "ENV": ("any", "sourced"),
    **dict.fromkeys(_GIT_COMMANDS, ("git", "command")), **dict.fromkeys(_PAGERS, ("any", "pager")),
    "BROWSER": ("any", "browser"), "GIT_EXEC_PATH": ("git", "git_exec"),
    "PYTHONPATH": ("any", "pythonpath"), "PYTHONSTARTUP": ("python", "python_file"),
    "NODE_OPTIONS": ("any", "node_options"),
    # the dynamic loader and libc load code from these (a library, an audit module, an iconv module, a stdlib)
    **dict.fromkeys(("LD_PRELOAD", "LD_AUDIT", "LD_PRELOAD_32", "LD_PRELOAD_64", "LD_AUDIT_32", "LD_AUDIT_64",
                     "DYLD_INSERT_LIBRARIES"), ("any", "library")),
    **dict.fromkeys(("LD_LIBRARY_PATH", "GCONV_PATH", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH"),
                    ("any", "library")),
    "PYTHONHOME": ("python", "library"),
    "PYTEST_ADDOPTS": ("pytest", "pytest_options"), "PYTEST_PLUGINS": ("pytest", "pytest_plugins"),
    "PERL5OPT": ("any", "perl_options"), "PERL5LIB": ("any", "perl_lib"),
    "RUBYOPT": ("any", "ruby_options"), "RUBYLIB": ("any", "ruby_lib"),
    "JAVA_TOOL_OPTIONS": ("any", "java_options"), "JDK_JAVA_OPTIONS": ("any", "java_options"),
    "_JAVA_OPTIONS": ("any", "java_options"),
}
_PYTHON = lazy(r"(?:^|[\s/;&|(])python[\d.]*\b|(?:^|[\s;&|(])(?:pip[\d.]*|pytest|tox|nox|poetry|uv|ipython)\b")
_GITISH = lazy(r"(?:^|[\s/;&|(])(?:git|ssh|scp|rsync)\b")
_PYTEST = lazy(r"(?:^|[\s/;&|(])(?:py\.?test|tox|nox|hatch)\b")
_REACH = {"any": None, "git": _GITISH, "python": _PYTHON, "pytest": _PYTEST}
_PLAIN_PROGRAM = lazy(r"\A[\w.+-]+\Z")  # `vim`, `less`: a program found on PATH, nothing of the session's
INJECT_WORD = "__hermes_loads"  # workfiles.py: NAME PATH, a library or agent loaded into later programs
# modules nearly every program of a language loads first: planted in a search-path directory, they run
_PERL_FIRST = ("strict.pm", "warnings.pm", "Carp.pm", "Exporter.pm", "vars.pm", "constant.pm", "lib.pm", "utf8.pm")
_RUBY_FIRST = ("rubygems.rb", "did_you_mean.rb", "error_highlight.rb", "syntax_suggest.rb", "bundler/setup.rb")


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
    defined = {k: v for k, v in definitions(state).items() if k not in RESERVED}  # the wrapper removes those
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
    """hook_lines as one shell text, every line kept (the caller did not look for the files)."""
    return "\n".join(line for line, _file in hook_lines(state, command, cwd))


def hook_lines(state: str, command: str, cwd: str = "") -> list[tuple[str, str | None]]:
    """(shell text, file it needs or None) for what programs of `command` would run because of variables the
    state exports (the _HOOKS table: every shell sources $BASH_ENV, git runs $GIT_EXTERNAL_DIFF, python imports
    sitecustomize.py from $PYTHONPATH, every program loads $LD_PRELOAD...). Empty in the usual case."""
    if not state or "=" not in state:
        return []
    env = exported(state)
    lines = [(line, file) for line, file in _path_programs(env.get("PATH", ""), command, cwd)]
    for name, (reach, how) in _HOOKS.items():
        value = env.get(name)
        regex = _REACH[reach]
        if value and (regex is None or regex.search(command)):
            lines += _WAYS[how](name, value, env, command, cwd)
    if _GITISH.search(command):
        lines += _git_settings(env, cwd)
    return lines


def assigned_lines(name: str, value: str, cwd: str = "") -> list[str]:
    """`NAME=value cmd` (or `env NAME=value cmd`): what the _HOOKS table says programs of `cmd` run because of it,
    as shell text (its files are read by the gate like those of an exported variable)."""
    hook = _HOOKS.get(name)
    if hook is None or not value:
        return []
    return [line for line, _file in _WAYS[hook[1]](name, value, {name: value}, "", cwd)]


ASSIGNS_HOOK = lazy(r"(?:^|[\s;&|(])(?:" + "|".join(_HOOKS) + r"|GIT_CONFIG\w*)=")  # scriptfiles' cheap pre-check
GIT_VARS = lazy(r"\AGIT_CONFIG(?:_COUNT|_KEY_\d+|_VALUE_\d+|_PARAMETERS|_GLOBAL|_SYSTEM)?\Z|\A(?:GIT_DIR|GIT_TEMPLATE_DIR)\Z")


def git_assigned_lines(env: dict[str, str], cwd: str = "") -> list[str]:
    """The git settings and config files that `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=... git log` (the assignments
    before one command, `env`) give that git, as shell text: judged as `git config KEY VALUE` / the file's."""
    return [line for line, _file in _git_settings(env, cwd)]


def _writable(path: str, cwd: str) -> bool:
    """A place this session's commands can write: relative, in the workspace, or a temp dir."""
    base = cwd.rstrip("/") + "/" if cwd else None
    return not path.startswith(("/", "~")) or bool(base and (path + "/").startswith(base)) or \
        (path + "/").startswith(_WRITABLE)


def _command(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return [] if _PLAIN_PROGRAM.match(value) else [(value, None)]


def _pager(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return [] if value.startswith(("less", "more")) else _command(name, value.lstrip("|"))


def _browser(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return [x for part in value.split(":") if part for x in _command(name, part.replace("%s", "URL"))]


def _sourced(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return [(f". {shlex.quote(value)}", value)]


def _python_file(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return [(f"python3 {shlex.quote(value)}", value)]


def _in_dirs(program: str, dirs: list[str], files: tuple[str, ...]) -> list[tuple[str, str | None]]:
    found = [d.rstrip("/") + "/" + f for d in dirs[:8] for f in files]
    return [(f"{program} {shlex.quote(f)}", f) for f in found]


def _pythonpath(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    return _in_dirs("python3", [d for d in value.split(":") if d], ("sitecustomize.py", "usercustomize.py"))


_NODE_LOADS = ("-r", "--require", "--import", "--loader", "--experimental-loader")


def _node_options(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    words, files = value.split(), []
    for i, w in enumerate(words):
        key, eq, arg = w.partition("=")
        if key in _NODE_LOADS:
            files.append(arg if eq else words[i + 1] if i + 1 < len(words) else "")
    return [(f"node {shlex.quote(f)}", f) for f in files if f]


def _pytest_options(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    from hermes_agent.approval.rules.testrunners import addopts_plugins

    return _pytest_plugins(name, ",".join(addopts_plugins(value)))


def _pytest_plugins(name: str, value: str, *_: object) -> list[tuple[str, str | None]]:
    """`python3 -m NAME` per plugin (its files in the workspace are read for that line), needing NAME's file."""
    from hermes_agent.approval.rules.testrunners import plugin_lines

    lines = [line for line in plugin_lines([n.strip() for n in value.split(",")]).splitlines() if line]
    return [(line, None) for line in lines]


def _library(name: str, value: str, env: object, command: str, cwd: str) -> list[tuple[str, str | None]]:
    libs = [p for p in re.split(r"[:\s]+", value) if p and _writable(p, cwd)]
    return [(f"{INJECT_WORD} {name} {shlex.quote(p)}", p) for p in libs[:8]]


def _options(value: str, letters: str) -> list[tuple[str, str]]:
    """(letter, argument) of an interpreter's option variable: `-Mmod -I dir` -> [("M", "mod"), ("I", "dir")]."""
    words, out = value.split(), []
    for i, w in enumerate(words):
        if len(w) >= 2 and w[0] == "-" and w[1] in letters:
            arg = w[2:] or (words[i + 1] if i + 1 < len(words) else "")
            out.append((w[1], arg))
    return out


def _perl_options(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    opts = _options(value, "MmId")
    dirs = [a for k, a in opts if k == "I"] + [d for d in env.get("PERL5LIB", "").split(":") if d]
    mods = [a.lstrip("-:").split("=", 1)[0].split(" ", 1)[0] for k, a in opts if k in "Mm"]
    mods += ["Devel::" + a.lstrip(":").split("=", 1)[0] for k, a in opts if k == "d" and a.startswith(":")]
    files = tuple(m.replace("::", "/") + ".pm" for m in mods if m)
    return _in_dirs("perl", [d for d in dirs if _writable(d, cwd)], files)


def _perl_lib(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    return _in_dirs("perl", [d for d in value.split(":") if d and _writable(d, cwd)], _PERL_FIRST)


def _ruby_options(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    opts = _options(value, "rI")
    dirs = [a for k, a in opts if k == "I"] + [d for d in env.get("RUBYLIB", "").split(":") if d]
    libs = [a if a.endswith(".rb") else a + ".rb" for k, a in opts if k == "r" and a]
    found = [(f"ruby {shlex.quote(f)}", f) for f in libs if "/" in f and _writable(f, cwd)]
    return found + _in_dirs("ruby", [d for d in dirs if _writable(d, cwd)], tuple(libs))


def _ruby_lib(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    return _in_dirs("ruby", [d for d in value.split(":") if d and _writable(d, cwd)], _RUBY_FIRST)


def _java_options(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for word in shlex.split(value) if value.count('"') % 2 == 0 and value.count("'") % 2 == 0 else value.split():
        key, _, arg = word.partition(":") if word.startswith(("-javaagent:", "-agentpath:")) else word.partition("=")
        if key in ("-javaagent", "-agentpath") and arg.split("=", 1)[0]:
            lib = arg.split("=", 1)[0]
            found += [(f"{INJECT_WORD} {name} {shlex.quote(lib)}", lib)] if _writable(lib, cwd) else []
        elif key in ("-XX:OnError", "-XX:OnOutOfMemoryError") and arg:
            found += [(c, None) for c in arg.split(";") if c.strip()]
    return found


def _git_exec(name: str, value: str, env: dict, command: str, cwd: str) -> list[tuple[str, str | None]]:
    """$GIT_EXEC_PATH/git-SUB for the subcommands the text names and the helpers git runs on its own."""
    if not _writable(value, cwd):
        return []
    words = [w for w in dict.fromkeys(_WORD.findall(command)) if w.isidentifier() or "-" in w][:24]
    helpers = ("remote-https", "remote-http", "upload-pack", "receive-pack", "sh-setup", "sh-i18n",
               "mergetool--lib", "web--browse", "difftool--helper")
    files = [value.rstrip("/") + f"/git-{w}" for w in dict.fromkeys([*words, *helpers])]
    return [(shlex.quote(f), f) for f in files]


_WAYS = {"sourced": _sourced, "command": _command, "pager": _pager, "browser": _browser, "git_exec": _git_exec,
         "pythonpath": _pythonpath, "python_file": _python_file, "node_options": _node_options,
         "library": _library, "perl_options": _perl_options, "perl_lib": _perl_lib, "ruby_options": _ruby_options,
         "ruby_lib": _ruby_lib, "java_options": _java_options, "pytest_options": _pytest_options,
         "pytest_plugins": _pytest_plugins}


_GIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-push", "post-checkout",
              "post-merge", "pre-rebase", "post-rewrite", "pre-auto-gc", "reference-transaction", "fsmonitor-watchman")
CONFIG_FILE_WORD = "__hermes_git_config_file"  # workfiles.py reads the file it names as git configuration
_WRITABLE = ("/tmp/", "/var/tmp/", "/dev/shm/")


def _git_settings(env: dict[str, str], cwd: str) -> list[tuple[str, str | None]]:
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
    lines: list[tuple[str, str | None]] = [(f"git config {shlex.quote(k)} {shlex.quote(v)}", None) for k, v in pairs if k]
    files = [env.get("GIT_CONFIG_GLOBAL", ""), env.get("GIT_CONFIG_SYSTEM", ""), env.get("GIT_CONFIG", "")]
    if env.get("XDG_CONFIG_HOME"):
        files.append(env["XDG_CONFIG_HOME"].rstrip("/") + "/git/config")
    if env.get("HOME"):
        files += [env["HOME"].rstrip("/") + "/.gitconfig", env["HOME"].rstrip("/") + "/.config/git/config"]
    if env.get("GIT_DIR"):
        files.append(env["GIT_DIR"].rstrip("/") + "/config")
    if env.get("GIT_TEMPLATE_DIR"):  # `git init`/`clone` copy its hooks into the new repository, which runs them
        hooks = env["GIT_TEMPLATE_DIR"].rstrip("/") + "/hooks/"
        lines += [(f"sh {shlex.quote(hooks + h)}", hooks + h) for h in _GIT_HOOKS]
    base = cwd.rstrip("/") + "/" if cwd else None
    for f in files:
        if f and (not f.startswith("/") or (base and f.startswith(base)) or f.startswith(_WRITABLE)):
            lines.append((f"{CONFIG_FILE_WORD} {shlex.quote(f)}", f))
    return lines


def _path_programs(path: str, command: str, cwd: str) -> list[tuple[str, str | None]]:
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
    return [(shlex.quote(e.rstrip("/") + "/" + w), e.rstrip("/") + "/" + w) for e in entries for w in words]
