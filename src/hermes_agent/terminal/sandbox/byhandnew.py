"""NEW files a project's tool loads on its next routine run (issue 19 class 6, red-team round 13 a10/a15/a29).

A run-by-hand file (byhand.py) made in a tainted turn stays when nothing of the project runs it yet (`npm init`,
a scaffold's first Makefile): the user has not run it. But a new file that the tool the project already uses
DISCOVERS by its own rules changes what that tool runs, exactly like an edit of the file already there:

- one directory, several names, one tool: GNU make reads `GNUmakefile`, then `makefile`, then `Makefile`
  (the first found, instead of the one the user knows); just, Task (`Taskfile.yml` over `Taskfile.dist.yml`),
  docker compose, rake likewise; pip's setuptools build runs a new `setup.py` beside `pyproject.toml`, cargo
  a new `build.rs` beside `Cargo.toml`;
- pytest imports every `conftest.py` from the rootdir down to the directories it collects: a new one in a
  directory holding (or above) test files, or under a pytest configuration, runs on the user's next `pytest`;
  a new configuration there with a pytest section (tox.ini `[pytest]`, setup.cfg `[tool:pytest]`: `-p plugin`)
  is the one it reads;
- npm/yarn/pnpm workspaces: a new `package.json` in a directory an ancestor's `workspaces` globs (or
  `pnpm-workspace.yaml`'s `packages:`) match runs its scripts on `npm -ws test` / `pnpm -r test`; cargo
  workspaces likewise: a new crate's `build.rs` where an ancestor's `[workspace] members` match.

What a run-by-hand file pulls in by name or glob (`include mk/*.mk`, a script package.json names) is
byhandinc.py's; `.envrc` is runlater's (class "later"). `loader` answers by those rules; `risky` is the
verdict the run-later guard (guardverdict) and hermes's own writes (runlater.path_verdict) give a new file in a
tainted turn. Stdlib only."""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable

# one tool, the names it looks for in a directory (the first found wins, or all are read)
SAME_DIR: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("make", ("GNUmakefile", "makefile", "Makefile")),
    ("just", ("justfile", "Justfile", ".justfile")),
    ("task", ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml",
              "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml")),
    ("docker compose", ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")),
    ("rake", ("Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb")),
    ("pip install / build (setuptools runs setup.py)", ("setup.py", "pyproject.toml", "setup.cfg")),
    ("cargo build (it runs build.rs)", ("build.rs", "Cargo.toml")),
)
_PYTEST_CONFIGS = {"pytest.ini": "", ".pytest.ini": "", "tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]",
                   "pyproject.toml": "[tool.pytest"}
_SKIP = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".git", "site-packages",
                   ".mypy_cache", ".pytest_cache", "build", "dist", "target"})
UP, WALK = 8, 4000  # directories looked at above a new file; entries looked at below it (test files)
_LIMIT = 1 << 20

Existed = Callable[[str], bool]  # absolute path -> it was there before the work (a sibling the tool reads)


def loader(path: str, existed: Existed, top: str = "", new: bytes = b"") -> str:
    """Which tool of the project loads the new file `path` (absolute) on its next routine run, and why ("":
    none yet). `existed`: was a path there before the work; `top`: the project's top (upward looks stop there;
    "" : at the nearest `.git` or UP levels); `new`: its content (a pytest section in a new tox.ini...)."""
    d, name = os.path.split(path)
    for tool, names in SAME_DIR:
        if name in names:
            other = next((n for n in names if n != name and existed(os.path.join(d, n))), "")
            if other:
                return f"{tool} reads it in {d} along with or instead of the {other} the project has"
    if name == "conftest.py":
        return _pytest(d, top)
    if name in _PYTEST_CONFIGS and _PYTEST_CONFIGS[name].encode() in new:  # pytest reads the first one found
        return _pytest(d, top, skip=path)
    if name == "package.json":
        return _workspace(d, top)
    if name == "build.rs":  # a new crate (its Cargo.toml new too) that a cargo workspace's members glob takes in
        return _cargo(d, top)
    return ""


def _cargo(d: str, top: str) -> str:
    """A crate directory `d` that an ancestor Cargo.toml's `[workspace] members` (minus `exclude`) match:
    `cargo build` / `cargo test` there builds it, running its build.rs."""
    import tomllib

    for up in _ups(os.path.dirname(d), top):
        try:
            ws = tomllib.loads((_read(os.path.join(up, "Cargo.toml")) or b"").decode("utf-8", "replace"))
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        ws = ws.get("workspace") if isinstance(ws.get("workspace"), dict) else {}
        globs = [*(g for g in ws.get("members", []) if isinstance(g, str)),
                 *("!" + g for g in ws.get("exclude", []) if isinstance(g, str))]
        if globs and _matches(os.path.relpath(d, up), globs):
            return f"{os.path.join(up, 'Cargo.toml')} names it a workspace member: cargo build runs its build.rs"
    return ""


