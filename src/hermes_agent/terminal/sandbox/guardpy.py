"""Python's start-up code in a workspace venv, for the run-later guard (guard.py): what every start of the
venv's python runs (the user's `.venv/bin/python`, an IDE's language server on folder open) without being
asked. site.py executes each `.pth` line that starts with `import`, then imports `sitecustomize` (and
`usercustomize` outside venvs) from anywhere on sys.path, which the `.pth` path lines extend.

Verdicts (a new or changed entry that is not allowed is put back, a new one quarantined):
- a `.pth`: path lines and comments are fine; an executable line only in the two shapes installers write:
  setuptools' editable finder (`import __editable___X_finder; __editable___X_finder.install()`, with
  `__editable___X_finder.py` beside it passing `finder_ok` and no other entry of that module name) and
  setuptools' `distutils-precedence.pth` line, byte for byte (its `_distutils_hack` package is watched: a
  new or changed module stays only when it is byte for byte one shipped with a setuptools the sandbox
  cannot write — the system's, the wheel ensurepip bundles, hermes's own; else it is put back and so is
  the line).
- `sitecustomize` / `usercustomize` in any form (`.py`, package, extension, `.pyc`) in site-packages or in a
  writable directory a `.pth` puts on sys.path: never.
- a compiled copy in `__pycache__` of a watched module: judged like any compiled copy (guardpyc.risky).
Stdlib only."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

DISTUTILS = ("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; "
             "enabled and __import__('_distutils_hack').add_shim(); ")
CUSTOMIZE = ("sitecustomize", "usercustomize")
HACK = "_distutils_hack"
_FINDER_RE = None


_NOT_SHADOWED = {"test", "tests", "testing", "docs", "doc", "examples", "scripts", "benchmarks", "idlelib",
                 "turtledemo", "tkinter", "turtle", "this", "antigravity", "lib2to3", "pydoc_data", "ensurepip"}


def shadowed(venvs: Iterable[str] = ()) -> frozenset[str]:
    """Top-level module names whose file in a PYTHONPATH directory python, pytest or hermes would import
    instead of the real one at its next start, outside the sandbox (`yaml.py` next to the user's
    `PYTHONPATH=src`): what the USER's interpreters import (pyshadow.importable: the standard library, the
    Pythons on the user's PATH and their tools' venvs, the user site, the workspace `venvs`, widely used
    distributions), hermes_agent and hermes's own site-packages. Names no start-up or hermes imports
    (`test`, `tests`, `docs`...) are left out, a project may well make them."""
    import os
    import sys

    from hermes_agent.terminal.sandbox import pyshadow

    own = tuple(e for e in sys.path if os.path.basename(e) in ("site-packages", "dist-packages"))
    return (pyshadow.importable(venvs, own) | {"hermes_agent"}) - _NOT_SHADOWED


def _finder_line(line: str) -> str | None:
    """The module an editable-install line imports, when the line has setuptools' exact shape."""
    global _FINDER_RE
    if _FINDER_RE is None:
        _FINDER_RE = re.compile(r"import (__editable___[A-Za-z0-9_]+_finder); \1\.install\(\)")
    m = _FINDER_RE.fullmatch(line.rstrip("\r\n"))
    return m.group(1) if m else None


def pth_lines(data: bytes) -> tuple[list[str], list[str]]:
    """(executable lines, path lines) as site.py sees them (split at least where it splits)."""
    code: list[str] = []
    paths: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        (code if line.startswith(("import ", "import\t")) else paths).append(line)
    return code, [p.rstrip() for p in paths]


def finders(data: bytes) -> list[str]:
    """Module names the editable-install lines of a `.pth` import."""
    return [m for line in pth_lines(data)[0] if (m := _finder_line(line))]


def pth_risky(data: bytes | None, finder_source: dict[str, bytes | None], others: dict[str, bool]) -> str:
    """Why a `.pth` must not stay ("" when it may). `finder_source`: module name -> the bytes of its `.py`
    beside the `.pth`; `others`: module name -> another entry of that name exists (package, `.so`, `.pyc`)."""
    if data is None:
        return ""
    bad = []
    for line in pth_lines(data)[0]:
        if line.rstrip("\r\n") == DISTUTILS.rstrip() or line.rstrip("\r\n") == DISTUTILS:
            continue
        mod = _finder_line(line)
        if mod and not others.get(mod) and finder_ok(finder_source.get(mod)):
            continue
        bad.append(line.strip()[:60])
    if not bad:
        return ""
    return f"python runs its line {bad[0]!r} at every start of the venv's interpreter (an IDE starts it on open)"


