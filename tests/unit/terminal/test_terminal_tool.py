"""The `terminal` tool through registry.dispatch on the real local backend."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from hermes_agent.errors import HermesError
from hermes_agent.terminal.manager import BackendPool
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry

from .conftest import make_settings


def test_echo_reports_output_and_exit_code(call):
    assert call("terminal", command="echo hi") == {"output": "hi\n", "exit_code": 0}


def test_failing_command_is_a_result_not_an_error(call):
    out = call("terminal", command="echo partial; exit 7")
    assert out == {"output": "partial\n", "exit_code": 7}


def test_cd_and_export_persist_and_cwd_is_reported(call, work):
    (work / "sub").mkdir()
    first = call("terminal", command="cd sub && export GREETING=hello")
    assert first["cwd"] == str(work / "sub")
    for _ in range(3):
        again = call("terminal", command="echo $GREETING; pwd")
        assert again["output"].split() == ["hello", str(work / "sub")] and "cwd" not in again


def test_workdir_applies_to_one_call_only(call, work, tmp_path):
    assert call("terminal", command="pwd", workdir=str(tmp_path))["output"].strip() == str(tmp_path)
    assert call("terminal", command="pwd")["output"].strip() == str(work)
    missing = call("terminal", command="pwd", workdir=str(tmp_path / "nope"))
    assert missing["exit_code"] == 1 and "workdir not found" in missing["output"]


def test_timeout_is_reported_and_fast(call):
    call("terminal", command="true")  # the sandbox's start is not what this measures
    started = time.monotonic()
    out = call("terminal", command="echo started; sleep 30", timeout=1)
    assert time.monotonic() - started < 5
    assert out["timed_out"] is True and out["exit_code"] == 124
    assert "started" in out["output"] and "background=true" in out["note"]


def test_output_is_capped_with_head_tail_and_marker(tmp_path, work):
    settings = make_settings(tmp_path, work, tool_output={"max_bytes": 2000, "max_lines": 100})
    pool = BackendPool(settings)
    ctx = ToolContext(settings=settings, task_id="cap", backend_factory=pool.get)
    try:
        out = json.loads(registry.dispatch("terminal", {"command": "seq 1 50000"}, ctx=ctx, task_id="cap"))
    finally:
        pool.close_all()
    text = out["output"]
    assert text.startswith("1\n2\n3\n") and text.rstrip().endswith("50000")
    assert "output truncated" in text and "of 50000 lines" in text
    assert len(text.encode()) < 2400


def test_terminal_escape_codes_are_stripped(call):
    out = call("terminal", command=r"printf '\033[1;31mred\033[0m plain\n'")
    assert out["output"] == "red plain\n"


def test_pty_gives_the_command_a_terminal(call):
    assert call("terminal", command="[ -t 1 ] && echo tty || echo notty")["output"].strip() == "notty"
    assert call("terminal", command="[ -t 1 ] && echo tty || echo notty", pty=True)["output"].strip() == "tty"
    via_tty = "python3 -c \"open('/dev/tty', 'w').write('typed at the terminal')\""
    assert call("terminal", command=via_tty, pty=True) == {"output": "typed at the terminal", "exit_code": 0}
    assert "No such device" in call("terminal", command=via_tty)["output"]


def test_interrupt_stops_the_command(ctx, call):
    threading.Timer(0.3, ctx.interrupt.set).start()
    started = time.monotonic()
    out = call("terminal", command="sleep 30")
    assert time.monotonic() - started < 5
    assert out["interrupted"] is True and out["exit_code"] == 130


def test_bad_arguments_give_error_json(call):
    assert "command is required" in call("terminal", command="  ")["error"]
    assert "timeout" in call("terminal", command="true", timeout=-1)["error"]


def test_without_ctx_each_task_gets_its_own_local_shell(tmp_path):
    a = json.loads(registry.dispatch("terminal", {"command": f"cd {tmp_path} && export ONLY_A=1"}, task_id="ua"))
    assert a["exit_code"] == 0
    b = json.loads(registry.dispatch("terminal", {"command": "echo ${ONLY_A:-unset}; pwd"}, task_id="ub"))
    assert b["output"].split()[0] == "unset" and str(tmp_path) not in b["output"]
    again = json.loads(registry.dispatch("terminal", {"command": "echo $ONLY_A; pwd"}, task_id="ua"))
    assert again["output"].split() == ["1", str(tmp_path)]


def test_agent_secrets_are_not_in_the_command_environment(call, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-secret")
    monkeypatch.setenv("HERMES_HARMLESS", "x")
    out = call("terminal", command="env")
    assert "sk-secret" not in out["output"] and "PATH=" in out["output"]


def test_unknown_backend_name_is_a_clear_error(tmp_path, work):
    settings = make_settings(tmp_path, work, terminal={"backend": "vagrant"})
    with pytest.raises(HermesError, match="terminal.backend must be one of local, docker, ssh.*got 'vagrant'"):
        BackendPool(settings)


def test_docker_without_cli_or_daemon_is_a_clear_error(tmp_path, work, monkeypatch):
    settings = make_settings(tmp_path, work, terminal={"backend": "docker"})
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker binary anywhere on PATH
    with pytest.raises(HermesError, match="docker.*not installed"):
        BackendPool(settings).get("t")
    monkeypatch.setenv("PATH", os.defpath + ":/usr/local/bin")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    if not any(os.access(os.path.join(d, "docker"), os.X_OK) for d in os.environ["PATH"].split(":")):
        pytest.skip("no docker CLI installed to check the unreachable-daemon message")
    settings = make_settings(tmp_path, work, terminal={"backend": "docker"})  # settings.env sees DOCKER_HOST
    with pytest.raises(HermesError, match="daemon is not reachable"):
        BackendPool(settings).get("t")


def test_unreachable_ssh_host_is_an_error_the_model_can_read(tmp_path, work):
    settings = make_settings(tmp_path, work, terminal={"backend": "ssh", "ssh_host": "127.0.0.1", "ssh_port": 9,
                                                       "ssh_user": "nobody"})
    pool = BackendPool(settings)
    ctx = ToolContext(settings=settings, task_id="s", backend_factory=pool.get)
    try:
        out = json.loads(registry.dispatch("terminal", {"command": "true"}, ctx=ctx, task_id="s"))
    finally:
        pool.close_all()
    assert "terminal backend unavailable" in out["error"] and "cannot connect to nobody@127.0.0.1:9" in out["error"]
