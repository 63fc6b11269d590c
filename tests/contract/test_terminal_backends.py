"""One contract suite over every TerminalBackend available here: local always; docker when
DOCKER_HOST and HERMES_TEST_DOCKER_IMAGE are set (.ci/start-dockerd.sh); ssh when HERMES_TEST_SSH_*
are set (.ci/start-sshd.sh). Backends are built by BackendPool from settings, as the agent builds them."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import threading
import time

import pytest

import hermes_agent.tools.builtin.terminal  # noqa: F401  (registers the tools)
from hermes_agent.approval.policy import PathPolicy
from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.manager import BackendPool
from hermes_agent.terminal.processes import get_manager
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry
from tests.helpers import docker_service_skip, ssh_service_skip, wait_for


def _docker_skip() -> str | None:
    image = os.environ.get("HERMES_TEST_DOCKER_IMAGE")
    problem = docker_service_skip()
    if problem:
        return problem
    if shutil.which("docker") is None:
        return "docker: no docker CLI"
    probe = subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=30)
    return None if probe.returncode == 0 else f"docker: image {image} not built on {os.environ['DOCKER_HOST']}"


@pytest.fixture(scope="module")
def fake_daytona():
    """The local fake of the Daytona HTTP API (tests/fake_daytona.py); the SDK talks to it over loopback."""
    pytest.importorskip("daytona", reason="daytona: pip install '.[daytona]'")
    from tests.fake_daytona import FakeDaytona

    fake = FakeDaytona().start()
    yield fake
    fake.stop()


def _settings(kind: str, home, work, env: dict | None = None) -> Settings:
    kind, _, mechanism = kind.partition("+")
    terminal = dict(DEFAULT_CONFIG["terminal"], backend=kind, timeout=60)
    if kind == "local":
        terminal.update(cwd=str(work))
    if kind == "docker":
        terminal.update(docker_image=os.environ["HERMES_TEST_DOCKER_IMAGE"], container_memory=256)
    if kind == "ssh":
        terminal.update(ssh_host=os.environ["HERMES_TEST_SSH_HOST"], ssh_port=int(os.environ["HERMES_TEST_SSH_PORT"]),
                        ssh_user=os.environ["HERMES_TEST_SSH_USER"], ssh_key=os.environ["HERMES_TEST_SSH_KEY"])
    sandbox = dict(DEFAULT_CONFIG["sandbox"], mechanism=mechanism or "auto")
    return Settings(data={**DEFAULT_CONFIG, "terminal": terminal, "sandbox": sandbox}, env={**os.environ, **(env or {})},
                    home=home)


def _sandbox_skip(kind: str) -> str | None:
    from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
    from hermes_agent.terminal.sandbox.launcher import landlock_problem

    return (bwrap_problem if kind.endswith("bwrap") else landlock_problem)()


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    """One BackendPool per backend kind for the module (containers and connections are reused).
    daytona talks to the fake Daytona API; modal gets the SDK stand-in (tests/fake_modal.py)."""
    made: dict[str, BackendPool] = {}

    def get(kind: str, fake=None) -> BackendPool:
        if kind not in made:
            root = tmp_path_factory.mktemp(kind)
            (root / "work").mkdir()
            env, extra = {}, {}
            if kind == "daytona":
                env = {"DAYTONA_API_KEY": fake.api_key, "DAYTONA_API_URL": fake.url}
            if kind == "modal":
                from tests.fake_modal import FakeModal

                env = {"MODAL_TOKEN_ID": "ak-test", "MODAL_TOKEN_SECRET": "as-test"}
                extra = {"modal_sdk": FakeModal()}
            settings = _settings(kind, root / "home", root / "work", env)
            policy = None
            if "+" in kind:  # the local backend inside the OS sandbox, as bootstrap builds it
                policy = PathPolicy.build(workspace=[str(root / "work")], hermes_home=str(root / "home"),
                                          config=settings.section("sandbox"))
            made[kind] = BackendPool(settings, policy=policy, **extra)
        return made[kind]

    yield get
    for p in made.values():
        p.close_all()


# each backend's tests on one xdist worker (its container or connection is made once), backends in parallel
@pytest.fixture(params=[pytest.param(k, marks=pytest.mark.xdist_group(f"backend-{k}")) for k in
                        ("local", "local+bwrap", "local+landlock", "docker", "ssh", "daytona", "modal")])
def pool(request, pools):
    skip = {"docker": _docker_skip, "ssh": ssh_service_skip}.get(request.param, lambda: None)()
    if "+" in request.param:
        skip = _sandbox_skip(request.param)
    if skip:
        pytest.skip(skip)
    if request.param == "daytona":
        return pools("daytona", request.getfixturevalue("fake_daytona"))
    if request.param == "modal":
        pytest.importorskip("modal", reason="modal: pip install '.[modal]'")
    return pools(request.param)


@pytest.fixture
def scratch(pool):
    """A fresh absolute directory on the backend's machine (in its temp dir: a sandboxed local backend has a
    private one, TMPDIR under Landlock), removed afterwards."""
    res = pool.get("t").execute(f'd="${{TMPDIR:-/tmp}}/hermes-ct-{random.randint(10**8, 10**9)}"; '
                                'mkdir -p "$d" && printf "%s" "$d"')
    path = res.output.strip()
    assert res.exit_code == 0 and path.startswith("/"), res.output
    yield path
    pool.get("t").execute(f"rm -rf {path}")


def _secs() -> str:
    """A sleep length unique to this run: other test runs on the machine (ssh sees them) never match."""
    return str(random.randint(100_000, 999_999))


def _alive(backend, marker: str) -> int:
    """How many processes on the backend's machine have `marker` in their command line."""
    pattern = marker[:-1] + "[" + marker[-1] + "]"  # never matches the grep itself
    res = backend.execute("for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < \"$f\" 2>/dev/null; echo; done "
                          f"| grep -c '{pattern}'; true", timeout=20)
    lines = res.output.strip().splitlines()
    return int(lines[-1]) if lines and lines[-1].isdigit() else 0


