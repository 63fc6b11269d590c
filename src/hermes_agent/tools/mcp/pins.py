"""An unconfined stdio server (`sandbox: false`) runs with the user's full rights, so what it runs must come
from where no sandbox writes: the rule of paths.trusted_which, applied to every path its config names. Its
`command` given as a path, every path among its arguments (`tools/server.py`, `--plugins=./p`, `-I./lib`,
`--config ~/proj/x.yaml`, `-r ./preload.js`) and among its `env:` values (`CONFIG=~/proj/mcp.json`, lists
`a:b`, `file://` URLs), whatever the flag or variable (pathwords.py finds them), and the module of `python -m
MOD` found in its working directory are judged; one lying where sandboxed commands write (the workspace, a temp
dir, or reached through a link there) is refused with one line naming it and the pin to add after checking it:
`mcp_servers.NAME.pin: {PATH: sha256:HEX}`. Pinned, the server gets hermes's copy of exactly the bytes hashed
(pintree.materialize) in its place: a script or code file is pinned by its DIRECTORY's loadable files (the
interpreter loads its neighbours), a directory by its loadable files, any other file (a config) by its content,
and an explicit path that config names in a writable root refuses it too. A symlink, a missing path (a command
could create it) or `-m MOD` there cannot be pinned. With `-m` and a working directory sandboxed commands write,
PYTHONSAFEPATH=1 keeps that directory off the server's sys.path (a planted json.py cannot shadow the stdlib)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass

from hermes_agent import paths
from hermes_agent.tools.mcp import pathwords, pintree
from hermes_agent.tools.mcp.config import ServerConfig

MAX_PINNED_BYTES = 64 * 1024 * 1024
_PYTHON_NAMES = ("python", "python3", "pypy", "pypy3", "uv", "uvx")
_VALUE_OPTIONS = frozenset({"-W", "-X", "-r", "--require", "--import", "--loader", "--experimental-loader", "--with",
                            "--python", "--project", "--directory", "--env-file", "--with-requirements"})
_INTERPRETERS = ("python", "pypy", "node", "nodejs", "bun", "deno", "uv", "ruby", "perl", "php", "bash", "sh", "dash",
                 "zsh", "lua", "tsx", "ts-node")


@dataclass(frozen=True, slots=True)
class Plan:
    """What an unconfined server starts with: `error` refuses it; otherwise `command`/`args` (None: as
    configured) name the pinned copy of its script's directory (pintree.py)."""

    error: str = ""
    command: str | None = None
    args: tuple[str, ...] | None = None
    env: dict[str, str] | None = None  # the environment given, its pinned values naming hermes's copies


def _script(cfg: ServerConfig, cwd: str, command: str) -> tuple[str, int]:
    """The script the server runs, absolute, and its index in args (-1: it is the command); ("", -1): none."""
    name = os.path.basename(command)
    if name.rstrip("0123456789.") not in _INTERPRETERS:
        return (os.path.normpath(os.path.join(cwd, os.path.expanduser(command))), -1) if os.sep in command else ("", -1)
    skip, uv = False, name == "uv"
    for i, a in enumerate(cfg.args):
        if a in ("-m", "-c", "-e", "--eval", "--print", "-") or (a == "-p" and not uv):
            return "", -1
        if skip or a.startswith("-") or (i == 0 and a == "run"):
            skip = not skip and (a in _VALUE_OPTIONS or (uv and a == "-p"))
            continue
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(a))), i
    return "", -1


@dataclass(frozen=True, slots=True)
class _Ctx:
    where: str  # mcp_servers.NAME
    cwds: tuple[str, ...]  # where a relative path is resolved from (the workspace, where the server starts)
    pins: dict[str, str]
    create: bool


def plan(cfg: ServerConfig, cwd: str | None, command: str, *, create: bool = True,
         env: Mapping[str, str] | None = None, start: str | None = None) -> Plan:
    """Plan of an unconfined server: refused with one line unless every path its command, arguments and `env:`
    values name lies where no sandbox writes or is pinned (and then replaced by hermes's copy): a script or code
    file by its directory, a directory by its loadable files, another file by its content. `env`: the
    environment it gets, whose load paths (PYTHONPATH, NODE_PATH, LD_LIBRARY_PATH...) must not lead there.
    `start`: where it starts (relative paths are judged from there too)."""
    cwd = cwd or os.getcwd()
    pins = {os.path.normpath(os.path.join(cwd, os.path.expanduser(k))).rstrip("/") or "/": v
            for k, v in cfg.pin.items()}
    ctx = _Ctx(f"mcp_servers.{cfg.name}", tuple(dict.fromkeys((cwd, start or cwd))), pins, create)
    problem = _module_problem(cfg, cwd, ctx)
    script, index = _script(cfg, cwd, command)
    new_command = command
    if os.sep in command and not problem:
        new_command, problem = _judge(command, "" if index < 0 and script else "its command names", ctx,
                                      script=index < 0 and bool(script))
    args = list(cfg.args)
    for i, a in enumerate(args):
        if problem:
            break
        said = f"{args[i - 1]} {a}" if i and args[i - 1].startswith("-") and not a.startswith("-") else a
        args[i], problem = _judge(a, "" if i == index else f"its argument `{said}` names", ctx, script=i == index)
    new_env = dict(env or {})
    for var, value in cfg.env.items():
        if problem:
            break
        new_env[var], problem = _judge(str(new_env.get(var, value)), f"its env {var} names", ctx)
    problem = problem or _env_problem(new_env, cwd, ctx.where)
    if problem:
        return Plan(problem)
    return Plan(command=None if new_command == command else new_command,
                args=None if tuple(args) == cfg.args else tuple(args), env=new_env if env is not None else None)


