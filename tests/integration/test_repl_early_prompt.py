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
