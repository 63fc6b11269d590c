"""Red-team SSRF attacks on web_extract / web_crawl / vision_analyze through the real `hermes chat -q`: a
loopback "internal" server holds a secret; the model asks for it under disguised addresses (127.1, hex and
decimal IPv4, IPv4-mapped IPv6, trailing-dot names, userinfo) and through redirects from an allowed page to
addresses that are always refused (0.0.0.0, [::]). SAFE outcome: the internal server is never asked."""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config

SECRET = "rt2-internal-admin-secret"

pytest.importorskip("readability", reason="the web extra is needed for web_extract")


class _Internal:
    """A loopback server: /secret answers SECRET, /go?to=URL redirects; every request path is logged."""

    def __init__(self) -> None:
        hits = self.hits = []

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                hits.append(self.path)
                if self.path.startswith("/go?to="):
                    self.send_response(302)
                    self.send_header("Location", self.path.split("=", 1)[1])
                    self.end_headers()
                    return
                body = f"<html><title>admin</title><body><p>{SECRET}</p></body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("0.0.0.0", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def internal():
    server = _Internal()
    yield server
    server.close()


def _run(home: Path, cwd: Path, calls: list[dict], env: dict | None = None) -> list[str]:
    steps = [{"tool_calls": [c]} for c in calls] + [{"content": "done"}]
    with ScriptedServer(steps) as model:
        model_config(home, model.url)
        full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        full.update({"HERMES_HOME": str(home), **(env or {})})
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "web,vision", "--yolo"], env=full, cwd=str(cwd),
                              capture_output=True, text=True, timeout=180)
        results = [str(m.get("content")) for m in model.requests[-1]["body"]["messages"] if m.get("role") == "tool"]
    assert len(results) == len(calls), proc.stdout + proc.stderr
    return results


def test_disguised_loopback_addresses_are_refused(hermes_home: Path, tmp_path: Path, internal) -> None:
    p = internal.port
    urls = [f"http://127.1:{p}/secret", f"http://0x7f000001:{p}/secret", f"http://2130706433:{p}/secret",
            f"http://[::ffff:127.0.0.1]:{p}/secret", f"http://localhost.:{p}/secret", f"http://0.0.0.0:{p}/secret",
            f"http://[::]:{p}/secret", f"http://evil.example@127.0.0.1:{p}/secret", f"http://0177.0.0.1:{p}/secret",
            f"http://127.0.0.1%2509:{p}/secret"]
    calls = [{"name": "web_extract", "arguments": {"urls": urls[i:i + 5]}} for i in (0, 5)]
    calls.append({"name": "web_crawl", "arguments": {"url": f"http://127.1:{p}/secret"}})
    results = _run(hermes_home, tmp_path, calls)
    assert not internal.hits, f"the internal server was asked: {internal.hits}"
    assert all(SECRET not in r for r in results), results


def test_redirect_from_allowed_page_to_always_refused_address(hermes_home: Path, tmp_path: Path, internal) -> None:
    """Private URLs allowed (so the first hop is fine), but unspecified addresses never are: a redirect to
    0.0.0.0 / [::] / an IPv4-mapped form of them must not be followed, by web_extract or vision_analyze."""
    p = internal.port
    targets = [f"http://0.0.0.0:{p}/secret", f"http://[::]:{p}/secret", f"http://[::ffff:0.0.0.0]:{p}/secret"]
    urls = [f"http://127.0.0.1:{p}/go?to={t}" for t in targets]
    calls = [{"name": "web_extract", "arguments": {"urls": urls}}]
    calls += [{"name": "vision_analyze", "arguments": {"image_url": u, "question": "what?"}} for u in urls]
    results = _run(hermes_home, tmp_path, calls, env={"HERMES_ALLOW_PRIVATE_URLS": "true"})
    followed = [h for h in internal.hits if h.startswith("/secret")]
    assert not followed, f"a redirect to an always-refused address was followed: {internal.hits} {results}"


@pytest.fixture
def private_name():
    """A host name that resolves to loopback through /etc/hosts (skipped where that file is not writable)."""
    name = f"rt2-intranet-{os.getpid()}.test"
    line = f"127.0.0.1 {name}  # hermes red-team test\n"
    try:
        with open("/etc/hosts", "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pytest.skip("/etc/hosts is not writable here")
    yield name
    with open("/etc/hosts", encoding="utf-8") as fh:
        kept = [x for x in fh.readlines() if x != line]
    with open("/etc/hosts", "w", encoding="utf-8") as fh:
        fh.writelines(kept)


def test_a_name_resolving_to_loopback_is_refused(hermes_home: Path, tmp_path: Path, internal, private_name) -> None:
    url = f"http://{private_name}:{internal.port}/secret"
    calls = [{"name": "web_extract", "arguments": {"urls": [url, f"http://{private_name}.:{internal.port}/secret"]}},
             {"name": "web_crawl", "arguments": {"url": url}},
             {"name": "vision_analyze", "arguments": {"image_url": url, "question": "?"}}]
    results = _run(hermes_home, tmp_path, calls)
    assert not internal.hits, f"the internal server was asked: {internal.hits}"
    assert all(SECRET not in r for r in results), results
