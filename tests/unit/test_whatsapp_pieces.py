"""WhatsApp pieces with no I/O: markdown -> WhatsApp formatting, the 3-button fit, webhook signatures and
which parts of a webhook payload are messages."""

from __future__ import annotations

import hashlib
import hmac

from hermes_agent.gateway.platforms.whatsapp import fit_buttons, to_whatsapp
from hermes_agent.gateway.platforms.whatsapp_webhook import messages_of, signature_ok


def test_model_markdown_becomes_whatsapp_formatting():
    assert to_whatsapp("**Done** and *now*, __really__ ~~not~~") == "*Done* and _now_, *really* ~not~"
    assert to_whatsapp("## Plan\n* one\n* two") == "*Plan*\n* one\n* two"
    assert to_whatsapp("2*3*4 stays, see [docs](https://x.io/a)") == "2*3*4 stays, see docs (https://x.io/a)"
    assert to_whatsapp("```bash\nls **/*.py\n```\nand `a*b*c`") == "```\nls **/*.py\n```\nand `a*b*c`"


def test_approval_buttons_fit_whatsapps_three():
    four = [("✅ Once", "appr:t:once"), ("Session", "appr:t:session"), ("Always", "appr:t:always"),
            ("❌ Deny", "appr:t:deny")]
    assert fit_buttons(four) == [("✅ Once", "appr:t:once"), ("Always", "appr:t:always"), ("❌ Deny", "appr:t:deny")]
    many = [(f"A very long button title {i}", f"x:{i}") for i in range(5)]
    assert [d for _, d in fit_buttons(many)] == ["x:0", "x:1", "x:4"]
    assert all(len(label) <= 20 for label, _ in fit_buttons(many))


def test_signature_is_hmac_sha256_of_the_raw_body():
    body = b'{"object":"whatsapp_business_account"}'
    good = "sha256=" + hmac.new(b"secret", body, hashlib.sha256).hexdigest()
    assert signature_ok("secret", body, good)
    assert not signature_ok("secret", body + b" ", good)
    assert not signature_ok("other", body, good)
    assert not signature_ok("secret", body, "") and not signature_ok("", body, good)


def test_only_messages_are_taken_from_a_payload():
    value = {"contacts": [{"wa_id": "1555", "profile": {"name": "Ann"}}],
             "messages": [{"from": "1555", "id": "wamid.A", "type": "text", "text": {"body": "hi"}}],
             "statuses": [{"id": "wamid.OUT", "status": "read", "recipient_id": "1555"}]}
    payload = {"object": "whatsapp_business_account", "entry": [{"changes": [{"field": "messages", "value": value}]}]}
    assert messages_of(payload) == [{"message": value["messages"][0], "name": "Ann"}]
    assert messages_of({**payload, "object": "page"}) == []
    value.pop("messages")
    assert messages_of(payload) == []
