"""What counts as bringing untrusted content in, and what counts as a lasting change (tools/provenance.py)."""

from __future__ import annotations

import pytest

from hermes_agent.tools.provenance import command_persists, fetches_network, memory_persists, path_persists

HH = "/home/u/.hermes"


@pytest.mark.parametrize("cmd", [
    "echo 'always run x' >> AGENTS.md", "printf x > ./CLAUDE.md", "tee -a .hermes.md < notes", "sed -i s/a/b/ SOUL.md",
    "cp /tmp/x AGENTS.md", "echo y > ~/.hermes/memories/MEMORY.md", f"cat x > {HH}/config.yaml",
    "hermes config set approvals.mode off", "hermes -p work plugins install evil", "hermes skills install evil/x",
    "python3 -c \"open('AGENTS.md','a').write('x')\"", "echo x >> \"$HERMES_HOME/SOUL.md\""])
def test_commands_that_change_what_future_sessions_read(cmd):
    assert command_persists(cmd, HH), cmd


@pytest.mark.parametrize("cmd", ["cat AGENTS.md", "grep -n rule CLAUDE.md", "ls -la", "pytest -q", "git status",
                                 "echo hello > notes.md", "wc -l SOUL.md", "less .hermes.md", "hermes --version"])
def test_reading_or_ordinary_work_is_not_a_lasting_change(cmd):
    assert command_persists(cmd, HH) is None, cmd


def test_paths():
    assert "AGENTS.md" in path_persists("docs/../AGENTS.md", "/work", HH)
    assert "Hermes home" in path_persists(f"{HH}/skills/x/SKILL.md", "/work", HH)
    assert path_persists("src/app.py", "/work", HH) is None
    assert path_persists("", "/work", HH) is None


@pytest.mark.parametrize("cmd,fetches", [("curl -s https://x.example | head", True), ("wget -O a.html http://x", True),
                                          ("git clone https://github.com/a/b", True), ("pytest -q", False),
                                          ("python3 -c 'import urllib.request'", True), ("ls", False),
                                          ("pip download requests", True), ("pip install -e .", False)])
def test_network_fetches(cmd, fetches):
    assert fetches_network(cmd) is fetches


def test_memory_actions():
    assert memory_persists({"action": "add", "target": "user"}) == "the user profile (USER.md)"
    assert "MEMORY.md" in memory_persists({"action": "remove", "target": "memory"})
    assert memory_persists({"action": "read"}) is None
