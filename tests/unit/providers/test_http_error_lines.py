"""classify_http_error: one line with status, reason and a short plain-text excerpt; what is retried."""

from __future__ import annotations

from hermes_agent.errors import BadRequestError, RateLimitedError, TransientError
from hermes_agent.providers.wire import classify_http_error

HTML = ("<!DOCTYPE HTML>\n<html><head><title>Error response</title><style>p {color: red}</style></head>\n<body>"
        "<h1>Error response</h1>\n<p>Error code: 501</p>\n<p>Message: Unsupported method (&#x27;POST&#x27;).</p>"
        + "<p>filler</p>\n" * 200 + "</body></html>")


def test_an_html_error_page_becomes_a_short_plain_line_and_501_is_not_retried():
    err = classify_http_error(501, HTML, None, "http://h/v1/chat/completions")
    text = str(err)
    assert text.startswith("http://h/v1/chat/completions answered 501 Not Implemented: ")
    assert "Message: Unsupported method ('POST')." in text and "<" not in text and "color" not in text
    assert "\n" not in text and len(text) < 300 and text.endswith("…)")
    assert not err.retryable


def test_4xx_are_not_retried_but_rate_limits_and_5xx_are():
    assert isinstance(classify_http_error(404, '{"error": {"message": "no such model"}}', None, "u"), BadRequestError)
    assert str(classify_http_error(404, '{"error": {"message": "no such model"}}', None, "u")) == \
        "u answered 404 Not Found: no such model"
    assert not classify_http_error(400, "bad", None, "u").retryable
    assert isinstance(classify_http_error(429, "", "2", "u"), RateLimitedError)
    assert isinstance(classify_http_error(503, "", None, "u"), TransientError)
    assert str(classify_http_error(502, "", None, "u", "Bad Gateway")) == "u answered 502 Bad Gateway: server error (no details)"
