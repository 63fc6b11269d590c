"""The run-later guard's verdict on files judged by content (guardfix.py): a project tool config
(guardtools.py), any config by its shape judged by value (byvalue.py, class "value") and a venv's python
start-up code (guardpy.py). `judged` says why a new or changed entry
must be put back, "" when it may stay. Stdlib only."""

from __future__ import annotations

import os
import stat as st

from hermes_agent.terminal.sandbox import byvalue, depcode, guardpy, guardpyc, guardtools, pathbins, runlater
from hermes_agent.terminal.sandbox.guarditem import Item, Slot, same
from hermes_agent.terminal.sandbox.guardscan import Scan


def judged(slot: Slot, cls: str, old: Item | None, cur: Item | None, base: Scan, now: Scan,
           roots: tuple[str, ...], tainted: bool = False) -> str:
    if cur is None:
        return ""  # removed: nothing runs
    d, name = slot
    if cls == "byhand":
        return _byhand(slot, old, cur, base, now, roots, tainted) or _value(slot, old, cur, roots, tainted)
    if cls == "byhandinc":
        return _included(slot, old, cur, tainted)
    if cls == "cfgcode":
        from hermes_agent.terminal.sandbox import cfgcode

        return cfgcode.risky(old, cur, tainted)
    if cls == "cwdshadow":  # a standard module's name (random.py, json.py) is a beginner's own file, unless the
        # turn took in untrusted content; a third-party one's (yaml.py, rich/, hermes_agent/) never is (rt13 a44)
        import sys

        stdlib = name.split(".", 1)[0] in sys.stdlib_module_names
        if old is not None and old.kind == cur.kind:
            return ""  # the project's own module (there before the command) edited: not a new shadow
        if cur.kind == st.S_IFDIR and not os.path.lexists(os.path.join(d, name, "__init__.py")):
            return ""  # a folder without __init__.py (a clone named `copy`) imports after any real module
        return "" if stdlib and not tainted else "python run in the workspace imports it instead of the real module"
    if cls == "exec":  # a script the user runs by hand: an existing one changed in a tainted turn goes back
        from hermes_agent.terminal.sandbox import byhand

        before = old.data if old is not None and old.kind == st.S_IFREG else None
        return byhand.exec_risky(before, cur.data if cur.kind == st.S_IFREG else None) if tainted and old else ""
    if cls == "pathbin":
        return pathbins.risky(d, name, cur.kind, roots, {p for p, k in base.pathdirs | now.pathdirs if k == "bin"})
    if cls == "tool":
        rel = guardtools.shape(d, name)
        if rel is None:
            return ""
        if cur.kind != st.S_IFREG or cur.data is None:
            return "it is not a plain readable file, so it cannot be checked"

        def writable(path: str) -> bool:
            return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots) if roots else True
        folder = f"{d}/{name}"[: -len(rel) - 1] or "/"  # the directory `rel` hangs from (a .vscode's folder)
        return guardtools.risky(rel, old.data if old is not None else None, cur.data, writable, folder)
    if cls == "value":  # a file of a config shape (byvalue.py): judged by value, whatever its name
        if cur.kind in (st.S_IFDIR, st.S_IFLNK):
            return ""  # a `.venv` or `.worktrees` link, a `.cache` folder: no settings of their own (a link's
            # target is judged where it lies, by its own shape)
        if cur.kind != st.S_IFREG or cur.data is None:
            return "it is not a plain readable file, so it cannot be checked"
        return byvalue.risky(d, name, old.data if old is not None and old.kind == st.S_IFREG else None, cur.data,
                             _writable(roots), tainted)
    if cls == "pkg":
        keys = base.pkgkeys.get(slot, set()) | now.pkgkeys.get(slot, set())
        return runlater.pkg_risky(keys, old.data if old is not None else None,
                                  cur.data if cur.kind == st.S_IFREG else b"?")
    if cls == "pyc":
        src = os.path.join(os.path.dirname(d), name.split(".", 1)[0] + ".py")
        item = now.items.get(os.path.split(src))
        source = None if item is None else item.data if item.kind == st.S_IFREG and item.data is not None else b"?"
        return guardpyc.risky(name, cur.data if cur.kind == st.S_IFREG else None, source,
                              item.sig if item is not None and source != b"?" else None)[0]
    return _start(d, name, cur, base, now, roots)


def _value(slot: Slot, old: Item | None, cur: Item, roots: tuple[str, ...], tainted: bool) -> str:
    """A run-by-hand file of a config shape (compose.yaml) is judged by value as well: a host volume or a
    privileged flag goes back whoever asked (package.json's scripts are the pkg rule's)."""
    if slot[1] == "package.json" or cur.kind != st.S_IFREG or cur.data is None:
        return ""
    return byvalue.risky(slot[0], slot[1], old.data if old is not None and old.kind == st.S_IFREG else None,
                         cur.data, _writable(roots), tainted)


