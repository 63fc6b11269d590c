"""Where `hermes api` and `hermes dashboard` may listen without a secret."""

from __future__ import annotations

import pytest

from hermes_agent.config.listen import bind_refusal, is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]", "LOCALHOST"])
def test_loopback_hosts(host):
    assert is_loopback(host) and bind_refusal(host, "", "KEY", "x") is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org", "127.0.0.1.example.org"])
def test_other_hosts_need_a_long_secret(host):
    assert not is_loopback(host)
    refusal = bind_refusal(host, "short", "API_SERVER_KEY", "run the agent")
    assert refusal == (f"refusing to listen on {host} without API_SERVER_KEY of at least 16 characters "
                       "(anyone on the network could run the agent)")
    assert bind_refusal(host, "x" * 16, "API_SERVER_KEY", "run the agent") is None
