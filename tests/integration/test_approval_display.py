"""rt12 a43/a46: on a real 24x100 terminal, a flagged command padded with blank lines or spaces cannot scroll
what is dangerous off screen: the rows visible when `Choice [o/s/a/D]` is asked show the rm part and the
reason. Through the real `hermes chat -q` (terminal approver) and the REPL (prompt approver), no --yolo."""

from __future__ import annotations

import os
import re
import time

import pytest

from tests.helpers import HERMES, model_config, on_pty

ROWS, COLS = 24, 100
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]|[\x08]")
PADDED = {"blank_lines": "rm -rf d0 ~/proj" + "\n" * 60 + "echo 'formatting the code with black'",
          "spaces": "rm -rf d0 ~/proj;" + " " * 3000 + "echo 'formatting the code with black'"}


def _visible_rows(text: str) -> list[str]:
    """The rows a ROWS x COLS terminal still shows when the prompt is drawn (the prompt's own row is the last):
    lines wrap at COLS; what is above the top row has scrolled off."""
    rows: list[str] = []
    for line in ANSI.sub("", text).replace("\r\n", "\n").split("\n"):
        line = line.rsplit("\r", 1)[-1]
        rows.extend([line[i:i + COLS] for i in range(0, len(line), COLS)] or [""])
    return rows[-ROWS:]


def _ask_on_pty(argv: list[str], env: dict, cwd: str, answer: bytes, timeout: float = 90) -> tuple[str, str]:
    """Run `argv` on a ROWS x COLS pty; at the first `Choice [` type `answer`. Returns (screen text up to the
    prompt, everything shown)."""
    asked = [b""]

    def react(fd: int, shown: bytes) -> bool:
        if not asked[0] and b"Choice [" in shown:
            time.sleep(0.3)  # let the prompt finish drawing
            asked[0] = shown[:shown.rfind(b"Choice [")] or b"-"
            os.write(fd, answer)
        return bool(asked[0]) and b"finished" in shown[len(asked[0]):]

    shown = on_pty(argv, env, cwd, react, timeout, (ROWS, COLS))
    return asked[0].decode("utf-8", "replace"), shown.decode("utf-8", "replace")


def _setup(scripted, hermes_home, tmp_path, command: str) -> tuple[dict, str]:  # noqa: ANN001
    work = tmp_path / "work"
    (work / "d0").mkdir(parents=True)
    (work / "d0" / "f").write_text("keep")
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]},
                 {"content": "finished"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1",
               COLUMNS=str(COLS), LINES=str(ROWS))
    return env, str(work)


@pytest.mark.parametrize("padding", sorted(PADDED))
def test_chat_q_prompt_keeps_the_dangerous_part_on_screen(scripted, hermes_home, tmp_path, padding):
    env, work = _setup(scripted, hermes_home, tmp_path, PADDED[padding])
    asked, shown = _ask_on_pty([HERMES, "chat", "-q", "tidy up"], env, work, b"d\n")
    assert asked, f"no approval prompt: {shown[-2000:]}"
    screen = "\n".join(_visible_rows(asked))
    assert "Potentially dangerous command detected: recursive delete" in screen, screen
    assert "rm -rf d0 ~/proj" in screen, screen
    assert "dangerous part: rm -rf d0 ~/proj" in screen and "reason: recursive delete" in screen, screen
    assert ("«59 blank lines»" if padding == "blank_lines" else "«3000 spaces»") in screen, screen
    assert (tmp_path / "work" / "d0" / "f").read_text() == "keep"  # denied: nothing ran


def test_repl_prompt_keeps_the_dangerous_part_on_screen(scripted, hermes_home, tmp_path):
    env, work = _setup(scripted, hermes_home, tmp_path, PADDED["blank_lines"])
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(HERMES, [], env=env, cwd=work, dimensions=(ROWS, COLS), encoding="utf-8",
                          codec_errors="replace", timeout=30)
    try:
        child.expect("❯", timeout=60)
        child.send("tidy up\r")
        child.expect(r"Choice \[o/s/a/D\]", timeout=60)
        screen = "\n".join(_visible_rows(child.before))
        assert "rm -rf d0 ~/proj" in screen and "«59 blank lines»" in screen, screen
        assert "dangerous part: rm -rf d0 ~/proj" in screen and "reason: recursive delete" in screen, screen
        child.send("d\r")
        child.expect("finished", timeout=60)
    finally:
        child.terminate(force=True)
    assert (tmp_path / "work" / "d0" / "f").read_text() == "keep"
