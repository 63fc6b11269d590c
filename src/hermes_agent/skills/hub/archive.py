"""Unpack a skill archive (tar.gz / zip) held in memory into bundle files, refusing traversal and bombs.

Links, devices and absolute or `..` paths are refused; total and per-file sizes are capped; a single
top-level directory (as GitHub and most packers produce) is stripped."""

from __future__ import annotations

import io

from hermes_agent.skills.hub.model import MAX_BUNDLE_BYTES, MAX_BUNDLE_FILES, SourceError, safe_rel_path


def is_archive(name: str) -> bool:
    """Whether a URL or file name looks like an archive we unpack."""
    low = name.lower().split("?", 1)[0]
    return low.endswith((".tar.gz", ".tgz", ".zip", ".tar"))


def unpack(data: bytes, name: str) -> dict[str, bytes]:
    """Files of the archive (relative path -> bytes), with the common top directory removed."""
    if data[:2] == b"PK" or name.lower().split("?", 1)[0].endswith(".zip"):
        files = _unzip(data)
    else:
        files = _untar(data)
    return _strip_top(files)


def _add(files: dict[str, bytes], path: str, size: int, read: object) -> None:
    rel = safe_rel_path(path)
    if len(files) >= MAX_BUNDLE_FILES:
        raise SourceError(f"archive has more than {MAX_BUNDLE_FILES} files")
    if size + sum(len(v) for v in files.values()) > MAX_BUNDLE_BYTES:
        raise SourceError(f"archive unpacks to more than {MAX_BUNDLE_BYTES} bytes")
    content = read()  # type: ignore[operator]
    if len(content) != size:
        raise SourceError(f"archive member {path!r} does not match its declared size")
    files[rel] = content


def _unzip(data: bytes) -> dict[str, bytes]:
    import zipfile

    files: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    raise SourceError(f"archive contains a symlink: {info.filename!r}")
                _add(files, info.filename, info.file_size, lambda i=info: zf.read(i))
    except zipfile.BadZipFile as exc:
        raise SourceError(f"not a valid zip archive: {exc}") from exc
    return files


def _untar(data: bytes) -> dict[str, bytes]:
    import tarfile

    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
            for member in tf.getmembers():
                if member.isdir():
                    continue
                if not member.isfile():
                    raise SourceError(f"archive contains a link or special file: {member.name!r}")
                _add(files, member.name, member.size, lambda m=member: tf.extractfile(m).read())
    except tarfile.TarError as exc:
        raise SourceError(f"not a valid tar archive: {exc}") from exc
    return files


def _strip_top(files: dict[str, bytes]) -> dict[str, bytes]:
    if "SKILL.md" in files or not files:
        return files
    tops = {p.split("/", 1)[0] for p in files}
    if len(tops) == 1 and all("/" in p for p in files):
        return {p.split("/", 1)[1]: v for p, v in files.items()}
    return files
