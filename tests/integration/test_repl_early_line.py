"""The first line's editor (cli/early_line.py, issue 24: prompt ready <= 0.15 s): the real `hermes` in a
pseudo-terminal edits keys typed before prompt_toolkit has loaded, and hands the line over without losing or
reordering a key. The early editor switches bracketed paste on with the prompt; prompt_toolkit switches it on
again when it takes over: output before that second switch is the early editor's."""

from __future__ import annotations

import time

import pexpect
import pytest

from tests.helpers import model_config
from tests.integration.repl_driver import ANSI, Repl, convo, wait_requests

PASTE_ON = "\x1b[?2004h"


@pytest.fixture
def spawn(scripted, hermes_home, tmp_path):
    opened: list[Repl] = []
    cwd = tmp_path / "work"
    cwd.mkdir()

    def _spawn(configure: bool = True) -> Repl:
        if configure:  # (a new config.yaml: a banner kept by an earlier run no longer applies)
            model_config(hermes_home, scripted.url)
        repl = Repl(hermes_home, cwd)
        repl.child.delaybeforesend = None  # keys as fast as a typist's burst (pexpect waits 50 ms per send)
        opened.append(repl)
        return repl

    yield _spawn
    for repl in opened:
        repl.close()


def _wait_raw(repl: Repl, needle: str, count: int = 1, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while repl.raw.count(needle) < count:
        assert time.monotonic() < deadline, f"{needle!r} x{count} not seen in: {repl.raw[-600:]!r}"
        repl._pump(0.01)


def _early_typed(repl: Repl, keys: list[str], drawn: str) -> bool:
    """Send the keys at once and wait for prompt_toolkit; True when the early editor drew `drawn` before it."""
    for k in keys:
        repl.child.send(k)
    _wait_raw(repl, PASTE_ON, 2)
    return drawn in ANSI.sub("", repl.raw.split(PASTE_ON)[1])


SKIP = "prompt_toolkit took over before the keys arrived: nothing early to test"


def _run_once(spawn) -> None:
    """A plain `hermes` started and left: it keeps its banner for the next one (cli/fast_prompt.py)."""
    repl = spawn()
    _wait_raw(repl, PASTE_ON, 2)
    assert repl.exit() == 0


@pytest.mark.parametrize("banner", ["first run", "kept banner"])
def test_edits_typed_before_the_full_editor_reach_the_model(spawn, scripted, hermes_home, banner):
    if banner == "kept banner":
        _run_once(spawn)
        assert (hermes_home / ".banner-cache").exists()
    scripted.add({"content": "answered"})
    repl = spawn(configure=banner == "first run")
    _wait_raw(repl, PASTE_ON)  # the early editor is reading
    keys = ["helo wrld", "\x1b[D" * 3, "o", "\x01", "\x1b[C" * 3, "l", "\x05", " 中文xy", "\x7f", "\x1b[D", "\x1b[3~",
            "!"]
    if not _early_typed(repl, keys, "中文"):
        pytest.skip(SKIP)
    repl.child.send("\r")
    body = wait_requests(scripted, 1)[0]
    assert convo(body) == [("user", "hello world 中文!")]
    repl.expect("answered")
    assert repl.exit() == 0


def test_keys_typed_across_the_hand_over_are_kept_in_order(spawn, scripted):
    scripted.add({"content": "got it"})
    repl = spawn()
    _wait_raw(repl, PASTE_ON)
    typed, after = "", None
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    deadline = time.monotonic() + 30
    while after is None or len(typed) < after + 40:  # keep typing until well after prompt_toolkit took over
        assert time.monotonic() < deadline, "prompt_toolkit never took over"
        ch = alphabet[len(typed) % len(alphabet)]
        repl.child.send(ch)
        typed += ch
        repl._pump(0.004)
        if after is None and repl.raw.count(PASTE_ON) >= 2:
            after = len(typed)
    assert after > 1, "no key was typed before the hand-over"
    repl.child.send("\r")
    body = wait_requests(scripted, 1)[0]
    assert convo(body) == [("user", typed)]
    repl.expect("got it")
    assert repl.exit() == 0


def test_history_up_and_enter_before_the_full_editor(spawn, scripted, hermes_home):
    (hermes_home / ".hermes_history").write_text(
        "\n# 2026-11-01 10:00:00.000000\n+older question\n"
        "\n# 2026-11-02 10:00:00.000000\n+two line\n+question\n"
        "\n# 2026-11-03 10:00:00.000000\n+newest question\n", encoding="utf-8")
    scripted.add({"content": "first answer"}, {"content": "second answer"})
    repl = spawn()
    _wait_raw(repl, PASTE_ON)
    # Up x3 reaches the oldest, Down comes back one (the two-line entry), Enter sends it; then a second line
    # begins in the early editor and ends in prompt_toolkit
    if not _early_typed(repl, ["\x1b[A", "\x1b[A", "\x1b[A", "\x1b[B", "\r", "and then"], "and then"):
        pytest.skip(SKIP)
    body = wait_requests(scripted, 1)[0]
    assert convo(body) == [("user", "two line\nquestion")]
    repl.expect("first answer")
    repl.child.send(" more\r")
    body = wait_requests(scripted, 2)[1]
    assert convo(body)[-1] == ("user", "and then more")
    repl.expect("second answer")
    later = ANSI.sub("", PASTE_ON.join(repl.raw.split(PASTE_ON)[2:]))
    assert "❯ two line" not in later  # on screen once: the early editor's line is not echoed again
    assert repl.exit() == 0
    assert "+two line\n+question\n" in (hermes_home / ".hermes_history").read_text().split("2026-11-03")[1]


def test_ctrl_c_clears_then_ctrl_d_leaves_before_the_full_editor(spawn, scripted):
    repl = spawn()
    _wait_raw(repl, PASTE_ON)
    repl.child.send("never sent")
    deadline = time.monotonic() + 20
    while "never sent" not in ANSI.sub("", repl.raw) and repl.raw.count(PASTE_ON) < 2:
        assert time.monotonic() < deadline, repl.raw
        repl._pump(0.01)
    if repl.raw.count(PASTE_ON) > 1:
        pytest.skip(SKIP)
    repl.child.send("\x03")  # clears the line
    repl.child.send("\x04")  # on an empty line: leaves
    repl.child.expect(pexpect.EOF, timeout=20)
    repl.raw += repl.child.before or ""
    repl.child.close()
    assert repl.child.exitstatus == 0
    assert not scripted.requests
    assert repl.raw.rstrip().endswith("\x1b[?2004l")  # bracketed paste off again for the shell


def test_bracketed_paste_keeps_newlines_and_alt_enter_adds_one(spawn, scripted):
    scripted.add({"content": "pasted ok"})
    repl = spawn()
    _wait_raw(repl, PASTE_ON)
    if not _early_typed(repl, ["\x1b[200~line one\rline two\x1b[201~", "\x1b\r", "three"], "three"):
        pytest.skip(SKIP)
    repl.child.send("\r")
    body = wait_requests(scripted, 1)[0]
    assert convo(body) == [("user", "line one\nline two\nthree")]
    repl.expect("pasted ok")
    assert repl.exit() == 0


def _banner_model(repl: Repl) -> str:
    _wait_raw(repl, PASTE_ON)
    return repl.expect(r"model  (\S+)", anywhere=True).group(1)


def test_a_kept_banner_follows_config_and_environment_changes(spawn, scripted, hermes_home):
    _run_once(spawn)
    repl = spawn(configure=False)
    assert _banner_model(repl) == "scripted-model"
    assert repl.exit() == 0
    cfg = hermes_home / "config.yaml"
    cfg.write_text(cfg.read_text().replace("scripted-model", "edited-model"))
    repl = Repl(hermes_home, hermes_home.parent / "work")
    assert _banner_model(repl) == "edited-model"
    assert repl.exit() == 0
    repl = Repl(hermes_home, hermes_home.parent / "work", env={"HERMES_INFERENCE_MODEL": "env-model"})
    assert _banner_model(repl) == "env-model"
    assert repl.exit() == 0
    repl = Repl(hermes_home, hermes_home.parent / "work")
    assert _banner_model(repl) == "edited-model"
    assert repl.exit() == 0


def test_a_kept_banner_never_sends_control_characters_to_the_terminal(spawn, scripted, hermes_home, monkeypatch):
    import os

    from hermes_agent.cli import fast_prompt

    _run_once(spawn)
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    child_env.update(HERMES_HOME=str(hermes_home), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120",
                     LINES="40")  # the driver's environment, as the key sees it
    monkeypatch.setattr(os, "environ", child_env)
    key = fast_prompt.key(str(hermes_home))
    monkeypatch.undo()
    forged = f"hermes-banner-1\n{key}\nevil\x1b]52;c;Zm9v\x07model\nhost\x1b[2J\n0\n0\n"
    (hermes_home / ".banner-cache").write_text(forged, encoding="utf-8")
    repl = spawn(configure=False)
    _wait_raw(repl, PASTE_ON)
    assert "evil]52;c;Zm9vmodel" in repl.raw.split(PASTE_ON)[0]  # drawn from the kept banner, controls dropped
    assert "\x1b]52" not in repl.raw and "\x1b[2J" not in repl.raw
    assert repl.exit() == 0
