"""hermes_agent.quarantine: what a put-back displaces is copied first (a file, a link, a directory), no link
followed, twice-displaced paths both kept, past the cap said."""

from __future__ import annotations

import os

from hermes_agent import quarantine
from hermes_agent.quarantine import Quarantine


def test_keep_at_copies_files_links_and_trees_without_following(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "f.md").write_text("mine\n")
    (ws / "d" / "sub" / "x.txt").write_text("deep\n")
    secret = tmp_path / "secret"
    secret.write_text("KEY\n")
    os.symlink(secret, ws / "link")
    q = Quarantine(str(tmp_path / "q"))
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        saved = q.keep_at(fd, "f.md", str(ws / "f.md"))
        (ws / "f.md").write_text("second\n")
        again = q.keep_at(fd, "f.md", str(ws / "f.md"))
        link = q.keep_at(fd, "link", str(ws / "link"))
        tree = q.keep_at(fd, "d", str(ws / "d"))
        assert q.keep_at(fd, "absent", str(ws / "absent")) == ""
        monkeypatch.setattr(quarantine, "MAX_KEEP_BYTES", 3)
        assert q.keep_at(fd, "f.md", str(ws / "f.md")) == "" and q.skipped == [str(ws / "f.md")]
    finally:
        os.close(fd)
    assert open(saved).read() == "mine\n" and open(again).read() == "second\n" and saved != again
    assert saved.startswith(str(tmp_path / "q")) and saved.endswith(str(ws / "f.md"))
    assert open(link).read() == str(secret) and link.endswith(".symlink")  # the target's name, not its bytes
    assert open(os.path.join(tree, "sub", "x.txt")).read() == "deep\n"
    assert len(q.kept) == 4
    assert all(os.stat(p).st_mode & 0o077 == 0 for p in q.kept)


def test_copies_keep_holes_and_the_session_cap_leaves_a_note(tmp_path, monkeypatch):
    """rt14b c18: sparse files made on the confined side cost no disk there; their copies must not either, and
    dense ones stop at the session's cap with a note of what was not kept."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(ws / "sparse", "wb") as f:  # 200 MB, one block of data in the middle
        f.truncate(200 << 20)
        f.seek(100 << 20)
        f.write(b"mid")
    for name in ("a", "b", "c"):
        (ws / name).write_bytes(b"x" * 5000)
    q = Quarantine(str(tmp_path / "q"))
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        sparse = q.keep_at(fd, "sparse", str(ws / "sparse"))
        assert q.used <= 1 << 20, q.used  # what it holds on disk: a block or so, not 200 MB
        monkeypatch.setattr(quarantine, "SESSION_KEEP_BYTES", q.used + 12000)
        kept = [q.keep_at(fd, n, str(ws / n)) for n in ("a", "b", "c")]
        assert q.keep_bytes(str(ws / "d"), b"y" * 5000) == ""  # bytes already read count the same
    finally:
        os.close(fd)
    s = os.stat(sparse)
    assert s.st_size == 200 << 20 and s.st_blocks * 512 <= 1 << 20, s
    with open(sparse, "rb") as f:
        f.seek((100 << 20) - 1)
        assert f.read(5) == b"\0mid\0"
    assert open(kept[0], "rb").read() == b"x" * 5000 and kept[1] and kept[2] == ""
    assert q.skipped == [str(ws / "c"), str(ws / "d")]
    note = open(q._target(str(ws / "c")) + ".not-kept.txt").read()
    assert "not kept:" in note and "5000 bytes" in note and "a session" in note, note
