"""The REPL shows its prompt before prompt_toolkit has loaded (issue 24: prompt ready <= 0.15 s): what the user
types at that early prompt is not lost, it reaches the real prompt and is sent as one message."""

from __future__ import annotations

from tests.integration.repl_driver import PROMPT, convo, wait_requests


def test_keys_typed_at_the_early_prompt_reach_the_real_one(start, scripted):
    scripted.add({"content": "got it"})
    repl = start(wait=False)
    repl.expect(PROMPT)  # the early symbol, written with the banner
    repl.child.send("typed early")  # very likely before prompt_toolkit is in charge of the terminal
    repl.expect(r"\d+ tools from \d+ toolset", anywhere=True)  # the agent is built after the real prompt drew
    repl.child.send(" and late\r")
    repl.expect(r"got it")
    assert convo(wait_requests(scripted, 1)[0]) == [("user", "typed early and late")]
    assert repl.text.count("typed early and late") >= 1
    assert repl.exit() == 0


def test_a_line_ended_at_the_early_prompt_is_sent_once(start, scripted):
    """Enter at the early prompt (the terminal turns it into a newline, which the line editor reads as Enter)
    sends that line as the first message, and the next prompt is the real one."""
    scripted.add({"content": "first answer"}, {"content": "second answer"})
    repl = start(wait=False)
    repl.expect(PROMPT)
    repl.child.send("hello early\r")  # very likely before prompt_toolkit is in charge of the terminal
    repl.expect(r"first answer")
    repl.child.send("and again\r")
    repl.expect(r"second answer")
    got = [convo(r) for r in wait_requests(scripted, 2)]
    assert got[0] == [("user", "hello early")]
    assert got[1][-1] == ("user", "and again")
    assert repl.exit() == 0
