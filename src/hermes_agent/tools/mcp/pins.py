"""An unconfined stdio server (`sandbox: false`) runs with the user's full rights, so what it runs must come
from where no sandbox writes: the rule of paths.trusted_which, applied to the files the config names. Its
`command` given as a path (./server.py, .venv/bin/x), every argument naming a file (`python tools/server.py`,
`node dist/index.js`, `--config cfg.json`), and the module of `python -m MOD` found in its working directory
are checked; one lying where sandboxed commands write (the workspace, a temp dir, or reached through a link
there) is refused with one line naming it, unless the user pinned its content:
`mcp_servers.NAME.pin: {PATH: sha256:HEX}` (the line gives the digest to pin after checking the file). A
directory or a symlink there cannot be pinned. With `-m` and a working directory sandboxed commands write,
PYTHONSAFEPATH=1 keeps that directory off the server's sys.path (a planted json.py cannot shadow the stdlib)."""

from __future__ import annotations

import hashlib
import os

from hermes_agent import paths
from hermes_agent.tools.mcp.config import ServerConfig

MAX_PINNED_BYTES = 64 * 1024 * 1024
_PYTHON_NAMES = ("python", "python3", "pypy", "pypy3", "uv", "uvx")


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


def check(cfg: ServerConfig, cwd: str | None, command: str) -> str:
    """"" when every file the unconfined server runs lies where no sandbox writes or is pinned, else one line."""
    cwd = cwd or os.getcwd()
    pins = {os.path.normpath(os.path.join(cwd, os.path.expanduser(k))): v for k, v in cfg.pin.items()}
    where = f"mcp_servers.{cfg.name}"
    for path in _candidates(cfg, cwd, command):
        if paths.trusted_program(path):
            continue
        head = f"not started: {where} runs unconfined (sandbox: false) but {path} lies where sandboxed commands can write"
        if os.path.islink(path) or not os.path.isfile(path):
            return (f"{head}, and a {'symlink' if os.path.islink(path) else 'directory'} cannot be pinned: move the "
                    "server out of the workspace or let it run confined")
        try:
            now = digest(path)
        except OSError as exc:
            return f"{head}, and it cannot be read to check it ({exc.strerror or exc})"
        if pins.get(path) == now:
            continue
        if path in pins:
            return (f"{head}, and it changed since it was pinned (now {now}): check it, then update "
                    f"{where}.pin")
        return f'{head}: check it, then pin it: {where}.pin: {{"{path}": "{now}"}}'
    return ""


def safe_path_env(cfg: ServerConfig, cwd: str | None) -> dict[str, str]:
    """PYTHONSAFEPATH=1 for `python -m` started in a directory sandboxed commands write (else nothing)."""
    name = os.path.basename(cfg.command)
    if "-m" in cfg.args and name.startswith(_PYTHON_NAMES) and cwd and not paths.trusted_program(cwd):
        return {"PYTHONSAFEPATH": "1"}
    return {}
