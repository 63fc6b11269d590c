"""approval/display.py: a flagged command fitted to one screen, with the flagged part named."""

from __future__ import annotations

from hermes_agent.approval.approvers import ApprovalRequest, render_prompt
from hermes_agent.approval.display import fit, fit_rows, flagged_parts


def _rows(text: str, width: int) -> int:
    return sum(max(1, -(-len(line) // width)) for line in text.split("\n"))


def test_blank_line_padding_collapses_and_the_rm_stays_on_screen() -> None:
    command = "rm -rf d0 ~/proj" + "\n" * 60 + "echo 'formatting the code with black'"
    text = render_prompt(ApprovalRequest(command, "recursive_delete", "recursive delete"), 24, 100)
    lines = text.split("\n")
    assert _rows(text, 100) <= 24
    assert "    rm -rf d0 ~/proj" in lines and "    «59 blank lines»" in lines
    # right above the choices: the flagged part and the reason
    assert lines[-4:-2] == ["    ⚠️  dangerous part: rm -rf d0 ~/proj", "    ⚠️  reason: recursive delete"]


def test_space_padding_collapses_on_one_line() -> None:
    command = "rm -rf d0 ~/proj;" + " " * 3000 + "echo 'formatting the code with black'"
    assert fit_rows(command, 10, 96) == ["rm -rf d0 ~/proj; «3000 spaces» echo 'formatting the code with black'"]


def test_controls_and_invisible_characters_are_marked() -> None:
    rows = fit_rows("echo hi\x1b]52;c;aGk=\x07\u200b\u2028x\u202e && rm -rf ~/x", 10, 96)
    assert rows == ["echo hi^[]52;c;aGk=^G<U+200B><U+2028>x<U+202E> && rm -rf ~/x"]
    assert not any("\x1b" in r or "\u200b" in r for r in rows)


def test_many_lines_become_head_marker_tail() -> None:
    rows = fit_rows("\n".join(f"echo line {i}" for i in range(100)), 10, 80)
    assert rows[0] == "echo line 0" and rows[-1] == "echo line 99" and "... 91 more lines ..." in rows
    assert len(rows) == 10


def test_flagged_part_is_the_dangerous_one_of_several() -> None:
    command = "echo a; ls -la\n" + "rm -rf ~/proj\n" + "echo done"
    assert flagged_parts(command, ("recursive_delete",)) == ["rm -rf ~/proj"]
    assert flagged_parts("rm -rf ~/proj") == []  # one part: the command itself is what is flagged
    assert fit("ls && rm -rf ~/x", ("recursive_delete",)).flagged == ["rm -rf ~/x"]


def test_once_only_prompt_keeps_its_note_and_fits() -> None:
    command = "\n".join(f"echo {i}" for i in range(80)) + "\nrm -rf ~/proj"
    text = render_prompt(ApprovalRequest(command, "recursive_delete", "recursive delete", once_only=True), 24, 100)
    assert _rows(text, 100) <= 24 and "rm -rf ~/proj" in text.split("Choice")[0].split("reason:")[0]
    assert text.rstrip().endswith("Choice [o/D]:")


def test_v_shows_the_whole_shortened_command_then_asks_again() -> None:
    import io
    import os

    from hermes_agent.approval.approvers import TerminalApprover

    command = "rm -rf " + " ".join(f"dir{i}" for i in range(1000)) + " ~/proj " + " ".join(f"x{i}" for i in range(900))
    read_fd, write_fd = os.pipe()
    out = io.StringIO()
    try:
        os.write(write_fd, b"v\nd\n")
        choice = TerminalApprover(timeout=2.0, stream_in=read_fd, stream_out=out).ask(
            ApprovalRequest(command, "recursive_delete", "recursive delete"))
    finally:
        os.close(read_fd)
        os.close(write_fd)
    shown = out.getvalue()
    first, after = shown.split("Choice [o/s/a/D]:", 1)
    assert "type v to see the whole command" in first and " ~/proj " not in first and "more chars" in first
    assert command in after and "reason: recursive delete" in after and choice == "deny"


def test_v_in_the_repl_shows_the_whole_command() -> None:
    import io
    import threading
    import time

    from hermes_agent.cli.approver import Asker, ReplApprover
    from hermes_agent.cli.screen import Screen

    out = io.StringIO()
    asker = Asker(Screen(out, color=False), lambda: None)
    command = "\n".join(f"echo {i}" for i in range(200)) + "\nrm -rf ~/proj"

    def answer() -> None:
        for text in ("v", "d"):
            while asker.pending is None or asker.pending.done.is_set():
                time.sleep(0.005)
            asker.answer(text)
            time.sleep(0.02)

    threading.Thread(target=answer, daemon=True).start()
    choice = ReplApprover(asker).ask(ApprovalRequest(command, "recursive_delete", "recursive delete", timeout=5))
    first, after = out.getvalue().split("type v to see the whole command", 1)
    assert "echo 100" not in first and "more lines" in first and "echo 100" in after and choice == "deny"


def test_wide_characters_and_other_spaces_count_as_the_terminal_shows_them() -> None:
    wide = "\n".join("漢" * 60 for _ in range(30)) + "\nrm -rf ~/proj"  # 120 columns a line: 2 rows each
    rows = fit_rows(wide, 15, 100)
    assert sum(max(1, -(-2 * r.count("漢") // 100) if "漢" in r else 1) for r in rows) <= 15, rows
    assert rows[-1] == "rm -rf ~/proj" and any("more lines" in r for r in rows)
    assert fit_rows("rm -rf ~/p;" + "\u3000" * 500 + "\t" * 40 + "echo ok", 5, 100) == [
        "rm -rf ~/p; «813 spaces» echo ok"]


def test_the_flagged_line_hidden_in_the_middle_of_thousands_is_named_above_the_prompt() -> None:
    command = "\n".join(f"echo step {i}" for i in range(2000)) + "\nrm -rf ~/proj\n" + \
        "\n".join(f"echo step {i}" for i in range(2000, 4000))
    text = render_prompt(ApprovalRequest(command, "recursive_delete", "recursive delete", ("recursive_delete",)),
                         24, 100)
    body, above = text.split("\n\n    ⚠️  dangerous part:", 1)
    assert "rm -rf" not in body and "more lines" in body  # the middle is left out of the fitted command...
    assert above.startswith(" rm -rf ~/proj\n")  # ...but what is dangerous is named right above the prompt
    assert _rows(text, 100) <= 24
