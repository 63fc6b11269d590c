"""Where an unconfined server (`sandbox: false`) starts, and what it may be told to read there (red-team round
12 a45, a48, a49). A program reads its working directory and the folders above it: npx runs a local
`node_modules/.bin` before the registry, `npm run`/`make`/`just`/`uv run` run the project's scripts and recipes,
bash sources `BASH_ENV`. A confined command writes the workspace, so an unconfined server never starts there:

- without a configured `cwd:` it starts in `/` (nothing a sandbox writes, no folder above it that an npm,
  pyproject or .env lookup walks up to); with a `cwd:` that lies where sandboxed commands write it is refused;
- a project launcher (npm run, pnpm, yarn, make, just, uv run, poetry, cargo run, go run, docker compose...)
  needs its project: refused unless its configured `cwd:` lies where no sandbox writes;
- a launcher's project options (`-C`, `--prefix`, `--directory`, `-f`, `--from`...) and a package runner's
  package (`npx ./pkg`, `uvx /ws/tool`) may not name such a place;
- every path among the server's arguments and `env:` values is judged by pins.py (pinned, or refused).
Each refusal is one line naming the place and how to grant: move it out of the workspace, or run it confined."""

from __future__ import annotations

import os

from hermes_agent import paths
from hermes_agent.tools.mcp.config import ServerConfig
from hermes_agent.tools.mcp.pathwords import looks_like_path

NEUTRAL_CWD = "/"
_RUNNERS = {"npx": (), "pnpx": (), "bunx": (), "uvx": (), "npm": ("exec", "x"), "pnpm": ("dlx",), "yarn": ("dlx",),
            "bun": ("x",), "uv": ("tool",)}
# command -> the subcommands that run the project in the working directory (empty: every use does)
_PROJECT: dict[str, tuple[str, ...]] = {
    "npm": (), "pnpm": (), "yarn": (), "yarnpkg": (), "make": (), "gmake": (), "just": (), "task": (), "rake": (),
    "invoke": (), "mix": (), "tox": (), "nox": (), "poetry": (), "pipenv": (), "pdm": (), "hatch": (), "rye": (),
    "docker-compose": (), "podman-compose": (), "bun": ("run",), "uv": ("run", "sync"), "cargo": ("run",),
    "go": ("run", "generate"), "docker": ("compose",), "podman": ("compose",), "deno": ("task",), "dotnet": ("run",)}
_PROJECT_OPTIONS = frozenset({"-C", "--directory", "--dir", "--prefix", "--cwd", "--project", "--project-dir",
                              "--project-directory", "--manifest-path", "-f", "--file", "--makefile", "--justfile",
                              "--working-directory", "--from", "--with", "--with-editable", "-p", "--package",
                              "--env-file", "--userconfig", "--globalconfig", "--config", "-c", "--modfile"})


def _subcommand(args: tuple[str, ...]) -> str:
    return next((a for a in args if not a.startswith("-")), "")


def _untrusted(value: str, *cwds: str) -> str:
    """The absolute path `value` names that lies where sandboxed commands write (resolved from each of `cwds`),
    or ""."""
    value = os.path.expanduser(value.removeprefix("git+").removeprefix("file:").removeprefix("//"))
    for cwd in cwds:
        path = os.path.normpath(os.path.join(cwd, value))
        if not paths.trusted_program(path):
            return path
    return ""


def _refusal(where: str, what: str, path: str, grant: str) -> str:
    return (f"not started: {where} runs unconfined (sandbox: false) but {what} {path}, where sandboxed commands can "
            f"write (what a command leaves there would run with your rights): {grant}")


_CONFINED = "or let the server run confined (drop sandbox: false)"


