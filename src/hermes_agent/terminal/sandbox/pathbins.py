"""The user's PATH directories that lie where the sandbox writes (issue 19, red-team round 11 a04): direnv's
`PATH_add bin`, npm's `node_modules/.bin`, a project's `./tools`. A program dropped there under the name of one
found elsewhere on the user's PATH (`ls`, `git`, `python`, `sudo`) runs instead of it in the user's own,
unconfined shell. The run-later guard (guardscan.discover) watches every entry of these directories as class
"pathbin", and each directory entry itself; `risky` says why a new or changed entry must be put back. Other new entries stay (npm install's
`.bin/jest` link, a project script). A venv's bin/ keeps its own, stricter rule (runlater.bin_risky).

The PATH is the one the user started hermes with (`paths.user_path`: hermes trims its own); a relative entry
counts against the directory hermes started in. Stdlib only."""

from __future__ import annotations

import os
import stat as st

from hermes_agent.paths import is_under as under


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


def dirs(roots: tuple[str, ...]) -> list[str]:
    """The user's PATH directories under a root the sandbox writes (none when it writes everywhere: no
    sandbox, nothing to watch), but a venv's bin/; also those that do not exist yet (`mkdir scripts` then
    `scripts/ls`: the guard stamps the missing name and looks again when it appears)."""
    if not roots:
        return []
    return [d for d in _user_dirs() if any(under(d, r) for r in roots)
            and not os.path.isfile(os.path.join(os.path.dirname(d), "pyvenv.cfg"))]


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


def risky(d: str, name: str, kind: int | None, roots: tuple[str, ...] = ()) -> str:
    """Why the new or changed entry `name` of PATH directory `d` may not stay ("" when it may)."""
    if kind is None or kind == st.S_IFDIR:
        return ""  # removed, or a directory (nothing the shell runs)
    if os.path.join(d, name) in dirs(roots):
        return ("it stands where a directory on the user's PATH is: the user's shell would look for programs "
                "where it leads")
    other = shadowed(d, name, roots)
    if not other:
        return ""
    return (f"it lies in {d}, on the user's PATH, under the name of {other}: the user's next `{name}` would run it "
            "outside the sandbox")
