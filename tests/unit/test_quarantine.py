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
