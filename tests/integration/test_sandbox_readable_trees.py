"""One rule for the trees outside HOME that packages do not own (issue 19, red-team round 5 a05, a07, a13):
a file or directory there is readable by a confined command only when everyone may read it, at any depth,
and an executable a PATH directory links to gives its own file, never its directory. Through `hermes chat -q`
and the scripted model, under bubblewrap and Landlock, as root and as uid 65534: a 0600 key five levels down
in /opt, a 0700 directory in /usr/local/lib, a key beside a linked script in /srv stay unreadable (to
commands and to the file tools); a tool in /opt/X/bin, one in /usr/local/bin reading its data deep in
/usr/local/lib, the linked script itself, python, node and git still run."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.integration.test_sandbox_kernel import mechanism, world  # noqa: F401  (fixtures)
from tests.integration.test_sandbox_secrets import UNPRIV, _calls


@pytest.fixture
def trees(monkeypatch):
    """Secrets and tools planted in /opt, /usr/local and /srv (removed afterwards); their bin directories
    put on PATH."""
    if os.geteuid() != 0:
        pytest.skip("planting files in /opt, /usr/local and /srv needs root")
    tag = uuid.uuid4().hex[:8]
    name = f"hermes-test-read-{tag}"
    opt, lib, pub = Path("/opt") / name, Path("/usr/local/lib") / name, Path("/usr/local/lib") / f"{name}-pub"
    tools, secrets = Path("/srv") / f"{name}-tools", Path("/srv") / f"{name}-secrets"
    ulbin = Path("/usr/local/bin") / f"rd5tool-{tag}"
    keys = {opt / "a/b/c/d/deploy_key": f"RD5-OPTDEEP-{tag}", lib / "credentials.json": f"RD5-USRLOCAL-{tag}",
            secrets / "id_ed25519": f"RD5-PATHLINK-{tag}"}
    for path, text in keys.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
        path.chmod(0o600)
    (opt / "a/b/c").chmod(0o700)
    lib.chmod(0o700)
    scripts = {opt / "bin/rd5opt": f"echo RD5-OPTTOOL-{tag}",
               ulbin: f"cat {pub}/share/x/y/data.txt",
               secrets / "backup.sh": f"echo RD5-BACKUP-{tag}"}
    for path, body in scripts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    (pub / "share/x/y").mkdir(parents=True)
    (pub / "share/x/y/data.txt").write_text(f"RD5-DEEPPUBLIC-{tag}\n")
    (tools / "bin").mkdir(parents=True)
    (tools / "bin/backup").symlink_to(secrets / "backup.sh")
    monkeypatch.setenv("PATH", f"{tools}/bin:{opt}/bin:" + os.environ["PATH"])
    try:
        yield {"tag": tag, "keys": {str(p): t for p, t in keys.items()}, "ulbin": ulbin.name}
    finally:
        for path in (opt, lib, pub, tools, secrets):
            shutil.rmtree(path, ignore_errors=True)
        ulbin.unlink(missing_ok=True)


def test_only_what_everyone_may_read_outside_home(world, trees):  # noqa: F811
    tag = trees["tag"]
    if world.user == "user":  # uid 65534 reads others' 0600 files by DAC anyway: make the keys its own
        for key in trees["keys"]:
            subprocess.run(["chown", f"{UNPRIV}:{UNPRIV}", key], check=True)
    keys = " ".join(trees["keys"])
    node = "node -e 'console.log(\"RD5-NODE-\" + (40 + 2))'" if shutil.which("node") else "echo RD5-NODE-42"
    world.scripted.add(*_calls(
        ("terminal", {"command": f"cat {keys} 2>&1; grep -rs RD5- /opt /usr/local/lib /srv 2>/dev/null | head"}),
        ("terminal", {"command": f"rd5opt; {trees['ulbin']}; backup; python3 -c 'print(\"RD5-PY-\" + str(6 * 7))';"
                                 f" git --version; {node}"}),
        *(("read_file", {"path": p}) for p in trees["keys"]),
    ))
    out = world.hermes("--yolo", "chat", "-q", "look around")
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    seen = world.model_saw() + out.stdout
    leaked = [m for m in ("OPTDEEP", "USRLOCAL", "PATHLINK") if f"RD5-{m}-{tag}" in seen]
    assert not leaked, f"read a private file outside HOME: {leaked}\n{world.tool_results()}"
    got = world.tool_results()
    assert "outside what commands and the file tools may read" in got, "read_file must say why"
    for control in (f"RD5-OPTTOOL-{tag}", f"RD5-DEEPPUBLIC-{tag}", f"RD5-BACKUP-{tag}", "RD5-PY-42",
                    "git version", "RD5-NODE-42"):
        assert control in got, f"{control!r} missing: tools outside HOME must keep working\n{got}"


def test_doctor_names_a_private_path_directory(hermes_home, tmp_path):
    """A PATH directory nobody else may enter is hidden, and `hermes doctor` says so."""
    if os.geteuid() != 0:
        pytest.skip("needs a directory in /srv")
    from tests.helpers import run_hermes

    closed = Path("/srv") / f"hermes-test-read-{uuid.uuid4().hex[:8]}"
    (closed / "bin").mkdir(parents=True)
    closed.chmod(0o700)
    try:
        home = tmp_path / "home"
        home.mkdir()
        out = run_hermes("doctor", home=hermes_home, timeout=120,
                         env={"HOME": str(home), "PATH": f"{closed}/bin:" + os.environ["PATH"]})
    finally:
        shutil.rmtree(closed, ignore_errors=True)
    line = next((ln for ln in out.stdout.splitlines() if "may read outside HOME" in ln), "")
    assert "at any depth" in line and f"nobody else may read it, hidden: {closed}/bin" in line, out.stdout[-3000:]
