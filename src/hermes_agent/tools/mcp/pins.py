"""An unconfined stdio server (`sandbox: false`) runs with the user's full rights, so what it runs must come
from where no sandbox writes: the rule of paths.trusted_which, applied to the files the config names. Its
`command` given as a path (./server.py, .venv/bin/x), every argument naming a file (`python tools/server.py`,
`node dist/index.js`, `--config cfg.json`), and the module of `python -m MOD` found in its working directory
are checked; one lying where sandboxed commands write (the workspace, a temp dir, or reached through a link
there) is refused with one line naming it, unless the user pinned its content:
`mcp_servers.NAME.pin: {PATH: sha256:HEX}` (the line gives the digest to pin after checking the file). The
script the server runs (the command given as a path, or an interpreter's script argument) is pinned by its
DIRECTORY, whose loadable files the interpreter may load too (pintree.py), and runs from hermes's copy of
them. A symlink there cannot be pinned. With `-m` and a working directory sandboxed commands write,
PYTHONSAFEPATH=1 keeps that directory off the server's sys.path (a planted json.py cannot shadow the stdlib)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass

from hermes_agent import paths
from hermes_agent.tools.mcp.config import ServerConfig

MAX_PINNED_BYTES = 64 * 1024 * 1024
_PYTHON_NAMES = ("python", "python3", "pypy", "pypy3", "uv", "uvx")
_VALUE_OPTIONS = frozenset({"-W", "-X", "-r", "--require", "--import", "--loader", "--experimental-loader", "--with",
                            "--python", "--project", "--directory", "--env-file", "--with-requirements"})
_INTERPRETERS = ("python", "pypy", "node", "nodejs", "bun", "deno", "uv", "ruby", "perl", "php", "bash", "sh", "dash",
                 "zsh", "lua", "tsx", "ts-node")


def digest(path: str) -> str:
    """sha256:HEX of the regular file at `path` (its real path read with no symlink followed on the way: a link
    swapped in meanwhile fails closed). Raises OSError."""
    from hermes_agent.approval.scriptfiles import read_nofollow

    data = read_nofollow(os.path.realpath(path), MAX_PINNED_BYTES)
    if data is None:
        raise FileNotFoundError(path)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _candidates(cfg: ServerConfig, cwd: str, command: str) -> list[str]:
    """Absolute paths of the files the config makes the server run or read at start."""
    def at(p: str) -> str:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(p)))

    found = [at(command)] if os.sep in command else []
    args = list(cfg.args)
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if i > 0 and args[i - 1] == "-m" and value.replace(".", "").replace("_", "").isalnum():
            top = value.split(".", 1)[0]
            found += [p for p in (at(top + ".py"), at(top)) if os.path.lexists(p)]
        elif value and not value.startswith("-") and (os.sep in value or "." in value) and \
                (os.path.isfile(at(value)) or os.path.islink(at(value))):
            found.append(at(value))
    return [p for p in dict.fromkeys(found) if os.path.lexists(p)]


@dataclass(frozen=True, slots=True)
class Plan:
    """What an unconfined server starts with: `error` refuses it; otherwise `command`/`args` (None: as
    configured) name the pinned copy of its script's directory (pintree.py)."""

    error: str = ""
    command: str | None = None
    args: tuple[str, ...] | None = None


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


def plan(cfg: ServerConfig, cwd: str | None, command: str, *, create: bool = True,
         env: Mapping[str, str] | None = None) -> Plan:
    """Plan of an unconfined server: refused with one line unless every file it runs lies where no sandbox
    writes or is pinned; a script there is pinned by its directory and run from the pinned copy. `env`: the
    environment it gets, whose load paths (PYTHONPATH, NODE_PATH, LD_LIBRARY_PATH...) must not lead there."""
    cwd = cwd or os.getcwd()
    problem = _env_problem(env or {}, cwd, f"mcp_servers.{cfg.name}")
    if problem:
        return Plan(problem)
    pins = {os.path.normpath(os.path.join(cwd, os.path.expanduser(k))).rstrip("/") or "/": v
            for k, v in cfg.pin.items()}
    where = f"mcp_servers.{cfg.name}"
    script, index = _script(cfg, cwd, command)
    for path in _candidates(cfg, cwd, command):
        if paths.trusted_program(path) or (path == script and os.path.isfile(path) and not os.path.islink(path)):
            continue  # the script: pinned with its directory below
        problem = _file_problem(path, pins, where)
        if problem:
            return Plan(problem)
    if not script or os.path.islink(script) or not os.path.isfile(script) or paths.trusted_program(script):
        return Plan()
    return _tree_plan(cfg, script, index, pins, where, create)


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


def _head(where: str, path: str) -> str:
    return f"not started: {where} runs unconfined (sandbox: false) but {path} lies where sandboxed commands can write"


def _file_problem(path: str, pins: dict[str, str], where: str) -> str:
    head = _head(where, path)
    if os.path.islink(path) or not os.path.isfile(path):
        return (f"{head}, and a {'symlink' if os.path.islink(path) else 'directory'} cannot be pinned: move the "
                "server out of the workspace or let it run confined")
    try:
        now = digest(path)
    except OSError as exc:
        return f"{head}, and it cannot be read to check it ({exc.strerror or exc})"
    if pins.get(path) == now:
        return ""
    if path in pins:
        return f"{head}, and it changed since it was pinned (now {now}): check it, then update {where}.pin"
    return f'{head}: check it, then pin it: {where}.pin: {{"{path}": "{now}"}}'


def _tree_plan(cfg: ServerConfig, script: str, index: int, pins: dict[str, str], where: str,
               create: bool) -> Plan:
    """A script in a writable root runs with what lies next to it: pinned as its directory's manifest."""
    from hermes_agent.tools.mcp import pintree

    folder = os.path.dirname(script)
    head = (f"{_head(where, script)}, and the interpreter loads the files next to it ({folder})")
    try:
        tree = pintree.read_tree(folder)
        now = pintree.digest(tree)
    except pintree.TreeError as exc:
        return Plan(f"{head}, which cannot be pinned: {exc}; move the server out of the workspace or let it run "
                    "confined")
    rel = os.path.relpath(script, folder)
    if rel not in tree:
        return Plan(f"{head}, but its name is not one of a loadable script ({', '.join(pintree.LOADABLE[:6])}, "
                    "...): rename it, move the server out of the workspace or let it run confined")
    if pins.get(folder) != now:
        changed = "changed since it was pinned" if folder in pins else (
            "a pin of the script alone does not cover them" if script in pins else "")
        return Plan(f"{head}{', ' + changed if changed else ''}: check the {len(tree)} loadable files there, then pin "
                    f'the directory: {where}.pin: {{"{folder}": "{now}"}}')
    if not create:
        return Plan()
    try:
        copy = os.path.join(pintree.materialize(tree, now), rel)
    except pintree.TreeError as exc:
        return Plan(f"{head}: {exc}")
    if index < 0:
        return Plan(command=copy)
    args = list(cfg.args)
    args[index] = copy
    return Plan(args=tuple(args))


def safe_path_env(cfg: ServerConfig, cwd: str | None) -> dict[str, str]:
    """PYTHONSAFEPATH=1 for `python -m` started in a directory sandboxed commands write (else nothing)."""
    name = os.path.basename(cfg.command)
    if "-m" in cfg.args and name.startswith(_PYTHON_NAMES) and cwd and not paths.trusted_program(cwd):
        return {"PYTHONSAFEPATH": "1"}
    return {}