def start_dir(cfg: ServerConfig, cwd: str | None) -> tuple[str, str]:
    """(the working directory the server starts in, "") or ("", the line refusing it). `cwd`: the configured
    `cwd:` expanded, else the session's workspace."""
    where = f"mcp_servers.{cfg.name}"
    name = os.path.basename(cfg.command)
    sub = _subcommand(cfg.args)
    runner = name in _RUNNERS and (not _RUNNERS[name] or sub in _RUNNERS[name])
    project = not runner and name in _PROJECT and (not _PROJECT[name] or sub in _PROJECT[name])
    here = os.path.abspath(cwd) if cwd else ""
    trusted = bool(here) and paths.trusted_program(here)
    if project and not (cfg.cwd and trusted) and not _project_named(name, cfg.args, sub):
        shown = f"`{name}{' ' + sub if _PROJECT[name] else ''}`"
        return "", _refusal(where, f"{shown} runs the project of its working directory", here or os.getcwd(),
                            "set its cwd: to a copy of the project outside the workspace, " + _CONFINED)
    if cfg.cwd and not trusted:
        return "", _refusal(where, "its cwd: is", here, "set cwd: to a folder outside the workspace (or drop it: "
                            f"the server then starts in {NEUTRAL_CWD}), " + _CONFINED)
    start = here if cfg.cwd else NEUTRAL_CWD
    if not paths.trusted_program(start):
        return "", _refusal(where, "its working directory would be", start, _CONFINED)
    problem = _launcher_args(cfg, name, runner or project, where, *dict.fromkeys((here or start, start)))
    return ("", problem) if problem else (start, "")


_SCRIPT_RUNS = ("uv", "bun", "go", "deno")
_SCRIPT_SUFFIXES = (".py", ".go", ".ts", ".js", ".mjs", ".cjs")  # `uv run /srv/server.py`: a script, from `/` no project around it


def _project_named(name: str, args: tuple[str, ...], sub: str) -> bool:
    """The launcher is told where its project (or script) is, so it needs no working directory: a project
    option with a path (`make -C DIR`, `npm --prefix DIR`, `uv run --directory DIR`: judged by _launcher_args),
    or the script of `uv run`/`bun run`/`go run` (judged by pins.plan)."""
    for i, a in enumerate(args):
        option, _, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        value = inline or (args[i + 1] if i + 1 < len(args) else "")
        if option in _PROJECT_OPTIONS and option not in ("--with", "-p", "--package") and looks_like_path(value):
            return True
    after = list(args[args.index(sub) + 1:]) if sub in args else []
    script = next((a for i, a in enumerate(after) if not a.startswith("-") and
                   (i == 0 or after[i - 1] not in _PROJECT_OPTIONS)), "")
    return name in _SCRIPT_RUNS and sub == "run" and script.endswith(_SCRIPT_SUFFIXES)


def _launcher_args(cfg: ServerConfig, name: str, launcher: bool, where: str, *cwds: str) -> str:
    """A launcher's project options, and a package runner's package, naming a place sandboxed commands write."""
    if not launcher:
        return ""
    args, positional, runner = list(cfg.args), 0, name in _RUNNERS
    for i, a in enumerate(args):
        if a == "--":
            break
        option, _, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        value = inline or (args[i + 1] if option in _PROJECT_OPTIONS and not inline and i + 1 < len(args) else "")
        if option in _PROJECT_OPTIONS and value and looks_like_path(value):
            bad = _untrusted(value, *cwds)
            if bad:
                return _refusal(where, f"`{name} {option}` names", bad,
                                "point it at a copy outside the workspace, " + _CONFINED)
        if a.startswith("-") or (i > 0 and args[i - 1] in _PROJECT_OPTIONS):
            continue
        positional += 1
        if name in _SCRIPT_RUNS and positional == 2 and args[:i].count("run") and looks_like_path(a) and \
                not os.path.isfile(os.path.join(cwds[0], a)):  # `go run /ws/cmd/x`: a package, not a pinned file
            bad = _untrusted(a, *cwds)
            if bad:
                return _refusal(where, f"`{name} run` runs", bad, "move it outside the workspace, " + _CONFINED)
        if runner and not (_RUNNERS[name] and positional <= 2 and a in (*_RUNNERS[name], "run")):  # the package: what follows is the server's
            bad = _untrusted(a, *cwds) if looks_like_path(a) else ""
            return _refusal(where, f"`{name}` runs the package at", bad, "install it outside the workspace "
                            "(npm -g, pipx, uv tool), " + _CONFINED) if bad else ""
    return ""


def absolute(arg: str, cwd: str, *, program: bool = False) -> str:
    """`arg` (or the value of `--opt=value`) made absolute from `cwd` when it names an existing file there by a
    relative path (pins.plan checked it): the server starts elsewhere but reads the same file. A bare name
    stays (npx's package, a subcommand), as does a program name without a `/`."""
    option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if not value or value.startswith(("-", "/", "~")) or (program and os.sep not in value) or \
            (os.sep not in value and "." not in value):
        return arg
    path = os.path.normpath(os.path.join(cwd, value))
    return f"{option}{eq}{path}" if os.path.isfile(path) else arg
