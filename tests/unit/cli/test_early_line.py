"""The first line's editor (cli/early_line.py) on a real pseudo-terminal: keys as bytes in, the line and the cursor
out, and what it draws kept inside the line it owns (wrapping and wide characters counted as a terminal does)."""

from __future__ import annotations

import os
import select
import termios

import pytest

from hermes_agent.cli.early_line import EarlyLine, layout, read_history, token


@pytest.fixture
def line(tmp_path):
    master, slave = os.openpty()
    editor = EarlyLine(slave, slave, tmp_path / "history", color=False)
    yield editor, master
    for fd in (master, slave, editor._wake_r, editor._wake_w):
        try:
            os.close(fd)
        except OSError:
            pass


def _drawn(master: int) -> str:
    out = b""
    while select.select([master], [], [], 0.01)[0]:
        out += os.read(master, 65536)
    return out.decode("utf-8", "replace")


def test_tokens_wait_for_a_whole_sequence():
    assert token(b"\x1b", 0) == (0, "", "")
    assert token(b"\x1b[", 0) == (0, "", "")
    assert token(b"\x1b[D", 0) == (3, "key", "left")
    assert token(b"\x1b[1;5C", 0) == (6, "key", "word_right")
    assert token(b"\x1bOH", 0) == (3, "key", "home")
    assert token("中".encode()[:2], 0) == (0, "", "")
    assert token("中x".encode(), 0) == (3, "text", "中")
    assert token(b"abc\x7f", 0) == (3, "text", "abc")
    assert token(b"\x1b[99~", 0) == (5, "ignore", "")


def test_layout_counts_wide_characters_and_wraps_like_a_terminal():
    assert layout("", 10) == (0, 2)
    assert layout("abcdefg", 10) == (0, 9)
    assert layout("abcdefgh", 10) == (1, 0)  # the last column filled: the next character starts row 1
    assert layout("abcdefg中", 10) == (1, 2)  # a wide character that does not fit moves to the next row
    assert layout("e\u0301", 10) == (0, 3)  # a combining accent takes no column
    assert layout("a\nb", 10) == (1, 3)  # continuation rows are indented like the prompt


def test_edits(line):
    editor, master = line
    editor._feed(b"helo wrld\x1b[D\x1b[D\x1b[Do\x01\x1b[C\x1b[C\x1b[Cl\x05!")
    assert (editor.text, editor.cursor) == ("hello world!", 12)
    editor._feed(b"\x17")  # Ctrl-W: the word before the cursor
    assert editor.text == "hello "
    editor._feed(b"there\x1bb\x0b")  # Alt-B to the word start, Ctrl-K to the end
    assert (editor.text, editor.cursor) == ("hello ", 6)
    editor._feed(b"\x01\x04\x15")  # Ctrl-D on text deletes forward; Ctrl-U at the start keeps the rest
    assert editor.text == "ello "
    editor._feed(b"\x05\x15")
    assert (editor.text, editor.cursor, editor.eof) == ("", 0, False)
    _drawn(master)


def test_split_sequences_across_reads_and_paste(line):
    editor, master = line
    data = "a中\x1b[D".encode()
    for i in range(len(data)):  # one byte per read: nothing is lost or doubled
        editor._feed(data[i:i + 1])
    assert (editor.text, editor.cursor) == ("a中", 1)
    editor._feed(b"\x1b[200~x\ry\x1b[201~")
    assert editor.text == "ax\ny中"
    _drawn(master)


def test_enter_keeps_the_line_and_starts_another(line):
    editor, master = line
    editor._feed(b"first\rsec")
    assert editor.lines == ["first"] and editor.text == "sec"
    assert "first" in _drawn(master)


def test_history_up_down_from_prompt_toolkit_file(line, tmp_path):
    editor, master = line
    (tmp_path / "history").write_text("\n# t\n+one\n\n# t\n+two\n+lines\n", encoding="utf-8")
    editor._feed(b"draft\x1b[A")
    assert editor.text == "two\nlines"
    editor._feed(b"\x1b[A\x1b[A")
    assert editor.text == "one"
    editor._feed(b"\x1b[B\x1b[B")
    assert editor.text == "draft"
    assert read_history(tmp_path / "missing") == []
    _drawn(master)


def test_a_long_line_redraws_in_place(line):
    editor, master = line
    termios.tcsetwinsize(master, (24, 20))
    cols = os.get_terminal_size(editor.out).columns
    assert cols == 20
    editor._feed(b"x" * (cols * 2))
    _drawn(master)
    row, _ = layout(editor.text, cols)
    assert editor._row == row  # the cursor's row, which the next redraw climbs back from
    editor._feed(b"\x01")
    assert "\x1b[" + str(row) + "A" in _drawn(master)  # back to the prompt's first row


def test_ctrl_c_clears_then_leaves(line):
    editor, master = line
    editor._feed(b"abc\x03")
    assert (editor.text, editor.eof) == ("", False)
    editor._feed(b"\x03")
    assert editor.eof
    _drawn(master)
