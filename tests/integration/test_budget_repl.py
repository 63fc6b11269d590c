"""Spending caps in the real interactive REPL: a tool loop stops at the session cap with one line, the REPL stays
usable, and /budget shows what is left."""

from __future__ import annotations

from tests.integration.test_budget import TOOL_STEP, _spend

PRICING = ("-C", "model.pricing.input=10", "-C", "model.pricing.output=10", "-C", "model.max_tokens=100")


def test_repl_turn_stops_at_the_cap_and_budget_shows_what_is_left(start, scripted, hermes_home):
    scripted.default = TOOL_STEP
    repl = start("budget:\n  session_usd: 0.05\n  day_tokens: 1000000\n", "-t", "todo", *PRICING)
    repl.send("/budget")
    repl.expect(r"session usd: \$0\.0000 of \$0\.0500 spent \(0%\), 100% left")
    repl.send("go")
    repl.expect(r"Budget reached: session cap \$0\.0500 \(budget\.session_usd\); spent \$0\.0440", timeout=60)
    assert len(_spend(hermes_home)) == len(scripted.requests) == 4
    repl.send("/budget")
    repl.expect(r"session usd: \$0\.0440 of \$0\.0500 spent \(88%\), 12% left")
    repl.expect(r"day tokens: 4,400 of 1,000,000 tokens spent")
    scripted.default = {"content": "small talk"}
    repl.send("just chat")  # the next turn is refused too, before any call: the cap still holds
    repl.expect(r"Budget reached: session cap", timeout=30)
    assert len(scripted.requests) == 4