def test_echo_and_exit_codes(pool):
    b = pool.get("t")
    assert b.kind == pool.kind and b.isolated is (pool.kind in ("docker", "daytona", "modal"))  # no host mounts
    res = b.execute("echo hello; echo oops >&2; exit 3")
    assert res.exit_code == 3
    assert "hello" in res.output and "oops" in res.output
    assert b.execute("true").exit_code == 0


def test_failing_command_is_data(pool):
    res = pool.get("t").execute("ls /definitely/not/here")
    assert res.exit_code != 0 and not res.timed_out
    assert "not/here" in res.output
    syntax = pool.get("t").execute("if then fi")
    assert syntax.exit_code != 0


def test_cd_and_export_persist(pool, scratch):
    b = pool.get("t")
    b.execute(f"mkdir -p {scratch}/sub && cd {scratch}/sub && export HERMES_CT=42")
    res = b.execute("pwd; echo v=$HERMES_CT")
    assert res.output.split() == [f"{scratch}/sub", "v=42"]
    assert b.cwd() == f"{scratch}/sub"
    once = b.execute("pwd", cwd="/")
    assert once.output.strip() == "/" and b.execute("pwd").output.strip() == f"{scratch}/sub"


def test_tasks_are_isolated(pool, scratch):
    a, b = pool.get("t"), pool.get("other-task")
    assert a is not b and pool.get("t") is a
    a.execute(f"cd {scratch} && export HERMES_ONLY_A=yes")
    res = b.execute("echo a=${HERMES_ONLY_A:-unset}; pwd")
    assert "a=unset" in res.output and scratch not in res.output
    assert a.execute("pwd").output.strip() == scratch
    pool.close("other-task")
    assert "other-task" not in pool.active()


def test_timeout_kills_the_process_group(pool):
    b = pool.get("t")
    s1, s2 = _secs(), _secs()
    started = time.monotonic()
    res = b.execute(f"sh -c 'sleep {s1}' & sleep {s2}; echo never", timeout=1)
    assert time.monotonic() - started < 10
    assert res.timed_out and res.exit_code == 124
    assert "never" not in res.output and "timed out" in res.output
    assert wait_for(lambda: _alive(b, f"sleep {s1}") == 0 and _alive(b, f"sleep {s2}") == 0)


def test_background_child_does_not_hang_the_call(pool):
    b = pool.get("t")
    started = time.monotonic()
    res = b.execute(f"sleep {_secs()} & echo started")
    assert res.output.strip() == "started" and res.exit_code == 0
    assert time.monotonic() - started < 5


def test_interrupt_stops_a_running_command(pool):
    b = pool.get("t")
    b.execute("true")  # connection and first-call setup are not what this measures
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    secs = _secs()
    res = b.execute(f"echo before; sleep {secs}", interrupt=stop)
    assert time.monotonic() - started < 5
    assert res.interrupted and res.exit_code == 130
    assert "before" in res.output
    assert _alive(b, f"sleep {secs}") == 0


