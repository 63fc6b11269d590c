"""Compiled copies of Python modules (`.pyc`) that confined work wrote, at any depth of the workspaces and in
their venvs' site-packages (rt13 a48): python runs a cached copy instead of the source beside it when the
copy's header matches the source, so a forged `__pycache__/util.cpython-311.pyc` carrying the source's mtime
and size hides a payload behind a clean `util.py` (`git status` shows nothing: caches are ignored).

The deep watch (deepwatch.py) hands over every `.pyc` created, written, moved in or found in a directory that
appeared since the last check; each is judged here, and removed when it may not stay. Removing one is always
safe: python compiles the source again. A copy stays when python would not use it (stale: the header does not
match the source; no source beside a `__pycache__` copy; too short to load) or when it is exactly what the
source compiles to (same magic number as this Python, equal code at the optimisation level its name says).
pytest's copy (`name.cpython-311-pytest-9.2.0.pyc`, loaded by the user's next pytest) is compared with what
that pytest's assertion rewriting makes of the source. It goes when:
- it is not what its source compiles to, while python would use it (loud: one line each);
- it is an unchecked hash-based copy (python never compares it with the source);
- it lies outside `__pycache__` with no source beside it (python imports it as the module itself);
- it is not a plain file (python follows a link), or the command made a hard link to it (a write through that
  name would change it unseen);
- it cannot be compared here: written for another Python, pytest's assertion-rewritten copy when the pytest
  hermes loads (lazily, if any) is not the one that wrote it, a source that is not a plain readable file or past
  the bytes compared per check (quiet: one line for all; the tools rebuild them). Stdlib only (pytest if there)."""

from __future__ import annotations

import errno
import os
import stat as st
import struct
from collections.abc import Callable, Iterable

BUDGET = 16 << 20  # bytes of source compiled per check to compare; past it copies are removed uncompared
LOUD_LINES = 10
LINKED = "the command gave it a second name (a hard link) to write it through unseen"
_MAX = 64 << 20
Stash = Callable[[str, bytes | None], str]


