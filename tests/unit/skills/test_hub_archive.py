"""Archive unpacking for direct-URL installs: traversal, links, sizes, and the stripped top folder."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from hermes_agent.skills.hub.archive import unpack
from hermes_agent.skills.hub.model import MAX_BUNDLE_BYTES, SourceError, checked_files


def _zip(members: dict[str, bytes], symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


def _tar(add) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        add(tf)
    return buf.getvalue()


def test_top_folder_is_stripped_and_files_kept():
    files = unpack(_zip({"pkg/SKILL.md": b"---\nname: x\n---\n", "pkg/scripts/a.sh": b"echo\n"}), "x.zip")
    assert files == {"SKILL.md": b"---\nname: x\n---\n", "scripts/a.sh": b"echo\n"}


@pytest.mark.parametrize("name", ["../evil/SKILL.md", "/etc/cron.d/x", "a/../../b", "C:/x/SKILL.md"])
def test_traversal_is_refused_in_zip(name):
    with pytest.raises(SourceError, match="unsafe path"):
        unpack(_zip({name: b"x"}), "x.zip")


def test_links_are_refused():
    with pytest.raises(SourceError, match="symlink"):
        unpack(_zip({"SKILL.md": b"x"}, symlink="leak"), "x.zip")

    def add(tf: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("s/leak")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)

    with pytest.raises(SourceError, match="link or special file"):
        unpack(_tar(add), "x.tar.gz")


def test_size_limits():
    big = b"a" * (MAX_BUNDLE_BYTES // 2 + 1)
    with pytest.raises(SourceError, match="unpacks to more than"):
        unpack(_zip({"SKILL.md": big, "b": big}), "x.zip")  # deflates to a few KB: a zip bomb in miniature
    with pytest.raises(SourceError, match="no SKILL.md"):
        checked_files({"README.md": b"hi"})
    with pytest.raises(SourceError, match="not a valid"):
        unpack(b"PK\x03\x04 nonsense", "x.zip")