def _byhand(slot: Slot, old: Item | None, cur: Item, base: Scan, now: Scan, roots: tuple[str, ...],
            tainted: bool) -> str:
    """A file the user runs by hand (byhand.py): a package.json script a git hook reaches always counts (the
    "pkg" rule); any other change of a runnable part only in a tainted turn, and a new file there when a tool
    the project already uses loads it (byhandnew.py: a `makefile` beside the `Makefile`, a conftest.py...)."""
    from hermes_agent.terminal.sandbox import byhand, byhandnew

    data = cur.data if cur.kind == st.S_IFREG else b"?"
    if slot[1] == "package.json":
        why = runlater.pkg_risky(base.pkgkeys.get(slot, set()) | now.pkgkeys.get(slot, set()),
                                 old.data if old is not None else None, data)
        if why:
            return why
    if not tainted:
        return ""
    if cur.kind != st.S_IFREG or cur.data is None:
        return "it is not a plain readable file, so it cannot be checked"
    if old is not None:
        return byhand.risky(slot[1], old.data, data)
    top = max((r for r in roots if slot[0] == r or slot[0].startswith(r.rstrip("/") + "/")), key=len, default="")
    return byhandnew.risky(os.path.join(*slot), slot[1], data, lambda p: base.items.get(os.path.split(p)) is not None,
                           top)


def _included(slot: Slot, old: Item | None, cur: Item, tainted: bool) -> str:
    """A file a run-by-hand file pulls in (byhandinc.py), or a directory on the way to it: in a tainted turn,
    a change, a new file (an optional include made) or a link swapped in on the way is put back."""
    from hermes_agent.terminal.sandbox import byhand

    if not tainted or cur.kind == st.S_IFDIR:
        return ""
    if cur.kind != st.S_IFREG or cur.data is None:
        return (f"the turn took in untrusted content, and {byhand.INCLUDED} is now not a plain readable file "
                "(a link or special file make would follow)")
    return byhand.risky(slot[1], old.data if old is not None and old.kind == st.S_IFREG else None, cur.data,
                        included=True)


def _start(d: str, name: str, cur: Item, base: Scan, now: Scan, roots: tuple[str, ...]) -> str:
    why = "python runs it at every start of the venv's interpreter (an IDE starts it on open)"
    if os.path.basename(d) == "bin" and name.startswith("python"):
        return _interpreter(d, cur, roots)
    if os.path.basename(d) == "bin" and os.path.dirname(d) in now.venvs:
        return runlater.bin_risky(os.path.dirname(d), name, cur.data if cur.kind == st.S_IFREG else None,
                                  _writable(roots))
    if name in ("lib", "bin", "site-packages") or name.startswith("python") or os.path.join(d, name) in now.venvs:
        return "" if cur.kind == st.S_IFDIR else "python follows it to the venv's start-up code (a link or file)"
    if cur.kind != st.S_IFREG or cur.data is None:
        return why
    if name == "entry_points.txt" and d.endswith((".dist-info", ".egg-info")):  # judged by its installer's RECORD (rt14 b03)
        return depcode.entry_points_risky(os.path.dirname(d), os.path.basename(d), cur.data)
    stem = name.split(".", 1)[0]
    if name.endswith(".pth"):
        mods = guardpy.finders(cur.data)
        source = {m: _data(now, (d, m + ".py")) for m in mods}
        others = {m: any(n != m + ".py" and n.split(".", 1)[0] == m for (dd, n) in now.items
                         if dd == d and now.items[(dd, n)] is not None) for m in mods}
        why = guardpy.pth_risky(cur.data, source, others)
        if not why and guardpy.DISTUTILS.strip() in cur.data.decode("utf-8", "replace") \
                and not _hack_kept(d, base, now, roots):
            why = "it imports _distutils_hack, which changed in the same work"
        return why
    if stem in guardpy.CUSTOMIZE:
        return "python imports it at every start of the venv's interpreter"
    if os.path.basename(d) == guardpy.HACK:
        return "" if _hack_trusted(cur.data, roots) else why
    if stem.startswith("__editable___") and name == stem + ".py":
        return "" if guardpy.finder_ok(cur.data) else "it is not the finder setuptools writes, and a .pth imports it"
    return why


def _interpreter(d: str, cur: Item, roots: tuple[str, ...]) -> str:
    """A venv's bin/python*: a link to an interpreter the sandbox cannot write (or to another such link in
    bin/), as `python -m venv` makes it; not a file the sandbox wrote, nor a link into a writable root."""
    why = "an IDE starts it as the project's interpreter"
    if cur.kind != st.S_IFLNK or cur.data is None:
        return why
    target = os.path.normpath(os.path.join(d, os.fsdecode(cur.data)))
    if os.path.dirname(target) == d:
        return ""  # python -> python3 -> /usr/bin/python3.11: the next hop is judged as its own entry
    for path in (target, os.path.realpath(target)):
        if any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots) or not roots:
            return why
    return ""


def _writable(roots: tuple[str, ...]):  # noqa: ANN202
    return lambda path: not roots or any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _data(scan: Scan, slot: Slot) -> bytes | None:
    item = scan.items.get(slot)
    return item.data if item is not None and item.kind == st.S_IFREG else None


def _hack_kept(sp: str, base: Scan, now: Scan, roots: tuple[str, ...]) -> bool:
    """`_distutils_hack`'s sources as in the baseline, absent, or a trusted copy (guardpy.hack_trusted)."""
    hack = os.path.join(sp, guardpy.HACK)
    for slot, item in now.items.items():
        if slot[0] == hack and item is not None:  # compiled copies are judged on their own
            if (slot not in base.items or not same(base.items[slot], item)) and not _hack_trusted(item.data, roots):
                return False
    return True


def _hack_trusted(data: bytes | None, roots: tuple[str, ...]) -> bool:
    def outside(path: str) -> bool:
        real = os.path.realpath(path)
        return bool(roots) and not any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots for p in (path, real))
    return guardpy.hack_trusted(data, outside, roots)