def test_stdin_and_undecodable_output(pool):
    b = pool.get("t")
    assert b.execute("cat", stdin="line one\nline two\n").output == "line one\nline two\n"
    res = b.execute("printf 'a\\377b'")
    assert res.output == "a\ufffdb"


def test_huge_output_is_capped_with_marker(pool):
    b = pool.get("t")
    res = b.execute("head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END")
    assert res.exit_code == 0
    assert len(res.output) < 2_100_000
    assert "bytes omitted" in res.output and res.output.rstrip().endswith("END")
    ctx = ToolContext(settings=pool.settings, task_id="t", backend_factory=pool.get)
    out = json.loads(registry.dispatch("terminal", {"command": "seq 1 100000; echo DONE"}, ctx=ctx, task_id="t"))
    assert out["exit_code"] == 0
    assert "output truncated" in out["output"] and out["output"].rstrip().endswith("DONE")
    assert out["output"].startswith("1\n2\n") and len(out["output"].encode()) < 52_000


def test_file_primitives_round_trip(pool, scratch):
    b = pool.get("t")
    b.execute(f"cd {scratch}")
    blob = bytes(range(256)) * 40
    b.write_bytes("deep/dir/blob.bin", blob)
    assert b.read_bytes(f"{scratch}/deep/dir/blob.bin") == blob
    assert b.read_bytes("deep/dir/blob.bin", limit=10) == blob[:10]
    st = b.stat("deep/dir/blob.bin")
    assert st["size"] == len(blob) and st["is_dir"] is False and st["mtime"] > 0
    assert b.stat("deep/dir")["is_dir"] is True
    assert b.stat("nope.txt") is None
    b.write_bytes("deep/dir/blob.bin", b"replaced\n")
    assert b.execute("cat deep/dir/blob.bin; ls -a deep/dir").output.split() == ["replaced", ".", "..", "blob.bin"]
    with pytest.raises(FileNotFoundError):
        b.read_bytes("missing.txt")
    with pytest.raises(IsADirectoryError):
        b.read_bytes("deep")


def test_background_process_stdin_and_kill(pool):
    b = pool.get("t")
    if not hasattr(b, "spawn"):
        pytest.skip(f"{b.kind}: no background processes (the SDK exec has no streaming stdin here)")
    manager = get_manager()
    echo = manager.start("t", b, "read line; echo got:$line; pwd")
    manager.write(echo.id, "hello\n", "t")
    done = manager.wait(echo.id, "t", timeout=20)
    assert done["status"] == "exited" and done["exit_code"] == 0
    assert "got:hello" in done["output_tail"]
    secs = _secs()
    sleeper = manager.start("t", b, f"sleep {secs}")
    # each look is a whole command through the backend (a sandboxed one: seconds on a loaded 2-core machine)
    assert wait_for(lambda: _alive(b, f"sleep {secs}") >= 1, timeout=40)
    assert manager.poll(sleeper.id, "t")["status"] == "running"
    assert manager.kill(sleeper.id, "t")["status"] == "killed"
    assert wait_for(lambda: _alive(b, f"sleep {secs}") == 0, timeout=40)
    assert manager.cleanup("t") == 0


def test_sandboxed_local_contains_commands_and_background_writes(pool, request, outside_dir):
    """Over the sandboxed local backends: what the model can do stays inside the policy, through
    execute, pty and a background shell fed through process write."""
    label = request.node.callspec.params["pool"]
    if "+" not in label:
        pytest.skip("only the sandboxed local backends")
    b = pool.get("t")
    assert b.contained and b.sandbox_state == label.split("+")[1]
    outside = os.path.join(outside_dir, f".hermes-ct-{random.randint(10**8, 10**9)}")  # not under /tmp
    res = b.execute(f"echo x >> {outside}")
    exists = os.path.exists(outside)
    if exists:
        os.unlink(outside)
    assert res.exit_code != 0 and "sandbox: false" in res.output and not exists
    victim = os.path.join(str(pool.settings.home), "victim.txt")
    manager = get_manager()
    shell = manager.start("t", b, "while read -r line; do eval \"$line\"; done")
    manager.write(shell.id, f"echo pwned > {victim}; echo done-$?\n", "t")
    deadline = time.monotonic() + 10
    while "done-" not in manager.poll(shell.id, "t")["output_tail"] and time.monotonic() < deadline:
        time.sleep(0.05)
    manager.kill(shell.id, "t")
    assert "done-1" in manager.poll(shell.id, "t")["output_tail"] and not os.path.exists(victim)
    pty = b.execute_pty(f"test -t 1 && echo tty; echo y > {victim}")
    assert "tty" in pty.output and pty.exit_code != 0 and not os.path.exists(victim)
