"""Edge cases a user meets trying new commands by hand: each is one clear line and a usage exit, never a
traceback."""

from __future__ import annotations

import pytest

from tests.helpers import run_hermes


@pytest.mark.parametrize(("port", "message"), [("99999", "port 99999 is out of range 0-65535"),
                                               ("-1", "port -1 is out of range 0-65535"),
                                               ("abc", "invalid port 'abc'")])
def test_dashboard_port_out_of_range_is_a_usage_error(hermes_home, port, message):
    pytest.importorskip("aiohttp")
    out = run_hermes("dashboard", "--port", port, "--no-open", home=hermes_home, timeout=30)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] == f"hermes dashboard: error: argument --port: {message}"


def test_tools_enable_of_a_toolset_that_cannot_run_yet_says_what_it_needs(hermes_home):
    out = run_hermes("tools", "enable", "moa", home=hermes_home, timeout=60)
    assert out.returncode == 0 and "enabled moa for cli" in out.stdout
    assert out.stderr.strip() == ("note: mixture_of_agents is not usable yet (requirement not met: moa.presets.<active "
                                  "or default preset>.reference_models lists at least one model in config.yaml)")
    ready = run_hermes("tools", "enable", "todo", home=hermes_home, timeout=60)
    assert ready.returncode == 0 and ready.stderr == ""
