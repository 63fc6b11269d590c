"""What a new user hits in the first hour (issue 22), through the real `hermes` executable: each command ends
with one clear line and a meaningful exit status, never a traceback."""

from __future__ import annotations

import json
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes, write_config


class _Static(SimpleHTTPRequestHandler):
    """A static file server: POST is answered with its stock 501 HTML page."""

    posts = 0

    def do_POST(self) -> None:  # noqa: N802
        type(self).posts += 1
        self.send_error(501, "Unsupported method ('POST')")  # what the stock handler sends for a method it lacks

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def static_server():
    handler = type("Static", (_Static,), {"posts": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, handler
    server.shutdown()
    server.server_close()


def test_a_model_endpoint_answering_an_html_501_is_one_short_line_and_not_retried(hermes_home, static_server):
    server, handler = static_server
    model_config(hermes_home, f"http://127.0.0.1:{server.server_address[1]}/v1")
    out = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert out.returncode == 1
    assert handler.posts == 1, "a 501 was retried"
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    assert "answered 501" in lines[0] and "Unsupported method" in lines[0], lines[0]
    assert "<" not in lines[0] and len(lines[0]) < 400, lines[0]


def test_a_4xx_from_the_model_is_not_retried(hermes_home, scripted):
    model_config(hermes_home, scripted.url)
    scripted.add({"error": {"status": 404, "message": "model 'scripted-model' not found"}},
                 {"content": "must never be asked"})
    out = run_hermes("chat", "-q", "hello", home=hermes_home)
    assert out.returncode == 1 and len(scripted.requests) == 1
    assert "answered 404 Not Found: model 'scripted-model' not found" in out.stderr
    assert "Traceback" not in out.stderr and "must never be asked" not in out.stdout


def test_api_on_a_port_in_use_is_one_line(hermes_home, scripted):
    model_config(hermes_home, scripted.url)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_hermes("api", "--port", str(port), home=hermes_home, timeout=30)
    assert out.returncode == 1
    assert out.stderr.strip() == f"hermes api: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_cron_run_without_a_scheduler_says_none_is_running(hermes_home):
    made = run_hermes("cron", "create", "every 1h", "say hi", "--name", "hi", home=hermes_home)
    job_id = made.stdout.split()[2]
    out = run_hermes("cron", "run", job_id, home=hermes_home)
    assert out.returncode == 0
    assert "no scheduler is running" in out.stdout and f"hermes cron run {job_id} --now" in out.stdout


def test_config_set_refuses_a_negative_context_length(hermes_home):
    write_config(hermes_home, "model:\n  default: m\n")
    out = run_hermes("config", "set", "model.context_length", "-5", home=hermes_home)
    assert out.returncode == 2
    assert "model.context_length must be a positive integer, got -5" in out.stderr
    assert "-5" not in (hermes_home / "config.yaml").read_text()


def test_garbage_lines_in_dotenv_are_reported(hermes_home):
    (hermes_home / ".env").write_text("OPENAI_API_KEY=sk-x\nthis is not a variable\n=nothing\n")
    status = run_hermes("status", home=hermes_home)
    warnings = [ln for ln in status.stderr.splitlines() if ".env" in ln]
    assert warnings == [f"hermes: warning: {hermes_home / '.env'}: lines 2, 3 not KEY=value, ignored "
                        "(`hermes config check` lists them)"]
    check = run_hermes("config", "check", home=hermes_home)
    assert check.returncode == 1
    assert f"{hermes_home / '.env'} line 2: not KEY=value, ignored: this is not a variable" in check.stdout


def test_a_blocked_tool_call_is_marked_for_the_user_with_its_reason(hermes_home, scripted, tmp_path: Path):
    pytest.importorskip("readability", reason="web_extract needs the [web] extra")
    model_config(hermes_home, scripted.url)
    scripted.add({"tool_calls": [{"name": "web_extract", "arguments": {"urls": [f"{scripted.url}/secret"]}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "read it", "-t", "web", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stderr.splitlines() if "web_extract" in ln)
    seen = json.loads(scripted.requests[-1]["body"]["messages"][-1]["content"])["results"][0]["error"]
    assert "  ✗ " in line and seen.splitlines()[0][:40] in line, (line, seen)
