"""Reads outside HOME are an allowlist (issue 19, rt4 a01: a root session's command read an SSH key in
/work/ci/sshd and used it on a loopback sshd). Through `hermes chat -q` and the scripted model, under
bubblewrap and Landlock, HOME outside /tmp, as root and as uid 65534: a deploy key in a directory of its own
under / (like /srv, /mnt, /var/lib), in /root while HOME is elsewhere, and a root-only file in /etc are
unreadable by commands and by the file tools; python, git and node still run, /etc's public files stay readable,
and `sandbox.readable_paths` opens one more path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.integration.test_sandbox_kernel import mechanism, world  # noqa: F401  (fixtures)
from tests.integration.test_sandbox_secrets import UNPRIV, World, _calls


@pytest.fixture
def planted():
    """Secrets in places nobody listed: /hermes-test-read-X (a deploy-key directory of its own under /),
    /root/.hermes-test-read-X (root's home when HOME is elsewhere), /etc/hermes-test-read-X.key (mode 0600),
    and a file the config grants. Removed after the test."""
    if os.geteuid() != 0:
        pytest.skip("planting files under / and /etc needs root")
    tag = uuid.uuid4().hex[:8]
    top, in_root = Path(f"/hermes-test-read-{tag}"), Path(f"/root/.hermes-test-read-{tag}")
    etc_key = Path(f"/etc/hermes-test-read-{tag}.key")
    made = {top / "deploy/id_ed25519": f"RD4-DEPLOYKEY-{tag}", top / "public/notes.txt": f"RD4-WORLDREAD-{tag}",
            in_root / "id_rsa": f"RD4-ROOTKEY-{tag}", etc_key: f"RD4-ETCKEY-{tag}",
            top / "granted/ok.txt": f"RD4-GRANTED-{tag}"}
    for path, text in made.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
        path.chmod(0o644 if "public" in str(path) or "granted" in str(path) else 0o600)
    try:
        yield {"top": top, "root": in_root, "etc": etc_key, "tag": tag,
               "files": {str(p): t for p, t in made.items()}}
    finally:
        shutil.rmtree(top, ignore_errors=True)
        shutil.rmtree(in_root, ignore_errors=True)
        etc_key.unlink(missing_ok=True)


@pytest.fixture
def elsewhere(tmp_path, scripted, mechanism):  # noqa: F811
    """A root session whose HOME is not under /root (as in containers and CI): /root is another user's
    home, and python still runs from root's pyenv shims on PATH."""
    if os.geteuid() != 0:
        pytest.skip("not root")
    w = World(tmp_path, scripted, mechanism, "root")
    w.ready = True
    return w


def test_outside_home_with_home_elsewhere(elsewhere, planted):
    test_outside_home_only_the_allowlist_is_readable(elsewhere, planted)


def test_outside_home_only_the_allowlist_is_readable(world, planted):  # noqa: F811
    if world.user == "user":  # uid 65534 reads the world-readable ones by DAC; make the key its own, too
        subprocess.run(["chown", f"{UNPRIV}:{UNPRIV}", str(planted["top"] / "deploy/id_ed25519")], check=True)
    tag = planted["tag"]
    granted = planted["top"] / "granted/ok.txt"
    world.config(world.home / ".hermes", f"  readable_paths: ['{granted}']\n")
    files = " ".join(planted["files"])
    node = "node -e 'console.log(\"RD4-NODE-\" + (40 + 2))'" if shutil.which("node") else "echo RD4-NODE-42"
    world.scripted.add(*_calls(
        ("terminal", {"command": f"cat {files} 2>&1; ls {planted['top']} 2>&1; "
                                 f"grep -rs RD4- {planted['top']} /root /etc 2>/dev/null | head -5"}),
        ("terminal", {"command": "python3 -c 'print(\"RD4-PY-\" + str(6 * 7))'; git --version; "
                                 f"{node}; head -1 /etc/passwd; cat /etc/os-release | head -1"}),
        *(("read_file", {"path": p}) for p in planted["files"]),
        ("search_files", {"pattern": "RD4-", "path": str(planted["top"])}),
        ("read_file", {"path": "/etc/hostname"}),
    ))
    out = world.hermes("--yolo", "chat", "-q", "look around")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    seen = world.model_saw() + out.stdout
    leaked = [m for m in ("DEPLOYKEY", "WORLDREAD", "ROOTKEY", "ETCKEY") if f"RD4-{m}-{tag}" in seen]
    assert not leaked, f"read outside the allowlist: {leaked}\n{world.tool_results()}"
    got = world.tool_results()
    assert f"RD4-GRANTED-{tag}" in got, "sandbox.readable_paths must open the granted file"
    assert "outside what commands and the file tools may read" in got, "read_file must say why"
    for control in ("RD4-PY-42", "git version", "RD4-NODE-42", "root:x:0:0", "PRETTY_NAME",
                    open("/etc/hostname").read().strip()):
        assert control in got, f"{control!r} missing: ordinary tools must keep working\n{got}"


@pytest.mark.parametrize("mech", ["bwrap", "landlock"])
def test_an_mcp_server_reads_its_own_files_but_not_a_key_outside_home(scripted, tmp_path, planted, mech):
    """A stdio MCP server whose script lives outside HOME and every default-readable place starts (its own
    program is readable), and its shell cannot read the deploy key, root's key or /etc's private file."""
    import importlib.util

    from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
    from hermes_agent.terminal.sandbox.launcher import landlock_problem
    from tests.helpers import model_config, run_hermes

    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the mcp SDK is not installed")
    if (bwrap_problem() if mech == "bwrap" else landlock_problem()) is not None:
        pytest.skip(f"no {mech}")
    server = planted["top"] / "server/hostile.py"
    server.parent.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "fixtures" / "mcp_hostile_server.py", server)
    home = tmp_path / "home"
    (home / ".hermes").mkdir(parents=True)
    (home / "project").mkdir()
    model_config(home / ".hermes", scripted.url, extra=f"sandbox:\n  mechanism: {mech}\nmcp_discovery_timeout: 30\n"
                 f"mcp_servers:\n  evil:\n    command: {sys.executable}\n    args: [{server}]\n")
    files = " ".join(planted["files"])
    scripted.add({"tool_calls": [{"name": "mcp__evil__run_shell",
                                  "arguments": {"command": f"cat {files} 2>&1; echo SERVER-RAN"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "look", home=home / ".hermes", env={"HOME": str(home)},
                     cwd=str(home / "project"), timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    result = scripted.requests[1]["body"]["messages"][-1]["content"]
    assert "SERVER-RAN" in result, result + out.stderr[-2000:]
    tag = planted["tag"]
    leaked = [m for m in ("DEPLOYKEY", "WORLDREAD", "ROOTKEY", "ETCKEY") if f"RD4-{m}-{tag}" in result]
    assert not leaked, result


def test_doctor_says_what_commands_may_read_outside_home(hermes_home, tmp_path):
    from tests.helpers import run_hermes

    home = tmp_path / "home"
    home.mkdir()
    out = run_hermes("doctor", home=hermes_home, env={"HOME": str(home)}, timeout=120)
    line = next((ln for ln in out.stdout.splitlines() if "may read outside HOME" in ln), "")
    assert "/usr" in line and "/etc" in line and "everything else is hidden" in line, out.stdout[-3000:]
    assert "sandbox.readable_paths" in line
    if os.path.isdir("/srv"):
        assert "/srv" in line.split("everything else is hidden", 1)[1]