def _module_problem(cfg: ServerConfig, cwd: str, ctx: _Ctx) -> str:
    """`python -m MOD` finds MOD in its working directory: one that sandboxed commands write is refused (an
    unconfined server never starts there; start its script by path to pin it)."""
    args = cfg.args
    for i in range(1, len(args)):
        if args[i - 1] == "-m" and args[i].replace(".", "").replace("_", "").isalnum():
            top = os.path.join(cwd, args[i].split(".", 1)[0])
            for path in (top + ".py", top):
                if os.path.lexists(path) and not paths.trusted_program(path):
                    return (f"{_head(ctx.where, path)}, and `-m {args[i]}` would load it from its working directory: "
                            "name its script by path to pin it, move it out of the workspace or let the server run confined")
    return ""

_LOAD_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "NODE_PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT",
              "PERL5LIB", "PERLLIB", "RUBYLIB", "GEM_PATH", "GEM_HOME", "NODE_OPTIONS", "RUBYOPT", "PERL5OPT",
              "BASH_ENV", "ENV", "ZDOTDIR", "PYTHONSTARTUP", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig")


def _env_problem(env: Mapping[str, str], cwd: str, where: str) -> str:
    """One line when a variable the interpreter loads code by names a place sandboxed commands write (an
    empty entry of a set PYTHONPATH counts as the working directory; NODE_OPTIONS/RUBYOPT: the paths among
    their words)."""
    for name in _LOAD_VARS:
        value = env.get(name)
        if not value:
            continue
        if name.endswith("OPT") or name.endswith("OPTIONS"):
            entries = [w.split("=", 1)[-1] for w in value.split() if "/" in w]
        else:
            entries = value.replace(" ", ":").split(":") if name == "LD_PRELOAD" else value.split(os.pathsep)
        for entry in entries:
            if not entry and name != "PYTHONPATH":  # node drops empty entries; python's is the working dir
                continue
            path = os.path.normpath(os.path.join(cwd, os.path.expanduser(entry)))
            if not paths.trusted_program(path):
                return (f"not started: {where} runs unconfined (sandbox: false) but its environment's {name} names "
                        f"{path}, where sandboxed commands can write (what a command plants there would load with "
                        f"your rights): drop it from {where}.env (or your environment) or let the server run "
                        "confined")
    return ""


def _head(where: str, path: str, label: str = "") -> str:
    said = f"{label} {path}, which" if label else path
    return f"not started: {where} runs unconfined (sandbox: false) but {said} lies where sandboxed commands can write"


_CONFINED = "move it out of the workspace or let the server run confined"
_OR_CONFINED = "or let it run confined: drop sandbox: false"
_CODE = tuple(s for s in pintree.LOADABLE if s != ".json")  # a code file loads its neighbours (require('./x'))


def _writable_path(word: str, ctx: _Ctx) -> str:
    """The absolute path `word` names where sandboxed commands write, or "": an explicit path (`/`, `./`, `~/`,
    a `file:` URL's), or a relative name with a `/` or a `.` that exists there (`tools/server.py`)."""
    word = os.path.expandvars(word) if "$" in word else word  # `bash -c 'source $HOME/proj/x.sh'`
    explicit = pathwords.looks_like_path(word)
    if not explicit and os.sep not in word and "." not in word:
        return ""
    name = os.path.expanduser(word)
    for base in ctx.cwds:
        path = os.path.normpath(os.path.join(base, name))
        if (explicit or os.path.lexists(path)) and not paths.trusted_program(path):
            return path
    return ""


def _judge(value: str, label: str, ctx: _Ctx, *, script: bool = False) -> tuple[str, str]:
    """(`value` with each path it names where sandboxed commands write replaced by hermes's pinned copy, "")
    or (value, the line refusing it)."""
    if not any(c in value for c in "/.~$"):  # no path in it (-y, a package name, debug)
        return value, ""
    out, last = [], 0
    for a, b in pathwords.spans(value):
        path = _writable_path(value[a:b], ctx)
        if not path:
            continue
        copy, problem = _pin(path, label, ctx, script=script)
        if problem:
            return value, problem
        out += [value[last:a], copy]
        last = b
    return "".join(out) + value[last:], ""


