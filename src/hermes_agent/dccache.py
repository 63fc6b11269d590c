"""The code of the methods `dataclasses` generates, compiled once and reused by later runs (issue 24: start-up).

On Python 3.11 each dataclass compiles its generated methods (__init__, __repr__, __eq__, __setattr__,
...) from source text when the class is created: ~285 small compiles, about a fifth of the CPU `hermes chat -q`
spends before its first model request. `install()` wraps `dataclasses._create_fn` so that a text compiled by an
earlier run is not compiled again: the code objects are kept by their exact source text in one marshal file in
this package's __pycache__, beside the .pyc files Python already trusts and writes there (never in HERMES_HOME or
a workspace); a run that compiled something new writes the file back at exit (not when bytecode writing is off).
Any doubt — another Python, a missing, unreadable or corrupt file, a `_create_fn` of another shape — leaves
dataclasses exactly as they are. The text, the file name "<string>" and the flags are those dataclasses itself
uses, so a class gets the same methods either way."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types

_SIGNATURE = ("name", "args", "body", "globals", "locals", "return_type")
_MAX_ENTRIES = 4000  # beyond this, only what the writing run used is kept
_state: dict[str, object] = {}


def default_file() -> Path:
    return Path(__file__).with_name("__pycache__") / f"dataclass-code.{sys.implementation.cache_tag}.bin"


def install(file: Path | None = None) -> bool:
    """Reuse cached compiled methods for every dataclass created from now on in this process; False when this
    Python's dataclasses are not the kind this knows (nothing changed then). Idempotent."""
    if "file" in _state:
        return True
    dataclasses = _import_dataclasses()
    create = getattr(dataclasses, "_create_fn", None)
    code = getattr(create, "__code__", None)
    if code is None or code.co_varnames[:6] != _SIGNATURE or sys.version_info[:2] != (3, 11):
        return False
    path = file or default_file()
    codes = _load(path)
    used: dict[str, object] = {}
    _state.update(file=path, codes=codes, used=used, new=0)
    missing = dataclasses.MISSING

    def _create_fn(name, args, body, *, globals=None, locals=None, return_type=missing):  # noqa: A002 - as dataclasses names them
        # the text is built exactly as dataclasses._create_fn builds it (Python 3.11)
        if locals is None:
            locals = {}
        annotation = ""
        if return_type is not missing:
            locals["_return_type"] = return_type
            annotation = "->_return_type"
        body_text = "\n".join(f"  {b}" for b in body)
        txt = f" def {name}({','.join(args)}){annotation}:\n{body_text}"
        txt = f"def __create_fn__({', '.join(locals.keys())}):\n{txt}\n return {name}"
        compiled = codes.get(txt)
        if compiled is None:
            compiled = codes[txt] = compile(txt, "<string>", "exec", dont_inherit=True)
            _state["new"] = int(_state["new"]) + 1  # type: ignore[call-overload]
        used[txt] = compiled
        ns: dict[str, object] = {}
        exec(compiled, globals, ns)  # noqa: S102 - the code dataclasses itself would exec for this text
        return ns["__create_fn__"](**locals)  # type: ignore[operator]

    dataclasses._create_fn = _create_fn  # type: ignore[attr-defined]
    import atexit

    atexit.register(save)
    return True


def _import_dataclasses() -> types.ModuleType:
    """`import dataclasses`, without `inspect` (with ast, dis, tokenize: ~36 M instructions, a tenth of `chat -q`'s
    start-up) when this is the Python 3.11 dataclasses, whose only use of it is `inspect.signature` for the
    docstring of a class written without one: its module attribute is a stand-in that imports the real `inspect`
    on its first use. `sys.modules` keeps no stand-in: anything else importing `inspect` gets the real one."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules or sys.version_info[:2] != (3, 11):
        import dataclasses

        return dataclasses
    import types

    class _Inspect(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            import importlib

            real = importlib.import_module("inspect")
            dataclasses.inspect = real  # type: ignore[attr-defined]
            return getattr(real, name)

    stand_in = _Inspect("inspect")
    sys.modules["inspect"] = stand_in
    try:
        import dataclasses
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
    return dataclasses


def _load(path: Path) -> dict[str, object]:
    import marshal

    try:
        version, codes = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if version != sys.version or not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if isinstance(k, str) and type(v).__name__ == "code"}


def save() -> bool:
    """Write the cache back when this run compiled something new (atomically; silently not when it cannot)."""
    if not _state.get("new") or sys.dont_write_bytecode:
        return False
    import marshal

    path: Path = _state["file"]  # type: ignore[assignment]
    codes: dict[str, object] = _state["codes"]  # type: ignore[assignment]
    keep = codes if len(codes) <= _MAX_ENTRIES else _state["used"]
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        tmp.write_bytes(marshal.dumps((sys.version, dict(keep))))  # type: ignore[arg-type]
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    _state["new"] = 0
    return True
