"""Shared file-tool plumbing over a TerminalBackend: path resolution, binary sniffing, text loading,
clear error messages and checkpoint hand-off. Never touches the host directly: only the backend."""

from __future__ import annotations

import difflib
import os
import posixpath
import shlex
import stat as stat_mod
from dataclasses import dataclass

from hermes_agent.terminal.base import TerminalBackend

SNIFF_BYTES = 8192
# Files above this are paged with sed through the backend instead of being loaded whole.
LOAD_MAX_BYTES = 20 * 1024 * 1024
PROJECT_MARKERS = (".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod", "setup.py", "Makefile")

# (magic, name, strong): a strong magic marks a file binary outright; a weak one only names it.
_MAGIC: tuple[tuple[bytes, str, bool], ...] = (
    (b"\x89PNG", "PNG image", True), (b"\xff\xd8\xff", "JPEG image", True), (b"GIF8", "GIF image", True),
    (b"%PDF", "PDF document", True), (b"PK\x03\x04", "ZIP archive (or docx/xlsx/jar)", True),
    (b"\x1f\x8b", "gzip archive", True), (b"\x7fELF", "ELF executable", True),
    (b"SQLite format 3", "SQLite database", True), (b"\xfd7zXZ", "xz archive", True),
    (b"7z\xbc\xaf", "7-Zip archive", True), (b"\x00asm", "WebAssembly module", True),
    (b"\xca\xfe\xba\xbe", "Java class / Mach-O", True), (b"\xcf\xfa\xed\xfe", "Mach-O executable", True),
    (b"BZh", "bzip2 archive", False), (b"RIFF", "RIFF media (wav/avi/webp)", False), (b"OggS", "Ogg media", False),
    (b"ID3", "MP3 audio", False), (b"MZ", "Windows executable", False), (b"\x00\x00\x01\x00", "ICO image", False),
)


class FileToolError(Exception):
    """A failure the model can act on; `extra` fields are merged into the error JSON."""

    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra


@dataclass(frozen=True, slots=True)
class TextFile:
    """A text file for editing: decoded losslessly (undecodable bytes survive via surrogateescape)."""

    path: str
    text: str
    data: bytes


def human_size(n: int) -> str:
    """1536 -> '1.5 KB'."""
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


def resolve(backend: TerminalBackend, path: str) -> str:
    """Absolute, normalised path; relative paths resolve against the backend's cwd."""
    path = (path or "").strip()
    if not path:
        raise FileToolError("path is required")
    if path.startswith("~"):
        if backend.kind == "local":
            path = posixpath.expanduser(path)
        else:
            home = backend.execute('printf %s "$HOME"', timeout=10).output.strip()
            path = (home or "/root") + path[1:]
    if not posixpath.isabs(path):
        path = posixpath.join(backend.cwd(), path)
    return posixpath.normpath(path)


def binary_kind(head: bytes) -> str | None:
    """A name for the binary type of a file that starts with `head`, or None for text."""
    named = next((name for magic, name, _ in _MAGIC if head.startswith(magic)), None)
    if any(head.startswith(magic) for magic, _, strong in _MAGIC if strong):
        return named
    if b"\x00" in head:
        return named or "binary data (contains NUL bytes)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte char cut at the sniff boundary is fine; so is legacy-encoded text (latin-1...).
        controls = sum(1 for b in head if b < 9 or 13 < b < 32)
        if exc.start < len(head) - 4 and controls > len(head) // 10:
            return named or "binary data (not valid UTF-8)"
    return None


def listing(backend: TerminalBackend, directory: str) -> list[str] | None:
    """Names in a directory (directories end in '/'), or None when it cannot be listed."""
    res = backend.execute(f"ls -1Ap -- {shlex.quote(directory)} 2>/dev/null", timeout=15)
    if res.exit_code != 0:
        return None
    return [line for line in res.output.splitlines() if line]


def missing_error(backend: TerminalBackend, path: str) -> FileToolError:
    """A not-found error naming the nearest existing directory and similar names in it."""
    parent = posixpath.dirname(path) or "/"
    pst = backend.stat(parent)
    if pst is None:
        ancestor = parent
        while ancestor not in ("/", "") and backend.stat(ancestor) is None:
            ancestor = posixpath.dirname(ancestor)
        return FileToolError(f"File not found: {path} (directory {parent} does not exist; "
                             f"nearest existing: {ancestor or '/'})")
    if not pst.get("is_dir"):
        return FileToolError(f"File not found: {path} ({parent} is a file, not a directory)")
    names = listing(backend, parent) or []
    close = difflib.get_close_matches(posixpath.basename(path), [n.rstrip("/") for n in names], n=5, cutoff=0.5)
    if close:
        return FileToolError(f"File not found: {path}", did_you_mean=[posixpath.join(parent, c) for c in close])
    return FileToolError(f"File not found: {path}", directory_has=len(names))


