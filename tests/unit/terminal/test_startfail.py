"""One policy for a wrapped program the sandbox did not start (the MCP connection, the browser pool and
search_files share it): bwrap's own refusal, as each caller sees it, earns exactly one more start; a program's
own failure never does."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hermes_agent.terminal.sandbox.startfail import OneMoreStart, start_refused


@pytest.fixture(scope="module")
def bwrap_refusal() -> str:
    """What bwrap itself writes when it cannot set a sandbox up (a bind source that vanished)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    res = subprocess.run(["bwrap", "--ro-bind", "/nonexistent-hermes-startfail", "/x", "true"],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode != 0 and res.stderr.startswith("bwrap: "), res.stderr
    return res.stderr.strip().splitlines()[-1]


def test_each_callers_view_of_a_refusal_is_recognised(bwrap_refusal):
    search_stderr = f"{bwrap_refusal}\n"
    playwright_error = (f"BrowserType.launch: Target page, context or browser has been closed\nBrowser logs:\n\n"
                        f"<launched> pid=4242\n[pid=4242][err] {bwrap_refusal}\n[pid=4242] <process did exit: exitCode=1>")
    mcp_said = f" (server said: {bwrap_refusal}; log: /home/u/.hermes/logs/mcp-x.log)"
    netwrap = "hermes sandbox: the network namespace was not set up; not started\n"
    assert start_refused(search_stderr) == bwrap_refusal
    assert start_refused(playwright_error) == bwrap_refusal
    assert start_refused(mcp_said).startswith(bwrap_refusal)
    assert start_refused(netwrap) == netwrap.strip()


def test_a_programs_own_failure_is_not_a_refusal():
    for text in ("rg: /x: No such file or directory\n", " (server said: Error: cannot connect; log: /l)",
                 "Traceback ...\nValueError: the bwrap: option is odd\n", ""):
        assert start_refused(text) is None, text


def test_once_more_and_only_once(bwrap_refusal):
    again = OneMoreStart()
    assert not again.wanted("rg: permission denied") and not again.used
    assert again.wanted(bwrap_refusal) and again.used
    assert not again.wanted(bwrap_refusal)  # a second refusal is the caller's error
