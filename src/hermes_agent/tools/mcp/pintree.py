"""The files an interpreter loads next to a pinned script (red-team round 12 a04): `python3 tools/server.py`
puts tools/ first on sys.path and `node tools/server.js` resolves `require('./x')` there, so a pin of the one
script vouches for nothing when a confined command can plant `tools/json.py`, a `__pycache__/*.pyc` with a
matching header, or `tools/node_modules/x/index.js`. The pin of an unconfined server's script therefore covers
its directory: the loadable files of that tree (code suffixes below, dot-entries, `__pycache__` and symlinks
left out), hashed as one manifest. When the pin matches, the server runs from a copy of exactly those bytes in
`$HERMES_HOME/mcp-pinned/<digest>/`, where no sandbox writes: what it imports during the session, and anything
planted next to the original meanwhile, is never loaded; a file left out of the copy is simply not there (the
server fails to import it, nothing runs unpinned).

Walked by file descriptors with O_NOFOLLOW (a directory swapped for a link fails the walk closed); every file
is read once and the bytes hashed are the bytes copied."""

from __future__ import annotations

import hashlib
import os
import stat

LOADABLE = (".py", ".pyc", ".pyw", ".so", ".js", ".mjs", ".cjs", ".json", ".node", ".wasm", ".ts", ".mts", ".cts",
            ".sh", ".bash", ".rb", ".pl", ".pm", ".php", ".lua")
MAX_FILES = 2000
MAX_BYTES = 64 * 1024 * 1024
_SKIP_DIRS = ("__pycache__",)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class TreeError(Exception):
    """The tree cannot be pinned (too big, unreadable, changed during the walk): one line for the user."""


Tree = dict[str, tuple[bytes, bool]]  # relative path -> (content, executable)


def read_tree(root: str) -> Tree:
    """The loadable files under directory `root` (its real path), no symlink followed. Raises TreeError."""
    from hermes_agent.nofollow import open_dir

    try:
        fd = open_dir(os.path.realpath(root), create=False)
        top = os.open(".", _DIR, dir_fd=fd)
        os.close(fd)
    except OSError as exc:
        raise TreeError(f"{root} cannot be read ({exc.strerror or exc})") from exc
    tree: Tree = {}
    try:
        _walk(top, "", tree, [0])
    except OSError as exc:
        raise TreeError(f"{root} cannot be read ({exc.strerror or exc})") from exc
    return tree


def _walk(fd: int, prefix: str, tree: Tree, total: list[int]) -> None:
    try:
        with os.scandir(fd) as it:
            entries = sorted((e.name, e.is_dir(follow_symlinks=False), e.is_file(follow_symlinks=False))
                             for e in it)
        for name, is_dir, is_file in entries:
            if name.startswith(".") or name in _SKIP_DIRS:
                continue
            if is_dir:
                sub = os.open(name, _DIR, dir_fd=fd)
                _walk(sub, f"{prefix}{name}/", tree, total)
            elif is_file and name.endswith(LOADABLE):
                tree[prefix + name] = _read(fd, name, total)
                if len(tree) > MAX_FILES:
                    raise TreeError(f"it holds more than {MAX_FILES} loadable files")
    finally:
        os.close(fd)


def _read(dir_fd: int, name: str, total: list[int]) -> tuple[bytes, bool]:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TreeError(f"{name} is not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            total[0] += len(chunk)
            if total[0] > MAX_BYTES:
                raise TreeError(f"its loadable files exceed {MAX_BYTES >> 20} MB")
        return b"".join(chunks), bool(st.st_mode & 0o111)
    finally:
        os.close(fd)


def digest(tree: Tree) -> str:
    """sha256:HEX of the manifest: every relative path, whether it is executable, and its content's sha256."""
    h = hashlib.sha256()
    for rel in sorted(tree):
        data, exe = tree[rel]
        h.update(f"{rel}\0{'x' if exe else '-'}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return "sha256:" + h.hexdigest()


def store_root() -> str:
    from hermes_agent import paths

    return str(paths.hermes_home() / "mcp-pinned")


def materialize(tree: Tree, pin: str) -> str:
    """The directory holding a copy of `tree` (pinned as `pin`), made once per digest in the store (a folder no
    sandbox writes; checked). Raises TreeError."""
    import shutil
    import tempfile

    from hermes_agent import paths

    store = store_root()
    final = os.path.join(store, pin.removeprefix("sha256:"))
    try:
        os.makedirs(store, mode=0o700, exist_ok=True)
        if not paths.trusted_program(store):
            raise TreeError(f"{store} lies where sandboxed commands can write")
        if os.path.isdir(final) and not os.path.islink(final):
            return final
        work = tempfile.mkdtemp(prefix=".new-", dir=store)
        for rel, (data, exe) in tree.items():
            path = os.path.join(work, rel)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "xb") as f:
                f.write(data)
            os.chmod(path, 0o700 if exe else 0o600)
        try:
            os.rename(work, final)
        except OSError:  # another session made it meanwhile
            shutil.rmtree(work, ignore_errors=True)
    except OSError as exc:
        raise TreeError(f"its pinned copy cannot be made in {store} ({exc.strerror or exc})") from exc
    return final
