"""patch: replace mode (unique-match rule, tolerant fallback, diff) and multi-file patch mode (all or nothing)."""

from __future__ import annotations

import textwrap

SRC = textwrap.dedent("""\
    def foo():
        return 1


    def bar():
        return 1
    """)


def test_unique_replace_changes_the_file_and_returns_the_diff(work, call):
    (work / "m.py").write_text(SRC)
    out = call("patch", path="m.py", old_string="def foo():\n    return 1", new_string="def foo():\n    return 2")
    assert out["replacements"] == 1 and "note" not in out
    assert "-    return 1\n+    return 2\n" in out["diff"] and out["diff"].startswith("--- a/m.py\n+++ b/m.py\n")
    assert (work / "m.py").read_text() == SRC.replace("return 1", "return 2", 1)


def test_two_matches_is_an_error_with_count_and_lines_and_the_file_is_untouched(work, call):
    (work / "m.py").write_text(SRC)
    before = (work / "m.py").read_bytes()
    out = call("patch", path="m.py", old_string="return 1", new_string="return 3")
    assert "matches 2 times" in out["error"] and "lines 2, 6" in out["error"] and "replace_all" in out["error"]
    assert out["match_count"] == 2 and out["lines"] == [2, 6]
    assert (work / "m.py").read_bytes() == before
    every = call("patch", path="m.py", old_string="return 1", new_string="return 3", replace_all=True)
    assert every["replacements"] == 2 and (work / "m.py").read_text().count("return 3") == 2


def test_indentation_and_trailing_space_slips_are_tolerated_and_reindented(work, call):
    (work / "m.py").write_text("class A:\n    def f(self):   \n        return 1\n")
    out = call("patch", path="m.py", old_string="def f(self):\n    return 1",
               new_string="def f(self):\n    x = 2\n    return x")
    assert out["replacements"] == 1 and "indentation" in out["note"]
    assert (work / "m.py").read_text() == "class A:\n    def f(self):\n        x = 2\n        return x\n"


def test_trailing_whitespace_only_mismatch(work, call):
    (work / "t.txt").write_text("alpha  \nbeta\t\ngamma\n")
    out = call("patch", path="t.txt", old_string="alpha\nbeta\n", new_string="ALPHA\nBETA\n")
    assert "trailing-whitespace" in out["note"]
    assert (work / "t.txt").read_text() == "ALPHA\nBETA\ngamma\n"


