"""Code in a workspace venv's site-packages that the user's tools load without being asked, beyond what
guardpy.py judges (rt14 b03, b09): for the run-later guard (guardscan.site, guardverdict._start).

- `pth_imports`: the modules an executable `.pth` line imports (`import _virtualenv`: uv and virtualenv
  venvs ship that line). Python runs them at every start of the venv's interpreter, so they are start-up
  code too: a new or changed one is put back in any session (as is the `.pth`'s line itself, guardpy.py).
- `entry_points_risky`: a `*.dist-info/entry_points.txt` is read by pytest (`pytest11`), flake8, hermes's own
  plugin group and every other entry-point host, which import the modules it names at their next start.
  A new or changed one stays only when an installer wrote it: the dist's RECORD lists it with its sha256,
  and every file of each module it names (from the top package down, any of `.py`, `.pyc`, extension) is
  listed with its sha256 in a RECORD of that site-packages. pip, uv, poetry and installer all write RECORD
  so; a hand-made dist-info (no RECORD, `zz_helper.py,,`) does not. Stdlib only."""

from __future__ import annotations

import ast
import base64
import hashlib
import os
import re

_LIMIT = 16 << 20  # a module larger than this is not hashed: it counts as unlisted
_EP_LINE = re.compile(r"^\s*[^=#;\[][^=]*=\s*([A-Za-z_][\w.]*)\s*(?::.*)?$")


def pth_imports(code_lines: list[str]) -> set[str]:
    """Top-level module names the executable `.pth` lines import (`import a, b.c; from d import e`,
    `__import__('f')`); a line python cannot parse imports nothing."""
    out: set[str] = set()
    for line in code_lines:
        try:
            tree = ast.parse(line.strip())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(a.name.split(".", 1)[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out.add(node.module.split(".", 1)[0])
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.add(node.args[0].value.split(".", 1)[0])
    return out


def entry_modules(data: bytes) -> set[str]:
    """The modules an entry_points.txt names (`name = pkg.mod:attr [extra]`), in any group."""
    out = set()
    for line in data.decode("utf-8", "replace").splitlines():
        m = _EP_LINE.match(line.split(" [", 1)[0].rstrip())
        if m and not line.lstrip().startswith("["):
            out.add(m.group(1))
    return out


def entry_points_risky(sp: str, dist: str, data: bytes) -> str:
    """Why a new or changed `<sp>/<dist>/entry_points.txt` holding `data` must not stay ("" when it may)."""
    why = ("{} — pytest, flake8 and other tools import what it names at their next start, and no installer's "
           "RECORD vouches for it")
    own = _record(os.path.join(sp, dist, "RECORD"))
    if own.get(f"{dist}/entry_points.txt") != _digest(data):
        return why.format("it is not listed with its hash in its dist's RECORD")
    mods = entry_modules(data)
    if not mods:
        return ""
    listed: dict[str, str] | None = None  # every RECORD of `sp`, read only for a module another dist ships
    for mod in sorted(mods):
        for rel in _module_files(sp, mod):
            if rel not in own and listed is None:
                listed = {}
                for name in sorted(os.listdir(sp)):
                    if name.endswith(".dist-info"):
                        listed.update(_record(os.path.join(sp, name, "RECORD")))
            if (own if rel in own else listed or {}).get(rel) != _digest(_read(os.path.join(sp, rel))):
                return why.format(f"the module {mod!r} it names ({rel}) is not listed with its hash in a RECORD")
    return ""


def _module_files(sp: str, mod: str) -> list[str]:
    """Files under `sp` python may load for `mod` and its parent packages (relative paths)."""
    out: list[str] = []
    parts = mod.split(".")
    for i in range(len(parts)):
        d = "/".join(parts[:i])
        last = parts[i]
        try:
            names = os.listdir(os.path.join(sp, d)) if d else os.listdir(sp)
        except OSError:
            return out
        for n in names:
            if n == last or (n.split(".", 1)[0] == last and n.endswith((".py", ".pyc", ".so", ".pyd"))):
                rel = f"{d}/{n}" if d else n
                if n != last:
                    out.append(rel)
                elif os.path.lexists(os.path.join(sp, rel, "__init__.py")):  # else a namespace package
                    out.append(f"{rel}/__init__.py")
    return out


def _record(path: str) -> dict[str, str]:
    """RECORD's `path -> sha256=...` entries (those with a hash)."""
    out = {}
    data = _read(path)
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            out[os.path.normpath(parts[0].strip('"'))] = parts[1]
    return out


def _read(path: str) -> bytes | None:
    from hermes_agent.nofollow import read_regular_or_none

    return read_regular_or_none(path, _LIMIT)


def _digest(data: bytes | None) -> str | None:
    if data is None:
        return None
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
