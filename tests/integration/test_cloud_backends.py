"""The daytona and modal terminal backends as a user meets them: `hermes chat -q` with
`terminal.backend: daytona` against the local fake of the Daytona HTTP API (tests/fake_daytona.py),
sandboxes deleted at exit, and the one-line errors when the extra or the credentials are missing.
The modal backend runs against a stand-in for the Modal SDK (tests/fake_modal.py): never the cloud."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.errors import HermesError
from hermes_agent.terminal.manager import BackendPool
from tests.helpers import model_config, run_hermes

# The stand-ins run their "remote" shells on this host, state in /tmp/hermes-*: kept off the worker that runs
# test_sandbox_channels' attack, which plants links in every /tmp/hermes-* it finds (shared /tmp).
pytestmark = pytest.mark.xdist_group("host-tmp-state")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def daytona_api():
    pytest.importorskip("daytona", reason="pip install '.[daytona]'")
    from tests.fake_daytona import FakeDaytona

    fake = FakeDaytona().start()
    yield fake
    fake.stop()


def _tool_results(scripted) -> list[dict]:
    messages = scripted.requests[-1]["body"]["messages"]
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_chat_round_trip_in_a_daytona_sandbox(scripted, hermes_home, tmp_path, daytona_api):
    steps = [("terminal", {"command": "mkdir -p proj && cd proj && echo from-shell > a.txt && pwd"}),
             ("write_file", {"path": "notes/b.txt", "content": "written by the model\n"}),
             ("read_file", {"path": "a.txt"}),
             ("terminal", {"command": "cat notes/b.txt; echo $HOME"})]
    scripted.add(*({"tool_calls": [{"name": n, "arguments": a}]} for n, a in steps), {"content": "all done"})
    model_config(hermes_home, scripted.url, "terminal:\n  backend: daytona\n  daytona_image: python:3.11\n")
    out = run_hermes("chat", "-q", "work in the sandbox", home=hermes_home, input="", cwd=str(tmp_path),
                     env={"DAYTONA_API_KEY": daytona_api.api_key, "DAYTONA_API_URL": daytona_api.url}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "all done" in out.stdout
    results = _tool_results(scripted)
    assert not any("error" in r for r in results), json.dumps(results)
    box_home = results[3]["output"].split()[-1]
    assert results[0]["output"].strip() == f"{box_home}/proj"  # the sandbox's HOME, not the host's
    assert "from-shell" in results[2]["content"]
    assert results[3]["output"].split()[:4] == ["written", "by", "the", "model"]
    assert not (tmp_path / "proj").exists() and not (tmp_path / "notes").exists()
    assert len(daytona_api.created) == 1 and daytona_api.created[0]["buildInfo"]["dockerfileContent"].startswith(
        "FROM python:3.11")
    assert daytona_api.sandboxes == {} and len(daytona_api.deleted) == 1  # deleted when hermes exited


def test_sandbox_deleted_at_process_exit_without_close(daytona_api, tmp_path):
    script = textwrap.dedent(f"""
        from hermes_agent.terminal.daytona import DaytonaBackend
        b = DaytonaBackend("img", api_key={daytona_api.api_key!r}, api_url={daytona_api.url!r})
        print(b.execute("echo alive").output.strip())
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.stdout.strip() == "alive", proc.stderr
    assert len(daytona_api.created) == 1 and daytona_api.sandboxes == {}


def test_wrong_daytona_key_is_one_clear_error(daytona_api, tmp_path):
    settings = _settings("daytona", tmp_path, DAYTONA_API_KEY="wrong", DAYTONA_API_URL=daytona_api.url)
    res = BackendPool(settings).get("t").execute("echo hi")
    assert res.exit_code == 1 and res.output.startswith("daytona backend: cannot create a sandbox from")
    assert "Invalid API key" in res.output and daytona_api.execs == 0


def test_missing_credentials_named_by_doctor_and_tools_list(hermes_home, scripted):
    model_config(hermes_home, scripted.url, "terminal:\n  backend: daytona\n")
    env = {"DAYTONA_API_KEY": ""}
    doctor = run_hermes("doctor", home=hermes_home, env=env)
    assert "terminal backend daytona:" in doctor.stdout
    assert ("DAYTONA_API_KEY is not set" in doctor.stdout or "pip install 'hermes-agent[daytona]'" in doctor.stdout)
    tools = run_hermes("tools", "list", home=hermes_home, env=env)
    line = next(ln for ln in tools.stdout.splitlines() if "terminal" in ln and "DAYTONA" in ln.upper())
    assert "DAYTONA_API_KEY" in line or "hermes-agent[daytona]" in line
    model_config(hermes_home, scripted.url, "terminal:\n  backend: modal\n")
    doctor = run_hermes("doctor", home=hermes_home, env={"MODAL_TOKEN_ID": "", "HOME": str(hermes_home)})
    assert "terminal backend modal:" in doctor.stdout and ("MODAL_TOKEN_ID" in doctor.stdout
                                                           or "hermes-agent[modal]" in doctor.stdout)


def _settings(kind: str, tmp_path, **env: str) -> Settings:
    terminal = dict(DEFAULT_CONFIG["terminal"], backend=kind)
    return Settings(data={**DEFAULT_CONFIG, "terminal": terminal}, env=env, home=tmp_path)


def test_modal_sandbox_lifecycle_through_the_sdk_stand_in(tmp_path, monkeypatch):
    from tests.fake_modal import FakeModal

    monkeypatch.delenv("MODAL_TOKEN_ID", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.modal.toml
    sdk = FakeModal()
    with pytest.raises(HermesError, match="set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET"):
        BackendPool(_settings("modal", tmp_path), modal_sdk=sdk).get("t")
    pool = BackendPool(_settings("modal", tmp_path, MODAL_TOKEN_ID="ak", MODAL_TOKEN_SECRET="as"), modal_sdk=sdk)
    b = pool.get("t")
    assert sdk.sandboxes == []  # created lazily, at the first command
    assert b.execute("echo hi").output == "hi\n"
    box = sdk.sandboxes[0]
    assert box.args == ("sleep", "infinity") and box.kwargs["image"] == ("registry", DEFAULT_CONFIG["terminal"]["modal_image"])
    assert box.kwargs["app"] == "app:hermes-agent" and box.kwargs["tags"] == {"hermes_task_id": "t"}
    res = b.execute("echo partial; sleep 30", timeout=5)  # killed through a second exec call
    assert res.timed_out and res.output.startswith("partial\n")  # (bash may add "Terminated" before the note)
    assert res.output.endswith("[command timed out after 5s; its process group was killed]")
    b.write_bytes("sub/dir/f.txt", b"\x00\xffbytes")
    assert b.read_bytes(f"{box.root}/sub/dir/f.txt") == b"\x00\xffbytes" and b.stat("sub/dir")["is_dir"]
    pool.close_all()
    assert sdk.live() == []
    broken = BackendPool(_settings("modal", tmp_path, MODAL_TOKEN_ID="ak", MODAL_TOKEN_SECRET="as"),
                         modal_sdk=FakeModal(fail_create="Token ID is malformed"))
    res = broken.get("t").execute("echo hi")
    assert res.exit_code == 1 and "modal backend: cannot create a sandbox" in res.output
    assert "Token ID is malformed" in res.output


def test_importing_the_backends_loads_no_sdk():
    code = ("import sys, hermes_agent.terminal.daytona, hermes_agent.terminal.modal, hermes_agent.terminal.manager; "
            "print([m for m in ('daytona', 'modal') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