def risky(name: str, pyc: bytes | None, source: bytes | None, source_sig: tuple | None,
          cached: bool = True) -> tuple[str, bool]:
    """(why `name` must not stay, "" when it may; loud: a forgery, not a copy merely unchecked). `pyc`: its
    bytes, None when it is not a plain file; `source`: the `.py` it caches (None: absent, b"?" + sig None: not
    a plain readable file); `source_sig`: the `.py`'s (mode, inode, size, mtime_ns, ctime_ns); `cached`: it
    lies in `__pycache__`."""
    import importlib.util

    if pyc is None:
        return "it is not a plain file, and python follows a link to what it names", True
    if not cached:
        if source is not None:
            return "", False  # the source beside it is imported instead
        return "python imports it as the module itself when no source lies beside it", True
    if len(pyc) < 16:
        return "", False  # python cannot load it and compiles the source again
    magic, flags = pyc[:4], struct.unpack("<I", pyc[4:8])[0]
    if flags & 0b11 == 0b01:
        return "an unchecked hash-based copy: python runs it without ever comparing it with the source", True
    if source is None:
        return "", False  # python uses a __pycache__ copy only beside its source
    if source_sig is None:
        return "its source is not a plain readable file, so it cannot be compared", False
    if flags == 0:
        used = pyc[8:16] == struct.pack("<II", (source_sig[3] // 1_000_000_000) & 0xFFFFFFFF,
                                        source_sig[2] & 0xFFFFFFFF)
    else:
        used = pyc[8:16] == importlib.util.source_hash(source)
    if not used:
        return "", False  # stale: python compiles the source again
    tag = name.split(".", 1)[1][: -len(".pyc")] if "." in name else ""
    if magic != importlib.util.MAGIC_NUMBER:
        return "written for another Python: it cannot be compared here", False
    opt = 2 if tag.endswith(".opt-2") else 1 if tag.endswith(".opt-1") else 0
    try:
        import marshal

        code = _pytest_code(tag, source) if "-pytest-" in tag else \
            compile(source, "<pyc>", "exec", dont_inherit=True, optimize=opt)
        if code is None:
            return "pytest's assertion-rewritten copy, of a pytest hermes cannot load: it cannot be compared", False
        same = marshal.loads(pyc[16:]) == code
    except Exception:  # noqa: BLE001 - hostile bytes: whatever fails to load or compare stays out
        same = False
    return ("", False) if same else ("it is not what its source compiles to, and python would run it instead "
                                     "of the source", True)


def _pytest_code(tag: str, source: bytes):  # noqa: ANN202 - a code object or None
    """What pytest's assertion rewriting makes of `source`, when the pytest hermes can load wrote `tag`."""
    try:
        import ast

        from _pytest.assertion import rewrite
    except Exception:  # noqa: BLE001 - no pytest here, or a broken one
        return None
    if getattr(rewrite, "PYTEST_TAG", None) != tag:
        return None
    tree = ast.parse(source)
    rewrite.rewrite_asserts(tree, source, None, None)
    return compile(tree, "<pyc>", "exec", dont_inherit=True)


def sweep(paths: Iterable[str], stash: Stash, shown: Callable[[str], str], linked: Iterable[str] = ()) -> list[str]:
    """Judge and remove each `.pyc` of `paths` (see the module doc), and each of `linked` (it got a second name
    the sandbox can write it through); the lines for the model and the user."""
    loud: list[str] = []
    quiet: list[str] = []
    budget = [BUDGET]
    linked = set(linked)
    for path in sorted(set(paths) | linked):
        why, forged = (LINKED, True) if path in linked else _judge(path, budget)
        if not why:
            continue
        data = _remove(path)
        if data is False:
            loud.append(f"[warning: {shown(path)} could not be removed ({why}); delete it before running python]")
            continue
        if forged:
            saved = stash(path, data if isinstance(data, bytes) else None)
            where = f"; saved as {shown(saved)}" if saved else ""
            loud.append(f"[the sandbox removed {shown(path)} (a compiled python copy the command wrote: {why}; "
                        f"python compiles the source again){where}]")
        else:
            quiet.append(shown(path))
    lines = loud[:LOUD_LINES]
    if len(loud) > LOUD_LINES:
        lines.append(f"[... and {len(loud) - LOUD_LINES} more compiled python copies removed]")
    if quiet:
        more = f" and {len(quiet) - 3} more" if len(quiet) > 3 else ""
        lines.append(f"[the sandbox removed {len(quiet)} compiled python copies the command wrote that it cannot "
                     f"compare with their source ({', '.join(quiet[:3])}{more}): python and pytest rebuild them]")
    return lines


def _judge(path: str, budget: list[int]) -> tuple[str, bool]:
    d, name = os.path.split(path)
    cached = os.path.basename(d) == "__pycache__"
    try:
        pyc: bytes | None = _read(path)
    except FileNotFoundError:
        return "", False
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return "too large to compare", False
        pyc = None
    stem = name.split(".", 1)[0]
    src = os.path.join(os.path.dirname(d) if cached else d, stem + ".py")
    source: bytes | None
    sig: tuple | None = None
    try:
        s = os.lstat(src)
        source = b"?"
        if st.S_ISREG(s.st_mode) and s.st_size <= budget[0]:
            source = _read(src)
            budget[0] -= len(source)
            sig = (s.st_mode, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    except FileNotFoundError:
        source = None
    except OSError:
        source = b"?"
    return risky(name, pyc, source, sig, cached)


def _read(path: str) -> bytes:
    """A plain file's bytes, no link followed on the way; OSError for anything else (EFBIG past _MAX)."""
    from hermes_agent.nofollow import open_nofollow

    fd = open_nofollow(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not st.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a plain file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > _MAX:
                raise OSError(errno.EFBIG, "too large")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _remove(path: str) -> bytes | bool:
    """Unlink `path` in its directory opened without following links: its bytes (True when not read), False
    when it could not be removed."""
    from hermes_agent.nofollow import open_nofollow

    try:
        data: bytes | bool = _read(path)
    except OSError:
        data = True
    try:
        fd = open_nofollow(os.path.dirname(path), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        os.unlink(os.path.basename(path), dir_fd=fd)
    except FileNotFoundError:
        return data
    except OSError:
        return False
    finally:
        os.close(fd)
    return data
