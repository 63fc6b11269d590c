"""terminal/sandbox/hardlinks.py on real files: which files are copied apart from their hard links, and what the
copy keeps (bytes, mode, times, the links between names inside)."""

from __future__ import annotations

import os
from pathlib import Path

from hermes_agent.terminal.sandbox import hardlinks


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, store = tmp_path / "ws", tmp_path / "store"
    ws.mkdir()
    store.mkdir()
    return ws, store


def test_a_file_linked_outside_is_copied_apart_with_its_bytes_mode_and_times(tmp_path):
    ws, store = _tree(tmp_path)
    (store / "mod.py").write_text("x = 1\n")
    os.chmod(store / "mod.py", 0o751)
    os.utime(store / "mod.py", ns=(1_500_000_000_000_000_000, 1_600_000_000_123_456_789))
    (ws / "pkg").mkdir()
    os.link(store / "mod.py", ws / "pkg/mod.py")
    res = hardlinks.separate([str(ws)])
    inside, outside = os.stat(ws / "pkg/mod.py"), os.stat(store / "mod.py")
    assert inside.st_ino != outside.st_ino and inside.st_nlink == 1 and outside.st_nlink == 1
    assert (ws / "pkg/mod.py").read_text() == "x = 1\n"
    assert inside.st_mode == outside.st_mode and inside.st_mtime_ns == 1_600_000_000_123_456_789
    assert res.copied == [str(ws / "pkg/mod.py")] and res.size == 6
    (ws / "pkg/mod.py").write_text("x = 2\n")  # a write inside no longer reaches the store
    assert (store / "mod.py").read_text() == "x = 1\n"
    assert "copied 1 file(s) (6 bytes)" in res.lines()[0]
    assert not [p for p in (ws / "pkg").iterdir() if "hermes-apart" in p.name]  # no temporary left behind
    assert hardlinks.origin(inside) == (outside.st_dev, outside.st_ino)


def test_links_only_inside_stay_one_file_and_stay_linked_to_each_other(tmp_path):
    ws, store = _tree(tmp_path)
    (ws / "a.txt").write_text("twice\n")
    os.link(ws / "a.txt", ws / "b.txt")  # only inside: left alone
    (store / "c.txt").write_text("thrice\n")
    os.link(store / "c.txt", ws / "c1.txt")
    os.link(store / "c.txt", ws / "c2.txt")  # two names inside, one outside
    res = hardlinks.separate([str(ws)])
    assert os.stat(ws / "a.txt").st_ino == os.stat(ws / "b.txt").st_ino
    c1, c2, c = (os.stat(p) for p in (ws / "c1.txt", ws / "c2.txt", store / "c.txt"))
    assert c1.st_ino == c2.st_ino != c.st_ino and c1.st_nlink == 2 and c.st_nlink == 1
    assert sorted(res.copied) == [str(ws / "c1.txt"), str(ws / "c2.txt")]
    assert res.size == len("thrice\n")  # one copy, linked twice


def test_a_name_in_a_read_only_part_or_a_second_root_counts_as_it_should(tmp_path):
    ws, store = _tree(tmp_path)
    other = tmp_path / "other-root"
    other.mkdir()
    (ws / ".git").mkdir()
    (ws / "hook").write_text("h\n")
    os.link(ws / "hook", ws / ".git/hook")  # the second name lies where the sandbox cannot write
    (ws / "shared").write_text("s\n")
    os.link(ws / "shared", other / "shared")  # the second name is in another writable root
    res = hardlinks.separate([str(ws), str(other)], keep_out=[str(ws / ".git")])
    assert res.copied == [str(ws / "hook")]
    assert os.stat(ws / "shared").st_ino == os.stat(other / "shared").st_ino


def test_symlinks_are_not_followed_and_the_budget_is_said(tmp_path):
    ws, store = _tree(tmp_path)
    (store / "f").write_text("f\n")
    os.link(store / "f", store / "g")
    os.symlink(store, ws / "link-to-store")  # a link out of the root is not walked
    res = hardlinks.separate([str(ws)])
    assert res.copied == [] and os.stat(store / "f").st_nlink == 2
    for i in range(30):
        (ws / f"d{i}").mkdir()
    res = hardlinks.separate([str(ws)], budget=5)
    assert res.unchecked and "not checked" in res.lines()[-1]


def test_once_walks_a_set_of_roots_once(tmp_path):
    ws, store = _tree(tmp_path)
    (store / "f").write_text("f\n")
    os.link(store / "f", ws / "f")
    assert hardlinks.once([str(ws)])  # the line
    os.link(store / "f", ws / "g")
    assert hardlinks.once([str(ws)]) == []  # done for this set in this process
    assert hardlinks.once([str(ws), str(store)]) == []  # a new set is walked: both names now inside


def test_a_carve_out_only_bwrap_keeps_is_walked_and_its_names_kept_apart(tmp_path):
    """`loose`: read-only under bwrap, writable under Landlock without a mount namespace (the guard puts it
    back): a name there linked outside is copied apart too; a writable name linked to one there is copied
    apart from it, which stays as it was."""
    ws, store = _tree(tmp_path)
    (ws / ".git/hooks").mkdir(parents=True)
    (store / "config").write_text("[core]\n")
    os.link(store / "config", ws / ".git/config")  # the repository's config linked to one outside
    (ws / ".git/hooks/pre-commit").write_text("#!/bin/sh\n")
    os.link(ws / ".git/hooks/pre-commit", ws / "hook-copy")  # a writable name of a protected file
    carve = [str(ws / ".git/config"), str(ws / ".git/hooks")]
    res = hardlinks.separate([str(ws)], keep_out=carve, loose=carve)
    assert sorted(res.copied) == [str(ws / ".git/config"), str(ws / "hook-copy")]
    assert os.stat(ws / ".git/config").st_ino != os.stat(store / "config").st_ino
    assert os.stat(ws / ".git/hooks/pre-commit").st_nlink == 1 and (ws / "hook-copy").read_text() == "#!/bin/sh\n"
    res = hardlinks.separate([str(ws)], keep_out=carve)  # not loose: read-only everywhere, not walked
    assert res.copied == []


def test_a_walk_called_off_copies_nothing_and_is_done_later(tmp_path):
    """The warm-up's walk stops when the session closes (a text-only answer does not wait for it)."""
    ws, store = _tree(tmp_path)
    for i in range(100):
        (ws / f"d{i}").mkdir()
    (store / "f").write_text("f\n")
    os.link(store / "f", ws / "d99/f")
    assert hardlinks.once([str(ws)], stop=lambda: True) is None
    assert os.stat(ws / "d99/f").st_nlink == 2
    assert hardlinks.once([str(ws)]) and os.stat(ws / "d99/f").st_nlink == 1  # the first command's walk