def os_error(exc: OSError, path: str, action: str) -> FileToolError:
    """Turn an OSError from the backend into a message the model can act on."""
    if isinstance(exc, PermissionError):
        why = f" ({exc.strerror})" if exc.strerror and exc.strerror != "Permission denied" else ""
        return FileToolError(f"Permission denied {action} {path}{why}")
    if isinstance(exc, IsADirectoryError):
        return FileToolError(f"{path} is a directory, not a file; list it with "
                             f"search_files(target='files', path='{path}')")
    if isinstance(exc, NotADirectoryError | FileExistsError):
        return FileToolError(f"Cannot {action.split()[0]} {path}: a parent component is a file, not a directory")
    if isinstance(exc, FileNotFoundError):
        return FileToolError(f"File not found: {path}")
    reason = exc.strerror or str(exc)
    return FileToolError(f"Failed {action} {path}: {reason}")


def stat_file(backend: TerminalBackend, path: str) -> dict:
    """stat() of an existing regular file, else a clear FileToolError."""
    try:
        st = backend.stat(path)
    except OSError as exc:
        raise os_error(exc, path, "reading") from exc
    if st is None:
        raise missing_error(backend, path)
    if st.get("is_dir"):
        raise FileToolError(f"{path} is a directory, not a file; list it with "
                            f"search_files(target='files', path='{path}')")
    special = _special(path) if backend.kind == "local" else None
    if special:
        raise FileToolError(f"{path} is {special}; the file tools do not read it (use the terminal if needed)")
    return st


def _special(path: str) -> str | None:
    """Why a local file must not be read (devices and FIFOs block; procfs/sysfs files block or never
    end), else None. Symlinks to regular files are fine here (the guarded open refuses them later)."""
    from hermes_agent.nofollow import pseudo_fs

    try:
        fd = os.open(path, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    except OSError:
        return None  # let the read itself report the problem
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file (device, FIFO or socket): reading it could block"
        fs = pseudo_fs(fd)
        return f"a kernel {fs} file (it may block, never end or drain kernel state)" if fs else None
    finally:
        os.close(fd)


def read_head(backend: TerminalBackend, path: str, size: int) -> bytes:
    """The first bytes of a file; refuses binary files with their type and size."""
    try:
        head = backend.read_bytes(path, limit=SNIFF_BYTES)
    except OSError as exc:
        raise os_error(exc, path, "reading") from exc
    kind = binary_kind(head)
    if kind:
        raise FileToolError(f"{path} is a binary file ({kind}, {human_size(size)}); not shown. "
                            "Inspect it with terminal tools (file, xxd, strings) if needed.")
    return head


def load_text(backend: TerminalBackend, path: str, max_bytes: int = LOAD_MAX_BYTES) -> TextFile:
    """A whole text file for editing; refuses binary files and files above `max_bytes`."""
    st = stat_file(backend, path)
    size = int(st.get("size") or 0)
    read_head(backend, path, size)
    if size > max_bytes:
        raise FileToolError(f"{path} is too large to edit here ({human_size(size)}); "
                            "use terminal tools (sed, awk) for files this big")
    try:
        data = backend.read_bytes(path, limit=max_bytes + 1)
    except OSError as exc:
        raise os_error(exc, path, "reading") from exc
    return TextFile(path, data.decode("utf-8", errors="surrogateescape"), data)


def write_text(backend: TerminalBackend, path: str, text: str) -> int:
    """Atomically write UTF-8 text; returns the byte count."""
    data = text.encode("utf-8", errors="surrogateescape")
    try:
        backend.write_bytes(path, data)
    except OSError as exc:
        raise os_error(exc, path, "writing") from exc
    return len(data)


def project_root(backend: TerminalBackend, path: str) -> str:
    """The directory a checkpoint should cover for a change to `path`: the nearest ancestor with a
    project marker, else the backend cwd when `path` is under it, else the file's directory."""
    home = posixpath.expanduser("~") if backend.kind == "local" else ""
    cwd = backend.cwd()
    directory = posixpath.dirname(path)
    probe = directory
    while probe not in ("/", "", home):
        if any(backend.stat(posixpath.join(probe, m)) is not None for m in PROJECT_MARKERS):
            return probe
        probe = posixpath.dirname(probe)
    if cwd not in ("/", home) and (directory == cwd or directory.startswith(cwd.rstrip("/") + "/")):
        return cwd
    return directory


def checkpoint(ctx: object, backend: TerminalBackend, paths: list[str], reason: str) -> None:
    """Ask the caller to snapshot the working directories about to change (local backend only:
    checkpoints live on the host, so they cannot cover a container's or remote's files)."""
    hook = getattr(ctx, "checkpoint", None)
    if hook is None or backend.kind != "local":
        return
    roots: list[str] = []
    for p in paths:
        root = project_root(backend, p)
        if root not in roots:
            roots.append(root)
    for root in roots:
        hook(root, reason)
