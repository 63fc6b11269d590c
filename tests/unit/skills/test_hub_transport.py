"""Hub transport: archive unpacking for direct-URL installs (traversal, links, sizes, top folder) and redirects."""

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


def test_redirects_keep_to_http_and_drop_the_token_across_hosts():
    """A loopback server redirecting to another host name (localhost vs 127.0.0.1) and to file://."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from hermes_agent.skills.hub.http import request

    seen: list[str] = []

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            seen.append(f"{self.headers.get('Host')} {self.headers.get('Authorization')}")
            port = self.server.server_address[1]
            target = {"/hop": f"http://localhost:{port}/end", "/file": "file:///etc/passwd",
                      "/ftp": "ftp://127.0.0.1/x"}.get(self.path)
            self.send_response(302 if target else 200)
            if target:
                self.send_header("Location", target)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        assert request(f"{base}/hop", headers={"Authorization": "Bearer t"}).body == b"ok"
        assert seen[0].endswith("Bearer t") and seen[1].startswith("localhost") and seen[1].endswith("None")
        assert request(f"{base}/file").status == 302  # urllib itself never follows file://
        with pytest.raises(SourceError, match="refusing a redirect"):
            request(f"{base}/ftp")
    finally:
        srv.shutdown()
        srv.server_close()
