"""Slack mrkdwn conversion, reply pieces and approval blocks (no I/O)."""

from __future__ import annotations

from hermes_agent.gateway.platforms.slack_format import approval_blocks, pieces, to_mrkdwn


def test_markdown_becomes_mrkdwn():
    assert to_mrkdwn("## Plan\n**bold**, __also__, *it*, ~~gone~~") == "*Plan*\n*bold*, *also*, _it_, ~gone~"
    assert to_mrkdwn("[docs](https://x.io/?a=1&b=2)") == "<https://x.io/?a=1&amp;b=2|docs>"
    assert to_mrkdwn("- one\n  * two\n3 * 4 = 12") == "• one\n  • two\n3 * 4 = 12"
    assert to_mrkdwn("a < b & c > d <@U1>") == "a &lt; b &amp; c &gt; d &lt;@U1&gt;"


def test_code_is_kept_with_only_control_characters_escaped():
    assert to_mrkdwn("run `a**b** < c` now") == "run `a**b** &lt; c` now"
    assert to_mrkdwn("```sh\n# **not a heading**\n[x](https://y)\n```") == "```sh\n# **not a heading**\n[x](https://y)\n```"


def test_pieces_respect_the_limit_and_reopen_a_cut_fence():
    text = "intro\n\n```\n" + "line\n" * 400 + "```\nend"
    out = pieces(text, limit=1000)
    assert len(out) > 1 and all(len(p) <= 1000 + 10 for p in out)
    assert all(p.count("```") % 2 == 0 for p in out)
    assert out[0].startswith("intro") and out[-1].endswith("end")
    assert pieces("") == ["(empty reply)"]


def test_approval_blocks_carry_the_callback_data():
    blocks = approval_blocks("x" * 5000, [("✅ Once", "appr:t:once"), ("❌ Deny", "appr:t:deny")])
    assert len(blocks[0]["text"]["text"]) == 3000
    buttons = blocks[1]["elements"]
    assert [(b["value"], b.get("style")) for b in buttons] == [("appr:t:once", "primary"), ("appr:t:deny", "danger")]
    assert len({b["action_id"] for b in buttons}) == 2
