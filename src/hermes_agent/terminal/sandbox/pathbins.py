"""The user's PATH directories that lie where the sandbox writes (issue 19, red-team round 11 a04): direnv's
`PATH_add bin`, npm's `node_modules/.bin`, a project's `./tools`. A program dropped there under the name of one
found elsewhere on the user's PATH (`ls`, `git`, `python`, `sudo`) runs instead of it in the user's own,
unconfined shell. The run-later guard (guardscan.discover) watches every entry of these directories as class
"pathbin", and each directory entry itself; `risky` says why a new or changed entry must be put back. Other new entries stay (npm install's
`.bin/jest` link, a project script). A venv's bin/ keeps its own, stricter rule (runlater.bin_risky).

The PATH is the one the user started hermes with (`paths.user_path`: hermes trims its own). A relative entry
(`bin`, `node_modules/.bin`, `.` or an empty one) names a directory in every directory the user may stand in
later (rt12 a05): the deep watch spots its first component at any depth (`spot_names`) and the guard watches
each directory it names there (`named_in`) as it watches the absolute ones. Stdlib only."""

from __future__ import annotations

import os
import stat as st
from collections.abc import Callable, Iterable

from hermes_agent.paths import is_under as under
from hermes_agent.terminal.sandbox import pathadds


def _user_dirs() -> list[str]:
    from hermes_agent import paths

    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    out: list[str] = []
    for entry in paths.user_path().split(os.pathsep):
        p = os.path.normpath(os.path.join(cwd, os.path.expanduser(entry or ".")))
        # the entry as named (its parent resolved: a link put there is seen as one) and where it leads now
        for d in (os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p)), os.path.realpath(p)):
            if d not in out:
                out.append(d)
    return out


def relative(value: str | None = None) -> tuple[str, ...]:
    """The relative entries of a search path (the user's PATH by default), normalised ("." for the current
    directory: an empty entry too)."""
    from hermes_agent import paths

    out: list[str] = []
    for entry in (paths.user_path() if value is None else value).split(os.pathsep):
        if not entry.startswith(("/", "~")) and os.path.normpath(entry or ".") not in out:
            out.append(os.path.normpath(entry or "."))
    return tuple(e for e in out if not e.startswith(".."))


def _searched() -> tuple[tuple[str, str], ...]:
    """(relative entry, kind) of the user's PATH ("bin") and PYTHONPATH ("py": rt12 a28)."""
    py = os.environ.get("PYTHONPATH")
    return (*((e, "bin") for e in relative()), *((e, "py") for e in (relative(py) if py else ())))


def spot_names() -> frozenset[str]:
    """Entry names that make a directory hold one of the relative search-path directories: their first
    components; with `.` on PATH, every program name found on the user's other PATH directories (a planted
    `ls` anywhere); with `.` on PYTHONPATH, every module name the user's Pythons import (a `json.py` anywhere)."""
    searched = _searched()
    names = {e.split("/", 1)[0] for e, _ in searched if e != "."}
    if (".", "bin") in searched:
        for d in _user_dirs():
            try:
                names.update(os.listdir(d))
            except OSError:
                continue
    if (".", "py") in searched:
        from hermes_agent.terminal.sandbox import guardpy

        names.update(n + ext for n in guardpy.shadowed() for ext in ("", ".py"))
    return frozenset(names)


def named_in(d: str, present: set[str], roots: tuple[str, ...],
             read: pathadds.Read | None = None) -> set[tuple[str, str]]:
    """The directories under `d` (listed: `present`) that a relative search-path entry names when the user
    stands in `d`, where the sandbox writes, and their kind ("bin", "py"); not a venv's bin/ (its own rule).
    With `read` (the bytes the guard holds of an entry of `d`), also those the project's tools put first on PATH
    (pathadds.py: node_modules/.bin, an `.envrc`'s PATH_add...) where the sandbox writes (rt13 a56/a57)."""
    out: set[tuple[str, str]] = set()
    for p in pathadds.added(d, present, read) if read is not None and roots else ():
        if any(under(p, r) for r in roots) and not os.path.isfile(os.path.join(os.path.dirname(p), "pyvenv.cfg")):
            out.add((p, "bin"))
    for e, kind in _searched():
        sub = os.path.normpath(os.path.join(d, e))
        if (e == "." or e.split("/", 1)[0] in present) and (not roots or any(under(sub, r) for r in roots)) \
                and not (kind == "bin" and os.path.isfile(os.path.join(os.path.dirname(sub), "pyvenv.cfg"))):
            out.add((sub, kind))
    return out


def expanded(pathdirs: Iterable[tuple[str, str]], stamps: dict, sig: Callable[[str], object]) -> list[str]:
    """The "bin" directories of `pathdirs`, a pattern's (pathadds.expand) as its matches now but a venv's bin/;
    the directory a pattern lists is stamped in `stamps` (with `sig`): a new match there means a full look."""
    out: list[str] = []
    for d, kind in pathdirs:
        if kind != "bin":
            continue
        top, found = pathadds.expand(d)
        if top:
            stamps[top] = sig(top)
            found = [f for f in found if not os.path.isfile(os.path.join(os.path.dirname(f), "pyvenv.cfg"))]
        out += found
    return out


