"""The live status line and queued line show model-chosen text inert: escape sequences, bidi overrides and
newlines in a command (red-team round 4, a46) are made visible before prompt_toolkit draws them."""

from __future__ import annotations

import io

from hermes_agent.cli.live import LiveView
from hermes_agent.cli.screen import Screen
from hermes_agent.events import ToolStarted


def test_status_line_shows_a_commands_controls_and_bidi_visibly():
    view = LiveView(Screen(io.StringIO(), color=False, width=200), lambda: None)
    view._handle(ToolStarted("c1", "terminal", "", emoji="💻",
                             label="cat ~/.ssh/id_rsa\x1b[2K\r\x1b[1Als -la \u202etxt.exe"))
    text = "".join(part for _style, part in view._status_line(200))
    assert "\u202e" not in text and "\x1b" not in text and "\r" not in text, text
    assert "<U+202E>" in text and "^[[2K" in text, text
    view.queued.append("next\u202e one\x1b]52;c;eA==\x07")
    queued = "".join(part for _style, part in view._queued_line())
    assert "\u202e" not in queued and "\x1b" not in queued and "\x07" not in queued, queued