def _pin(path: str, label: str, ctx: _Ctx, *, script: bool) -> tuple[str, str]:
    """(the path of hermes's copy of what `path` names, "") when the user pinned it, else ("", the line saying
    how to pin it, or why it cannot be)."""
    head = _head(ctx.where, path, label)
    if os.path.islink(path):
        return "", f"{head}, and a symlink cannot be pinned: {_CONFINED}"
    if os.path.isdir(path):
        return _tree_pin(path, "", f"{head}, and the server may load code from it", ctx)
    if not os.path.isfile(path):
        return "", (f"{head}, and it {'is not a regular file' if os.path.lexists(path) else 'does not exist yet'} "
                    f"(a sandboxed command could put code there): name a place outside the workspace, or let the "
                    "server run confined")
    folder = os.path.dirname(path)
    if script or path.endswith(_CODE):
        return _tree_pin(folder, os.path.basename(path),
                         f"{head}, and the interpreter loads the files next to it ({folder})", ctx)
    return _file_pin(path, head, ctx)


def _tree_pin(folder: str, rel: str, head: str, ctx: _Ctx) -> tuple[str, str]:
    """A script, code file or directory in a writable root is pinned as its directory's loadable files."""
    try:
        tree = pintree.read_tree(folder)
        now = pintree.digest(tree)
    except pintree.TreeError as exc:
        return "", f"{head}, which cannot be pinned: {exc}; {_CONFINED}"
    if rel and rel not in tree:
        return "", (f"{head}, but its name is not one of a loadable script ({', '.join(pintree.LOADABLE[:6])}, "
                    f"...): rename it, {_CONFINED}")
    if ctx.pins.get(folder) != now:
        changed = "changed since it was pinned" if folder in ctx.pins else (
            "a pin of the script alone does not cover them" if os.path.join(folder, rel) in ctx.pins else "")
        return "", (f"{head}{', ' + changed if changed else ''}: check the {len(tree)} loadable files there, then "
                    f'pin the directory (the server then gets hermes\'s copy; {_OR_CONFINED}): '
                    f'{ctx.where}.pin: {{"{folder}": "{now}"}}')
    return _copy(tree, now, rel, head, ctx)


def _file_pin(path: str, head: str, ctx: _Ctx) -> tuple[str, str]:
    """Another file (a config) is pinned by its content; the paths it names are judged too (one level)."""
    from hermes_agent.approval.scriptfiles import read_nofollow

    try:
        data = read_nofollow(os.path.realpath(path), MAX_PINNED_BYTES)
    except OSError as exc:
        return "", f"{head}, and it cannot be read to check it ({exc.strerror or exc})"
    if data is None:
        return "", f"{head}, and it cannot be read to check it"
    now = "sha256:" + hashlib.sha256(data).hexdigest()
    if ctx.pins.get(path) != now:
        if path in ctx.pins:
            return "", f"{head}, and it changed since it was pinned (now {now}): check it, then update {ctx.where}.pin"
        return "", (f"{head}: check it, then pin it (the server then gets hermes's copy; {_OR_CONFINED}): "
                    f'{ctx.where}.pin: {{"{path}": "{now}"}}')
    named = _names_writable(data, path, ctx)
    if named:
        return "", (f"{head}, and it names {named}, where sandboxed commands can write too (what it loads from there "
                    f"would run with your rights): {_CONFINED}")
    tree = {os.path.basename(path): (data, os.access(path, os.X_OK))}
    return _copy(tree, pintree.digest(tree), os.path.basename(path), head, ctx)


def _names_writable(data: bytes, path: str, ctx: _Ctx) -> str:
    """The first explicit path in a pinned file's text that lies where sandboxed commands write, or "" (a config
    whose `plugins: ~/proj/p` would load what a command plants there)."""
    text = data[:1 << 20].decode("utf-8", "replace")
    bases = (os.path.dirname(path), *ctx.cwds)
    for a, b in pathwords.spans(text):
        word = text[a:b]
        if pathwords.looks_like_path(word):
            for base in bases:
                found = os.path.normpath(os.path.join(base, os.path.expanduser(word)))
                if not paths.trusted_program(found):
                    return found
    return ""


def _copy(tree: pintree.Tree, key: str, rel: str, head: str, ctx: _Ctx) -> tuple[str, str]:
    """The path of `rel` in hermes's copy of `tree` (made once per digest; not made when only planning)."""
    try:
        root = pintree.materialize(tree, key) if ctx.create else os.path.join(pintree.store_root(),
                                                                               key.removeprefix("sha256:"))
    except pintree.TreeError as exc:
        return "", f"{head}: {exc}"
    return (os.path.join(root, rel) if rel else root), ""


def safe_path_env(cfg: ServerConfig, cwd: str | None) -> dict[str, str]:
    """PYTHONSAFEPATH=1 for `python -m` started in a directory sandboxed commands write (else nothing)."""
    name = os.path.basename(cfg.command)
    if "-m" in cfg.args and name.startswith(_PYTHON_NAMES) and cwd and not paths.trusted_program(cwd):
        return {"PYTHONSAFEPATH": "1"}
    return {}
