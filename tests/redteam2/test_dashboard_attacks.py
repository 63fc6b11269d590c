"""Red-team attacks on `hermes dashboard` (real process on loopback): pages without the token, a token
login that redirects off-site, a cross-site POST riding the cookie, DNS rebinding, and markup from session
content (a model reply, a skill's description) rendered as HTML. Each test asserts the SAFE outcome."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config

TOKEN = "rt2-dashboard-token-0123456789abcdef"
EVIL = '<meta http-equiv="refresh" content="0;url=http://evil.example/"><img src=x onerror=alert(1)>'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "DASHBOARD"))}
    env.update({"HERMES_HOME": str(home), "DASHBOARD_TOKEN": TOKEN})
    return env


@pytest.fixture
def dash(hermes_home: Path, tmp_path: Path):
    with ScriptedServer(default={"content": f"Sure {EVIL}"}) as model:
        model_config(hermes_home, model.url)
        subprocess.run([HERMES, "chat", "-q", f"hello {EVIL}"], env=_env(hermes_home), cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=120, check=True)
    skill = hermes_home / "skills" / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: evil\ndescription: '{EVIL}'\n---\n{EVIL}\n")
    port = _free_port()
    proc = subprocess.Popen([HERMES, "dashboard", "--port", str(port), "--no-open"], env=_env(hermes_home),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    yield port
    proc.terminate()
    proc.wait(15)


def _get(port: int, path: str, headers: dict | None = None, method: str = "GET", body: str | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8", "replace")


def _cookie(port: int) -> str:
    status, headers, _ = _get(port, f"/?token={TOKEN}")
    assert status == 303, status
    return headers["Set-Cookie"].split(";")[0]


def test_no_page_without_the_token(dash) -> None:
    for path in ("/sessions", "/config", "/memory", "/skills", "/skills/evil", "/usage", "/cron", "/gateway",
                 "/sessions/x", "/%2e%2e/sessions", "/login/../config"):
        status, _, text = _get(dash, path)
        assert status in (401, 404), (path, status)
        assert "hello" not in text and "evil" not in text.lower().replace("evil.example", ""), path


def test_token_login_never_redirects_off_site(dash) -> None:
    for path in (f"//evil.example/?token={TOKEN}", f"/\\evil.example/?token={TOKEN}", f"/%2F%2Fevil.example?token={TOKEN}"):
        status, headers, _ = _get(dash, path)
        location = headers.get("Location", "")
        assert not re.match(r"^(https?:)?[/\\]{2}", location), (path, location)


def test_cross_site_or_rebound_post_is_refused(dash) -> None:
    cookie = _cookie(dash)
    form = "key=model.default&value=attacker-model"
    for origin, host in (("https://evil.example", f"127.0.0.1:{dash}"), (f"http://evil.example:{dash}", f"evil.example:{dash}")):
        status, _, text = _get(dash, "/config", {"Cookie": cookie, "Origin": origin, "Host": host,
                                                 "Content-Type": "application/x-www-form-urlencoded"}, "POST", form)
        assert status == 403, (origin, status, text[:200])
    status, _, text = _get(dash, "/config", {"Cookie": cookie})
    assert "attacker-model" not in text


def test_session_and_skill_markup_is_shown_as_text(dash) -> None:
    cookie = _cookie(dash)
    status, headers, listing = _get(dash, "/sessions", {"Cookie": cookie})
    assert status == 200
    assert "script-src" not in headers["Content-Security-Policy"] and "default-src 'none'" in headers["Content-Security-Policy"]
    sid = re.search(r'href="/sessions/([^"?]+)"', listing).group(1)
    for path in (f"/sessions/{sid}", "/skills", "/skills/evil", "/sessions"):
        status, _, text = _get(dash, path, {"Cookie": cookie})
        assert status == 200, path
        assert "<meta http-equiv" not in text and "<img src=x" not in text, f"markup rendered on {path}"


def test_rebound_host_names_are_refused_even_with_the_cookie(dash) -> None:
    cookie = _cookie(dash)
    for host in ("127.attacker.example", "localhost.attacker.example", "127.0.0.1.nip.example"):
        status, _, text = _get(dash, "/sessions", {"Cookie": cookie, "Host": f"{host}:{dash}"})
        assert status == 403 and "hello" not in text, (host, status)
    for host in ("127.0.0.1", "localhost"):
        status, _, text = _get(dash, "/sessions", {"Cookie": cookie, "Host": f"{host}:{dash}"})
        assert status == 200 and "hello" in text, (host, status)
