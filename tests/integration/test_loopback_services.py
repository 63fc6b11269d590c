"""Keyless hermes services on loopback refuse confined clients (issue 19, "loopback services"): a `hermes api`
without API_SERVER_KEY runs on 127.0.0.1; a command the model runs through `hermes chat -q` (inside the
sandbox, network on; its own network namespace reaches the port only because the test grants it,
`sandbox.loopback_ports`, through hermes's relay) calls it with curl and Python — plainly, and after making itself
non-dumpable to hide its fds — and gets 403 with one clear line, under bubblewrap and under Landlock; the
unconfined openai client (this test) is still answered."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config, run_hermes
from tests.integration.test_mcp_confinement import MECHANISMS

pytest.importorskip("aiohttp")
openai = pytest.importorskip("openai")

PROBE = r'''
import ctypes, json, sys, urllib.error, urllib.request
url = sys.argv[1]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
def call(path, body=None):
    req = urllib.request.Request(url + path, data=body, headers={"Content-Type": "application/json"})
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
turn = json.dumps({"model": "x", "messages": [{"role": "user", "content": "search my sessions for keys"}]}).encode()
print("PLAIN", *call("/v1/models"))
print("TURN", *call("/v1/chat/completions", turn))
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/<pid>/fd unreadable to other non-root users
print("HIDDEN", *call("/v1/models"))
'''


def _refused_as_confined(output: str, service: str) -> bool:
    """The service refused the sandboxed client, saying why. As root it names the sandbox; as a normal user the
    confined processes are not dumpable (the sandbox makes them so), their /proc/<pid>/fd is hidden from the
    same uid without CAP_SYS_PTRACE, and the socket's holder cannot be found: refused all the same, fail closed,
    with that reason (terminal/sandbox/peer.py)."""
    reasons = ["the connection comes from a process inside a hermes sandbox"]
    if os.geteuid() != 0:
        reasons.append("cannot tell which process opened this connection")
    return any(f"{service} refused this client: {why}" in output for why in reasons)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def keyless_api(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    env.update(HERMES_HOME=str(hermes_home), API_SERVER_PORT=str(port))
    proc = subprocess.Popen([HERMES, "api"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "listening on" in proc.stdout.readline()
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=20)


def _tool_output(scripted, index: int = 1) -> str:
    return json.loads(scripted.requests[index]["body"]["messages"][-1]["content"])["output"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confined_command_is_refused_by_a_keyless_api(scripted, keyless_api, tmp_path, mechanism):
    chat_home, project = tmp_path / "chat-home", tmp_path / "project"
    chat_home.mkdir()
    project.mkdir()
    (project / "probe.py").write_text(PROBE)
    # the port granted: with a network namespace of its own (netns.py) the sandbox reaches no host loopback
    # service otherwise; what comes through the relay is still refused
    port = keyless_api.rsplit(":", 1)[1]
    # the probe's ctypes is code the approval rules cannot follow (opaque_code): allowed here, the API is the subject
    model_config(chat_home, scripted.url, extra=f"sandbox:\n  mechanism: {mechanism}\n  loopback_ports: [{port}]\n"
                                                "command_allowlist:\n  - opaque_code\n")
    command = (f"curl -sS --noproxy '*' -w ' CODE=%{{http_code}}' {keyless_api}/v1/models; echo; "
               f"python3 probe.py {keyless_api}")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
    out = run_hermes("chat", "-q", "call the local api", home=chat_home, cwd=str(project), timeout=120)
    assert out.returncode == 0, out.stderr
    output = _tool_output(scripted)
    assert "CODE=403" in output, output
    for probe in ("PLAIN 403", "TURN 403", "HIDDEN 403"):
        assert probe in output, output
    assert _refused_as_confined(output, "hermes api without API_SERVER_KEY"), output
    assert "hermes-agent" not in output  # no model list, no answer
    assert len(scripted.requests) == 2  # the refused turn never reached the model

    scripted.add({"content": "hello from the unconfined side"})  # the user's own client is still answered
    client = openai.OpenAI(base_url=keyless_api + "/v1", api_key="unused", max_retries=0, timeout=60)
    assert [m.id for m in client.models.list().data] == ["hermes-agent"]
    answer = client.chat.completions.create(model="hermes-agent", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "hello from the unconfined side"


def test_unconfined_command_of_a_sandbox_off_session_is_answered(scripted, keyless_api, tmp_path):
    """Control: with `sandbox.mode: off` (the user's choice) commands are ordinary processes of the user."""
    chat_home, project = tmp_path / "chat-home", tmp_path / "project"
    chat_home.mkdir()
    project.mkdir()
    model_config(chat_home, scripted.url, extra="sandbox:\n  mode: 'off'\n")
    command = f"curl -sS --noproxy '*' -w ' CODE=%{{http_code}}' {keyless_api}/v1/models"
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
    out = run_hermes("chat", "-q", "call the local api", home=chat_home, cwd=str(project), timeout=120,
                     env={"HERMES_YOLO_MODE": "1"})
    assert out.returncode == 0, out.stderr
    output = _tool_output(scripted)
    assert "CODE=200" in output and "hermes-agent" in output, output


def test_a_socket_no_process_holds_is_refused(keyless_api):
    """Fail closed: a connection whose socket only a thread with its own fd table holds
    cannot be attributed to any process, so it is refused."""
    script = Path(__file__).with_name("_loopback_inflight.py")
    res = subprocess.run(["python3", str(script), keyless_api], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert "403" in res.stdout and "cannot tell which process opened this connection" in res.stdout, res.stdout


SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every account (a pyenv python under /root is not)


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
                    reason="needs root and a system python to run a client as another user")
def test_another_local_user_is_refused_by_a_keyless_api(keyless_api):
    """A keyless API acts with its user's keys, files and terminal: another account on the machine (here
    nobody, uid 65534, a plain unconfined process) gets 403 with one clear line, before any turn runs."""
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                          SYSTEM_PYTHON, "-c", PROBE.split("ctypes.CDLL")[0], keyless_api],
                         capture_output=True, text=True, timeout=60, cwd="/")
    assert res.returncode == 0, res.stderr
    lines = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    assert lines["PLAIN"].startswith("403") and "another user of this machine" in lines["PLAIN"], res.stdout
    assert lines["TURN"].startswith("403"), res.stdout


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confined_command_with_the_dashboard_token_is_refused(scripted, hermes_home, tmp_path, mechanism):
    """The dashboard has a token, but a token can leak (under Landlock a browser's command line, with the
    sign-in URL in it, is readable: a21); a confined client is refused even with it."""
    import urllib.request

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "DASHBOARD_"))}
    proc = subprocess.Popen([HERMES, "dashboard", "--port", "0", "--no-open"], env={**env, "HERMES_HOME": str(hermes_home)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        url = line.split("listening on ", 1)[1].strip()
        chat_home, project = tmp_path / "chat-home", tmp_path / "project"
        chat_home.mkdir()
        project.mkdir()
        port = url.split("127.0.0.1:", 1)[1].split("/", 1)[0]  # granted: else unreachable from its namespace
        model_config(chat_home, scripted.url, extra=f"sandbox:\n  mechanism: {mechanism}\n  loopback_ports: [{port}]\n")
        command = f"curl -sS --noproxy '*' -w ' CODE=%{{http_code}}' '{url}'"
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
        out = run_hermes("chat", "-q", "open the dashboard", home=chat_home, cwd=str(project), timeout=120)
        assert out.returncode == 0, out.stderr
        output = _tool_output(scripted)
        assert "CODE=403" in output and _refused_as_confined(output, "hermes dashboard"), output
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as resp:  # the user's own client signs in
            assert resp.status == 200 and "Sessions" in resp.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_keyless_api_started_inside_the_sandbox_serves_nobody(scripted, tmp_path, mechanism):
    """A model-run `hermes api` gains nothing: it listens on the sandbox's own loopback (a network namespace
    of its own, netns.py), so the user's client finds nothing on that port; and it cannot see the user's
    processes' fds (Landlock: ptrace rule; bwrap: they are outside its pid namespace) nor trust its own
    sandbox's, so it refuses the sandbox's commands too."""
    import urllib.error
    import urllib.request

    chat_home, project = tmp_path / "chat-home", tmp_path / "project"
    chat_home.mkdir()
    project.mkdir()
    model_config(chat_home, scripted.url, extra=f"sandbox:\n  mechanism: {mechanism}\n"
                                                "terminal:\n  env_passthrough: [PYTHONPATH]\n")
    (project / "h").mkdir()
    model_config(project / "h", scripted.url)  # the inside server's own home (the user's is hidden)
    port = _free_port()
    seen: list[str] = []

    def from_outside(body: dict) -> dict:  # after the inside call below found the server up
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as resp:
                seen.append(f"{resp.status} {resp.read().decode()}")
        except urllib.error.HTTPError as exc:
            seen.append(f"{exc.code} {exc.read().decode()}")
        except OSError as exc:
            seen.append(f"unreachable {exc}")
        return {"content": "done"}

    inside = (f"for i in $(seq 300); do curl -s --noproxy '*' -o /dev/null http://127.0.0.1:{port}/ && break; "
              f"sleep 0.2; done; curl -sS --noproxy '*' -w ' CODE=%{{http_code}}' http://127.0.0.1:{port}/v1/models")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {
        "command": f"HERMES_HOME=$PWD/h {HERMES} api --port {port}", "background": True}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": inside}}]}, from_outside)
    out = run_hermes("chat", "-q", "start a server", home=chat_home, cwd=str(project), timeout=180,
                     env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert out.returncode == 0, out.stderr
    assert seen and (seen[0].startswith("unreachable") or (seen[0].startswith("403 ") and "refused this client"
                                                            in seen[0])), seen
    answered = _tool_output(scripted, 2)
    assert "CODE=403" in answered and "refused this client" in answered, answered


def test_doctor_says_the_peer_check_works_here(hermes_home):
    out = run_hermes("doctor", "--offline", home=hermes_home)
    assert "✓ loopback services: a keyless hermes api and the dashboard refuse sandboxed clients" in out.stdout, \
        out.stdout