def test_crlf_file_patched_with_lf_strings_keeps_crlf(work, call):
    (work / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    out = call("patch", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert out["replacements"] == 1 and "line-endings" in out["note"]
    assert (work / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_no_match_shows_the_nearest_region_and_changes_nothing(work, call):
    (work / "m.py").write_text(SRC)
    out = call("patch", path="m.py", old_string="def bar():\n    return 11", new_string="x")
    assert "not found" in out["error"] and "Closest text is at lines 5-6" in out["error"]
    assert "    5|def bar():" in out["error"] and (work / "m.py").read_text() == SRC
    assert "not found" in call("patch", path="m.py", old_string="zzz qqq", new_string="x")["error"]


def test_undecodable_bytes_elsewhere_in_the_file_survive_a_patch(work, call):
    raw = b"name = 'caf\xe9'\nvalue = 1\n"
    (work / "legacy.py").write_bytes(raw)
    out = call("patch", path="legacy.py", old_string="value = 1", new_string="value = 2")
    assert out["replacements"] == 1
    assert (work / "legacy.py").read_bytes() == raw.replace(b"value = 1", b"value = 2")


def test_bad_replace_arguments(work, call):
    (work / "m.py").write_text(SRC)
    assert "identical" in call("patch", path="m.py", old_string="foo", new_string="foo")["error"]
    assert "write_file" in call("patch", path="m.py", old_string="", new_string="x")["error"]
    assert "File not found" in call("patch", path="nope.py", old_string="a", new_string="b")["error"]
    assert "unknown mode" in call("patch", mode="bogus")["error"]


def test_patch_is_checkpointed_before_it_changes_the_file(work, call, store):
    (work / "m.py").write_text(SRC)
    call("patch", path="m.py", old_string="def foo", new_string="def foo2")
    [cp] = store.list(work)
    store.restore(work, cp.id)
    assert (work / "m.py").read_text() == SRC


MULTI = """\
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -1,2 +1,2 @@
 def foo():
-    return 1
+    return 10
@@ -5,2 +5,3 @@
 def bar():
-    return 1
+    x = 20
+    return x
--- a/notes.txt
+++ b/notes.txt
@@ -1 +1 @@
-hello
+hello world
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+# New
+text
"""


def test_multi_file_unified_diff_applies_to_every_file(work, call):
    (work / "m.py").write_text(SRC)
    (work / "notes.txt").write_text("hello\n")
    out = call("patch", mode="patch", patch=MULTI)
    actions = {f["path"]: f["action"] for f in out["files"]}
    assert actions == {"m.py": "updated", "notes.txt": "updated", "docs/new.md": "created"}
    assert (work / "m.py").read_text() == SRC.replace("return 1\n", "return 10\n", 1).replace(
        "    return 1\n", "    x = 20\n    return x\n")
    assert (work / "notes.txt").read_text() == "hello world\n"
    assert (work / "docs/new.md").read_text() == "# New\ntext\n"
    assert "+hello world" in out["diff"]


def test_multi_file_patch_is_all_or_nothing_when_a_hunk_fails(work, call):
    (work / "m.py").write_text(SRC)
    (work / "notes.txt").write_text("goodbye\n")  # the notes.txt hunk expects "hello"
    out = call("patch", mode="patch", patch=MULTI)
    assert "notes.txt" in out["error"] and "hunk 1 does not apply" in out["error"]
    assert (work / "m.py").read_text() == SRC and (work / "notes.txt").read_text() == "goodbye\n"
    assert not (work / "docs").exists()


def test_multi_file_patch_rolls_back_when_a_write_fails(work, call):
    (work / "m.py").write_text(SRC)
    (work / "blocker").write_text("a file where a directory is needed")
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def foo():\n-    return 1\n+    return 99\n" \
            "--- /dev/null\n+++ b/blocker/new.txt\n@@ -0,0 +1 @@\n+x\n"
    out = call("patch", mode="patch", patch=patch)
    assert "blocker" in out["error"] and "no file was changed" in out["error"]
    assert (work / "m.py").read_text() == SRC


def test_drifted_line_numbers_and_whitespace_in_hunks_still_apply(work, call):
    (work / "m.py").write_text("# header\n# more\n" + SRC)
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def foo():  \n-  return 1\n+  return 5\n"
    out = call("patch", mode="patch", patch=patch)
    assert out["files"] == [{"path": "m.py", "action": "updated", "added": 1, "removed": 1}]
    assert (work / "m.py").read_text().startswith("# header\n# more\ndef foo():\n  return 5\n")


def test_v4a_patch_updates_adds_deletes_and_moves(work, call):
    (work / "m.py").write_text(SRC)
    (work / "old.txt").write_text("bye\n")
    (work / "mv.txt").write_text("a\nb\n")
    patch = textwrap.dedent("""\
        *** Begin Patch
        *** Update File: m.py
        @@ def bar():
        -    return 1
        +    return 7
        *** Add File: added.txt
        +first
        +second
        *** Delete File: old.txt
        *** Update File: mv.txt
        *** Move to: moved/mv.txt
        @@
         a
        -b
        +B
        *** End Patch
        """)
    out = call("patch", mode="patch", patch=patch)
    assert {f["path"]: f["action"] for f in out["files"]} == {
        "m.py": "updated", "added.txt": "created", "old.txt": "deleted", "mv.txt": "deleted",
        "moved/mv.txt": "created"}
    assert (work / "m.py").read_text() == SRC[: SRC.rindex("return 1")] + "return 7\n"
    assert (work / "added.txt").read_text() == "first\nsecond\n"
    assert not (work / "old.txt").exists() and not (work / "mv.txt").exists()
    assert (work / "moved/mv.txt").read_text() == "a\nB\n"


def test_patch_mode_errors_are_clear(work, call):
    assert "No file changes found" in call("patch", mode="patch", patch="just some text")["error"]
    missing = call("patch", mode="patch", patch="--- a/ghost.py\n+++ b/ghost.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert "ghost.py: file does not exist" in missing["error"]
    (work / "here.txt").write_text("x\n")
    exists = call("patch", mode="patch", patch="--- /dev/null\n+++ b/here.txt\n@@ -0,0 +1 @@\n+y\n")
    assert "already exists" in exists["error"] and (work / "here.txt").read_text() == "x\n"


def test_no_newline_markers_are_honoured(work, call):
    (work / "tail.txt").write_text("a\nb")
    patch = "--- a/tail.txt\n+++ b/tail.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
    assert call("patch", mode="patch", patch=patch)["files"][0]["action"] == "updated"
    assert (work / "tail.txt").read_text() == "a\nb\nc\n"
    patch = "--- a/tail.txt\n+++ b/tail.txt\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n\\ No newline at end of file\n"
    call("patch", mode="patch", patch=patch)
    assert (work / "tail.txt").read_text() == "a\nb\nC"