# setuptools' editable finder: what its template imports and calls (any version since 64)
_FINDER_IMPORTS = {"__future__", "sys", "importlib", "importlib.machinery", "importlib.util", "importlib.abc",
                   "itertools", "pathlib", "typing", "collections.abc", "types"}
_FINDER_CALLS = {"find_spec", "_find_spec", "_paths", "Path", "with_suffix", "module_suffixes", "all_suffixes",
                 "chain", "exists", "spec_from_file_location", "ModuleSpec", "append", "any", "rpartition",
                 "isinstance", "str", "list", "tuple", "len", "startswith", "_path_hook", "is_dir", "is_file",
                 "NamespaceSpec", "partition", "split", "get", "insert", "frozenset", "set", "dict"}
_FINDER_TOP = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.ClassDef, ast.FunctionDef)


def finder_ok(source: bytes | None) -> bool:
    """Is this module shaped like setuptools' editable finder: top level only imports of the standard
    modules it uses, literal assignments (MAPPING, NAMESPACES, PATH_PLACEHOLDER), classes and functions;
    every call anywhere one of the few the template makes; no dunder attribute, no exec, open, __import__."""
    if source is None or len(source) > 64 << 10:
        return False
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        if not isinstance(stmt, _FINDER_TOP):
            return False
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not _literal(stmt.value):
            return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name not in _FINDER_IMPORTS for a in node.names):
            return False
        if isinstance(node, ast.ImportFrom) and (node.level or node.module not in _FINDER_IMPORTS):
            return False
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            return False
        if isinstance(node, ast.Name) and node.id.startswith("__") and node.id != "__name__":
            return False
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Lambda, ast.Await, ast.AsyncFunctionDef)):
            return False
        if isinstance(node, ast.Call) and _callee(node.func) not in _FINDER_CALLS:
            return False
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and any(
                _callee(d) not in ("classmethod", "staticmethod") for d in node.decorator_list):
            return False
    return True


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left) and _literal(node.right)
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


_HACK_SOURCES = ("/usr/lib/python3/dist-packages", "/usr/share/python-wheels/setuptools-*.whl",
                 "/usr/lib/python3*/ensurepip/_bundled/setuptools-*.whl",
                 "/usr/local/lib/python3*/ensurepip/_bundled/setuptools-*.whl")
_HACK_KNOWN: dict[tuple[str, ...], set[bytes]] = {}


def hack_trusted(data: bytes | None, outside: Callable[[str], bool], key: tuple[str, ...]) -> bool:
    """Is `data` byte for byte a `_distutils_hack` module shipped with a setuptools the sandbox cannot write:
    the system's, the one ensurepip bundles (what `python -m venv` installs), hermes's own? `outside(path)`:
    the sandbox cannot write `path`; `key`: what the answer depends on (cached per process)."""
    if data is None:
        return False
    known = _HACK_KNOWN.get(key)
    if known is None:
        known = _HACK_KNOWN[key] = _hack_copies(outside)
    return data in known


def _hack_copies(outside: Callable[[str], bool]) -> set[bytes]:
    import glob
    import os
    import sysconfig
    import zipfile

    found: set[bytes] = set()
    places = [*_HACK_SOURCES, sysconfig.get_paths()["purelib"],
              os.path.join(os.path.dirname(os.__file__), "ensurepip", "_bundled", "setuptools-*.whl")]
    for pattern in places:
        for path in glob.glob(pattern):
            if not outside(path):
                continue
            try:
                if path.endswith(".whl"):
                    with zipfile.ZipFile(path) as whl:
                        found.update(whl.read(n) for n in whl.namelist()
                                     if n.startswith(HACK + "/") and n.endswith(".py"))
                    continue
                for name in glob.glob(os.path.join(path, HACK, "*.py")):
                    with open(name, "rb") as f:
                        found.add(f.read(1 << 20))
            except (OSError, zipfile.BadZipFile, KeyError):
                continue
    return found