def pythonpath_dirs(roots: Iterable[str] = ()) -> list[str]:
    """The directories of $PYTHONPATH, resolved; a relative entry (`PYTHONPATH=src`, or an empty one: the
    current directory) counts against the directory hermes started in and each root the sandbox writes (the
    workspaces: the user runs python there)."""
    out: list[str] = []
    try:
        bases = [os.getcwd()]
    except OSError:
        bases = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if os.environ.get("PYTHONPATH") else ():
        if os.path.isabs(entry):
            out.append(os.path.realpath(entry))
            continue
        for base in (*bases, *roots):
            d = os.path.realpath(os.path.join(base, entry or "."))
            if d not in out and os.path.isdir(d):
                out.append(d)
    return out


def dirs(roots: tuple[str, ...]) -> list[str]:
    """The user's PATH directories under a root the sandbox writes (none when it writes everywhere: no
    sandbox, nothing to watch), but a venv's bin/; also those that do not exist yet (`mkdir scripts` then
    `scripts/ls`: the guard stamps the missing name and looks again when it appears)."""
    if not roots:
        return []
    return [d for d in _user_dirs() if any(under(d, r) for r in roots)
            and not os.path.isfile(os.path.join(os.path.dirname(d), "pyvenv.cfg"))]


def programs() -> frozenset[str]:
    """Every entry name of the user's PATH directories: the only names a PATH directory's entry can shadow
    (`shadowed`), so the only entries of one the guard need watch one by one (a new name changes the
    directory, which is stamped: a full look). A project's node_modules/.bin of 500 links costs a few lstats."""
    names: set[str] = set()
    for d in _user_dirs():
        try:
            names.update(os.listdir(d))
        except OSError:
            continue
    return frozenset(names)


def shadowed(d: str, name: str, roots: tuple[str, ...] = ()) -> str:
    """The program `name` found in another directory of the user's PATH ("" when none); one the sandbox
    cannot write first (the program the user means)."""
    if not name or "/" in name or name in (".", ".."):
        return ""
    others = _user_dirs()
    for other in sorted(others, key=lambda o: any(under(o, r) for r in roots)):
        if other == d:
            continue
        path = os.path.join(other, name)
        try:
            s = os.stat(path)
        except OSError:
            continue
        if st.S_ISREG(s.st_mode) and s.st_mode & 0o111:
            return path
    return ""


def risky(d: str, name: str, kind: int | None, roots: tuple[str, ...] = (), named: Iterable[str] = ()) -> str:
    """Why the new or changed entry `name` of PATH directory `d` may not stay ("" when it may); `named`: the
    directories relative entries name in the workspace (`named_in`). A node_modules/.bin entry is judged like any
    other: its package.json and lock file are as writable by confined work as the link (rt14b c06), so no
    "installed by npm" shape is proof; one that shadows nothing stays."""
    if kind is None or kind == st.S_IFDIR:
        return ""  # removed, or a directory (nothing the shell runs)
    if os.path.join(d, name) in {*dirs(roots), *named}:
        return ("it stands where a directory on the user's PATH is: the user's shell would look for programs "
                "where it leads")
    other = shadowed(d, name, roots)
    if not other:
        return ""
    again = (" (if a package install made it, run that install again outside hermes)"
             if os.path.basename(d) == ".bin" else "")
    return (f"it lies in {d}, on the user's PATH, under the name of {other}: the user's next `{name}` would run it "
            f"outside the sandbox{again}")


_NAMING = frozenset({"package.json", "composer.json", "pyproject.toml", ".envrc", ".mise.toml", "mise.toml",
                     ".mise.local.toml", "mise.local.toml", ".rtx.toml", "GNUmakefile", "makefile", "Makefile"})


def on_path(d: str) -> bool:
    """Is directory `d` (absolute, resolved) one the user's shell searches for programs: on the user's PATH, named
    there by a relative entry from a directory above it, or put first by a tool of a project above it
    (pathadds.py)? For hermes's own writes (runlater.path_verdict), which the guard's scan does not see."""
    from hermes_agent.nofollow import read_regular

    if d in _user_dirs():
        return True
    up = d
    for _ in range(8):
        if any(os.path.normpath(os.path.join(up, e)) == d for e, kind in _searched() if kind == "bin"):
            return True
        try:
            names = {n for n in os.listdir(up) if n in _NAMING or n.endswith(".mk")}
        except OSError:
            names = set()

        def read(name: str, up: str = up) -> bytes | None:
            try:
                return read_regular(os.path.join(up, name), 1 << 20)
            except (OSError, ValueError):
                return None
        if names and d in expanded(((p, "bin") for p in pathadds.added(up, names, read)), {}, lambda _p: None):
            return True
        if up == os.path.dirname(up):
            return False
        up = os.path.dirname(up)
    return False
