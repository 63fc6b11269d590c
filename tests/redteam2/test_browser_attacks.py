"""Red-team attacks on the browser tools through the real `hermes chat -q` (Playwright + system Chromium):
private URLs are allowed, so a loopback page opens fine, but unspecified addresses (0.0.0.0 reaches this
machine) are always refused. The page tries them by fetch, iframe, image, WebSocket and a redirect.
SAFE outcome: the refused address is never asked."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes_agent.providers.scripted import ScriptedServer
from tests.helpers import HERMES, model_config

pytest.importorskip("playwright", reason="the browser extra is needed")
pytestmark = pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                                reason="no system Chromium")


class _Site:
    """Serves /page (which reaches for 0.0.0.0 several ways) and /go (a redirect); logs every path."""

    def __init__(self) -> None:
        hits = self.hits = []
        self.extra = ""
        site = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                hits.append(self.path)
                if self.path.startswith(("/go", "/hop")):
                    where = {"/go": f"http://0.0.0.0:{site.port}/redirected", "/hop1": "/hop2",
                             "/hop2": "/landed", "/hopbad1": "/hopbad2"}.get(self.path,
                                                                         f"http://0.0.0.0:{site.port}/redirected")
                    self.send_response(302)
                    self.send_header("Location", where)
                    self.end_headers()
                    return
                body = site.page().encode() if self.path == "/page" else site.rtc().encode() if self.path == "/rtc" else \
                    b"<title>Landed</title><p>arrived</p>" if self.path == "/landed" else b"<p>internal</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("0.0.0.0", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def page(self) -> str:
        base = f"0.0.0.0:{self.port}"
        return (f"<html><body><p>hello</p>{self.extra}<img src='http://{base}/img'><iframe src='http://{base}/iframe'></iframe>"
                f"<script>fetch('http://{base}/fetched').catch(() => 0);"
                f"try {{ new WebSocket('ws://{base}/ws'); }} catch (e) {{}}</script></body></html>")

    def rtc(self) -> str:
        """A page whose WebRTC ICE servers are the raw listeners (TURN over TCP, STUN over UDP), from the page
        and from a fresh about:blank frame."""
        servers = (f"[{{urls: 'turn:0.0.0.0:{self.tcp_port}?transport=tcp', username: 'u', credential: 'p'}}, "
                   f"{{urls: 'stun:0.0.0.0:{self.udp_port}'}}]")
        use = ("(P) => { try { const pc = new P({iceServers: " + servers + "}); pc.createDataChannel('x'); "
               "pc.createOffer().then(o => pc.setLocalDescription(o)); } catch (e) {} }")
        return (f"<html><body><script>const use = {use}; use(window.RTCPeerConnection);"
                "const f = document.createElement('iframe'); document.body.appendChild(f);"
                "use(f.contentWindow.RTCPeerConnection);</script></body></html>")

    def listen_raw(self) -> None:
        self.raw_hits: list[str] = []
        tcp = socket.socket()
        tcp.bind(("0.0.0.0", 0))
        tcp.listen(5)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("0.0.0.0", 0))
        self.tcp_port, self.udp_port = tcp.getsockname()[1], udp.getsockname()[1]
        self._raw = (tcp, udp)

        def serve_tcp() -> None:
            while True:
                try:
                    conn, _ = tcp.accept()
                except OSError:
                    return
                self.raw_hits.append("tcp")
                conn.close()

        def serve_udp() -> None:
            while True:
                try:
                    udp.recvfrom(2048)
                except OSError:
                    return
                self.raw_hits.append("udp")

        threading.Thread(target=serve_tcp, daemon=True).start()
        threading.Thread(target=serve_udp, daemon=True).start()

    def close(self) -> None:
        for sock in getattr(self, "_raw", ()):
            sock.close()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def site():
    s = _Site()
    yield s
    s.close()


def _browse(home: Path, cwd: Path, url: str) -> list[str]:
    steps = [{"tool_calls": [{"name": "browser_navigate", "arguments": {"url": url}}]},
             {"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 2"}}]},
             {"tool_calls": [{"name": "browser_snapshot", "arguments": {}}]},
             {"content": "done"}]
    with ScriptedServer(steps) as model:
        # the site's loopback port granted: the confined browser has a network namespace of its own (netwrap.py)
        model_config(home, model.url, extra=f"sandbox:\n  loopback_ports: [{url.split(':')[2].split('/')[0]}]\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
        env.update({"HERMES_HOME": str(home), "HERMES_ALLOW_PRIVATE_URLS": "true"})
        proc = subprocess.run([HERMES, "chat", "-q", "go", "-t", "browser,terminal", "--yolo"], env=env, cwd=str(cwd),
                              capture_output=True, text=True, timeout=180)
        time.sleep(0.5)
        results = [str(m.get("content")) for m in model.requests[-1]["body"]["messages"] if m.get("role") == "tool"]
    assert len(results) == 3, proc.stdout + proc.stderr
    return results


def test_page_subresources_and_websockets_cannot_reach_refused_addresses(hermes_home: Path, tmp_path: Path,
                                                                        site) -> None:
    out = _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/page")
    assert "/page" in site.hits, f"the page was not opened (test setup): {site.hits}\n{out}"
    reached = [h for h in site.hits if h != "/page" and not h.startswith("/favicon")]
    assert not reached, f"the page reached a refused address: {reached}"


def test_a_redirect_hop_is_not_requested(hermes_home: Path, tmp_path: Path, site) -> None:
    _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/go")
    assert "/go" in site.hits, site.hits
    assert "/redirected" not in site.hits, f"the redirect hop was requested: {site.hits}"


def test_redirect_chains_still_land_and_a_refused_hop_mid_chain_is_reported(hermes_home: Path, tmp_path: Path,
                                                                           site) -> None:
    """Checked hops must not break ordinary redirects: /hop1 -> /hop2 -> /landed is shown as /landed; and
    /hopbad1 -> /hopbad2 -> 0.0.0.0 stops with the refusal, the refused address never asked."""
    good = _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/hop1")
    nav = json.loads(good[0])
    assert nav["success"] and nav["url"].endswith("/landed") and nav["title"] == "Landed", nav
    bad = _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/hopbad1")
    nav = json.loads(bad[0])
    assert not nav["success"] and "0.0.0.0" in nav["error"], nav
    assert "/redirected" not in site.hits, site.hits


def test_webrtc_cannot_reach_refused_addresses(hermes_home: Path, tmp_path: Path, site) -> None:
    """STUN (UDP) and TURN (TCP) go to any host:port outside the request routing: the page must get none."""
    site.listen_raw()
    _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/rtc")
    assert "/rtc" in site.hits, site.hits
    assert not site.raw_hits, f"WebRTC reached a refused address: {site.raw_hits}"


def test_a_subresource_redirect_hop_is_not_requested(hermes_home: Path, tmp_path: Path, site) -> None:
    """An <img> whose allowed URL redirects to a refused address: the hop must not be requested."""
    site.extra = f"<img src='http://127.0.0.1:{site.port}/go'>"
    _browse(hermes_home, tmp_path, f"http://127.0.0.1:{site.port}/page")
    assert "/go" in site.hits, site.hits
    assert "/redirected" not in site.hits, f"the sub-resource's redirect hop was requested: {site.hits}"