def risky(path: str, rel: str, new: bytes | None, existed: Existed, top: str = "") -> str:
    """Why the NEW run-by-hand file `path` (its TABLE entry `rel`), holding `new`, made in a tainted turn must
    be put back ("" when no tool of the project loads it yet, or it holds nothing runnable)."""
    from hermes_agent.terminal.sandbox import byhand

    if new is None:
        return ""
    why = byhand.risky(rel, None, new, included=True)
    who = loader(path, existed, top, new) if why else ""
    return f"{why} ({who})" if who else ""


def _ups(d: str, top: str) -> list[str]:
    """`d` and the directories above it, to `top` (or the nearest one holding `.git`, or UP levels)."""
    out = []
    for _ in range(UP):
        if top and d != top and not d.startswith(top.rstrip("/") + "/"):
            break
        out.append(d)
        if d == top or (not top and os.path.lexists(os.path.join(d, ".git"))) or d == os.path.dirname(d):
            break
        d = os.path.dirname(d)
    return out


def _read(path: str) -> bytes | None:
    from hermes_agent.nofollow import read_regular_or_none

    return read_regular_or_none(path, _LIMIT)


def _pytest(d: str, top: str, skip: str = "") -> str:
    """pytest imports `d/conftest.py` (and reads a configuration in `d`) when it collects a test file below
    `d`, or when `d` is (or lies below) the rootdir a pytest configuration (not `skip`) names."""
    for up in _ups(d, top):
        for name, section in _PYTEST_CONFIGS.items():
            data = _read(os.path.join(up, name)) if os.path.join(up, name) != skip else None
            if data is not None and section.encode() in data:
                return f"pytest imports it on the next run under the configuration in {os.path.join(up, name)}"
    found = _test_file(d)
    return f"pytest imports it before collecting {found}" if found else ""


def _test_file(d: str) -> str:
    """A file pytest collects by default (`test_*.py`, `*_test.py`) in `d` or below it ("" none)."""
    queue, seen = [d], 0
    while queue and seen < WALK:
        here = queue.pop(0)
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if e.name.endswith(".py") and (e.name.startswith("test_") or e.name.endswith("_test.py")):
                return e.path
            if e.name not in _SKIP and e.is_dir(follow_symlinks=False):
                queue.append(e.path)
    return ""


def _workspace(d: str, top: str) -> str:
    """A package.json in `d` that an ancestor's workspaces (npm/yarn `workspaces`, pnpm-workspace.yaml
    `packages:`) match: `npm -ws` / `pnpm -r` runs its scripts."""
    for up in _ups(os.path.dirname(d), top):
        rel = os.path.relpath(d, up)
        for name, globs in (("package.json", _npm_globs(up)), ("pnpm-workspace.yaml", _pnpm_globs(up))):
            if globs and _matches(rel, globs):
                return f"{os.path.join(up, name)} names it a workspace: npm -ws / pnpm -r runs its scripts"
    return ""


def _npm_globs(d: str) -> list[str]:
    return npm_globs(_read(os.path.join(d, "package.json")) or b"")


def _pnpm_globs(d: str) -> list[str]:
    return pnpm_globs(_read(os.path.join(d, "pnpm-workspace.yaml")) or b"")


def npm_globs(data: bytes) -> list[str]:
    """A package.json's `workspaces` globs (a list, or yarn's `{packages: [...]}`)."""
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        return []
    ws = doc.get("workspaces") if isinstance(doc, dict) else None
    ws = ws.get("packages") if isinstance(ws, dict) else ws
    return [g for g in ws if isinstance(g, str)] if isinstance(ws, list) else []


def pnpm_globs(data: bytes) -> list[str]:
    """pnpm-workspace.yaml's `packages:` globs."""
    out, block = [], False
    for line in data.decode("utf-8", "replace").splitlines():
        if line and not line[0].isspace() and not line.startswith("-"):
            block = line.split("#", 1)[0].strip() == "packages:"
        elif block and line.strip().startswith("-"):
            out.append(line.strip()[1:].split("#", 1)[0].strip().strip("'\""))
    return out


def _matches(rel: str, globs: list[str]) -> bool:
    """npm's (minimatch) workspace globs: `*` one path segment, `**` any number; `!x` excludes."""
    hit = False
    for g in globs:
        neg = g.startswith("!")
        g = g.lstrip("!").strip().removeprefix("./").rstrip("/")
        if g and _glob(rel.split("/"), g.split("/")):
            hit = not neg
    return hit


def _glob(parts: list[str], pats: list[str]) -> bool:
    if not pats:
        return not parts
    if pats[0] == "**":
        return any(_glob(parts[i:], pats[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pats[0]) and _glob(parts[1:], pats[1:])
