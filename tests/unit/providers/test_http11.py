"""The provider's HTTP/1.1 exchange on plain sockets (providers/http11.py under providers/http.py), against a raw
loopback server that answers exactly the bytes each test gives: sized, chunked (lines split across chunks) and
until-close bodies, keep-alive reuse and reconnection, a dead kept-alive socket retried once, cut-off bodies, an
HTTP proxy (absolute-form target, the origin's Host) and a CONNECT tunnel."""

from __future__ import annotations

import socket
import threading

import pytest

from hermes_agent.errors import TransientError
from hermes_agent.providers.http import HttpClient, Proxy
from hermes_agent.providers.http11 import Connection, HTTPError


class RawServer:
    """Each accepted connection reads requests and answers them with the next canned reply (bytes; None =
    close the connection without answering). Requests are recorded with the connection's number."""

    def __init__(self, replies: list) -> None:
        self.replies, self.requests, self.connections = list(replies), [], 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn, self.connections), daemon=True).start()

    def _one(self, conn: socket.socket, number: int) -> None:
        fp = conn.makefile("rb")
        with conn:
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = fp.readline()
                    if not line:
                        return
                    head += line
                length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n")
                               if h.lower().startswith(b"content-length:")), 0)
                self.requests.append((number, head.decode(), fp.read(length)))
                reply = self.replies.pop(0) if self.replies else None
                if isinstance(reply, tuple):  # (event, bytes): answer once the test sets the event
                    reply[0].wait(30)
                    reply = reply[1]
                if reply is None:
                    return
                conn.sendall(reply)
                if b"Connection: close" in reply.split(b"\r\n\r\n")[0]:
                    return

    def close(self) -> None:
        self.sock.close()


def ok(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


def chunked(*pieces: bytes) -> bytes:
    out = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    for p in pieces:
        out += f"{len(p):x}\r\n".encode() + p + b"\r\n"
    return out + b"0\r\n\r\n"


@pytest.fixture
def server():
    made: list[RawServer] = []

    def make(replies: list) -> RawServer:
        made.append(RawServer(replies))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_sized_bodies_share_one_kept_alive_connection(server):
    srv = server([ok(b'{"a": 1}'), ok(b"second")])
    client = HttpClient(f"http://127.0.0.1:{srv.port}/v1", headers={"Authorization": "Bearer k"})
    first = client.post("/chat", b'{"x": 1}')
    assert (first.status, first.read(), first.headers["content-length"]) == (200, b'{"a": 1}', "8")
    assert first.finish()
    second = client.post("/chat", b"{}")
    assert second.read() == b"second" and second.finish()
    assert [n for n, _, _ in srv.requests] == [1, 1]
    number, head, body = srv.requests[0]
    assert head.startswith("POST /v1/chat HTTP/1.1\r\n") and f"Host: 127.0.0.1:{srv.port}\r\n" in head
    assert "Authorization: Bearer k\r\n" in head and "Content-Length: 8\r\n" in head and body == b'{"x": 1}'


def test_event_stream_lines_span_chunk_boundaries(server):
    srv = server([chunked(b"data: {\"a\"", b": 1}\n\ndata: [DO", b"NE]\n\n")])
    resp = HttpClient(f"http://127.0.0.1:{srv.port}").post("/s", b"{}")
    assert list(resp.iter_lines()) == ['data: {"a": 1}', "", "data: [DONE]", ""]
    assert resp.finish()


def test_connection_close_and_until_close_bodies_reconnect_for_the_next_request(server):
    srv = server([ok(b"one", "Connection: close\r\n"), b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end",
                  ok(b"three")])
    client = HttpClient(f"http://127.0.0.1:{srv.port}")
    assert client.post("/", b"").read() == b"one"
    resp = client.post("/", b"")
    assert resp.read() == b"to the end" and resp.finish()
    assert client.post("/", b"").read() == b"three"
    assert [n for n, _, _ in srv.requests] == [1, 2, 3]


def test_a_dead_kept_alive_socket_is_retried_once_on_a_new_one(server):
    srv = server([ok(b"first"), None, ok(b"again")])  # the 2nd request finds its connection closed
    client = HttpClient(f"http://127.0.0.1:{srv.port}")
    assert client.post("/", b"").read() == b"first"
    assert client.post("/", b"").read() == b"again"
    assert [n for n, _, _ in srv.requests] == [1, 1, 2]
    fresh = server([None])
    with pytest.raises(TransientError, match="closed the connection"):  # a new connection is not retried
        HttpClient(f"http://127.0.0.1:{fresh.port}").post("/", b"")


def test_a_body_cut_short_reads_as_http_client_read_it(server):
    """A chunked body read whole is an error; a sized one ends short (its JSON then fails to parse); lines end
    where the connection did (a stream cut by a cancellation keeps what came)."""
    cut_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n10\r\nshort"
    srv = server([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly this", cut_chunk,
                  cut_chunk.replace(b"short", b"data: 1\ndata: 2"), cut_chunk.replace(b"10\r\nshort", b"8\r\ndata: 1\n\r\n")])
    client = HttpClient(f"http://127.0.0.1:{srv.port}")
    assert client.post("/", b"").read() == b"only this"
    with pytest.raises(HTTPError, match="cut off"):
        client.post("/", b"").read()
    assert list(client.post("/", b"").iter_lines()) == ["data: 1", "data: 2"]  # inside a chunk
    assert list(client.post("/", b"").iter_lines()) == ["data: 1"]  # between chunks


def test_through_an_http_proxy_the_target_is_absolute_and_host_is_the_origin(server):
    proxy = server([ok(b"via proxy")])
    client = HttpClient("http://api.example:8000/v1", proxy=Proxy(f"http://127.0.0.1:{proxy.port}"))
    assert client.post("/chat", b"{}").read() == b"via proxy"
    head = proxy.requests[0][1]
    assert head.startswith("POST http://api.example:8000/v1/chat HTTP/1.1\r\n") and "Host: api.example:8000\r\n" in head


def test_a_connect_tunnel_carries_the_request_and_a_refusal_is_an_error(server):
    tunnel = server([b"HTTP/1.1 200 Connection established\r\n\r\n", ok(b"inside")])
    conn = Connection("127.0.0.1", tunnel.port, host_header="api.example", connect_timeout=5, timeout=5,
                      tunnel=("api.example", 443))
    conn.request("POST", "/v1/chat", b"{}", {"Content-Length": "2"})
    assert conn.getresponse().read() == b"inside"
    assert tunnel.requests[0][1].startswith("CONNECT api.example:443 HTTP/1.1\r\n")
    assert tunnel.requests[1][1].startswith("POST /v1/chat HTTP/1.1\r\nHost: api.example\r\n")
    conn.close()
    refused = server([b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"])
    with pytest.raises(OSError, match="407"):
        Connection("127.0.0.1", refused.port, host_header="x", connect_timeout=5, timeout=5,
                   tunnel=("api.example", 443)).connect()


def test_close_from_another_thread_wakes_a_blocked_read_at_once():
    """A server that never answers: closing the connection (what a shutting-down `hermes api` does for an
    agent whose turn is waiting on the model) returns at once and the reader gets an error, not a hang."""
    import time

    with socket.create_server(("127.0.0.1", 0)) as srv:
        conn = Connection("127.0.0.1", srv.getsockname()[1], host_header="x", connect_timeout=5, timeout=60)
        conn.request("POST", "/v1/chat/completions", b"{}", {"Content-Length": "2"})
        peer, _ = srv.accept()
        box: dict = {}

        def read() -> None:
            try:
                box["resp"] = conn.getresponse()
            except Exception as exc:  # noqa: BLE001 - what the reader sees is the assertion
                box["error"] = exc

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.3)
        started = time.monotonic()
        conn.close()
        reader.join(5)
        peer.close()
        assert time.monotonic() - started < 2 and not reader.is_alive()
        assert "error" in box, box


def _waiting_request(client: HttpClient) -> tuple[threading.Thread, dict]:
    """A request on its own thread (as an auxiliary summary): box gets its body or its error."""
    box: dict = {}

    def run() -> None:
        try:
            resp = client.post("/chat", b"slow")
            box["body"] = resp.read()
            resp.finish()
        except Exception as exc:  # noqa: BLE001 - what the caller sees is the assertion
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    return worker, box


def _wait_for(cond, seconds: float = 5.0) -> None:
    import time

    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    assert cond()


def test_a_request_never_queues_behind_a_response_another_thread_still_waits_for(server):
    """A summary abandoned after its timeout (auxiliary.compression.timeout) keeps waiting on its thread; the next
    call on the same client goes out on another connection at once, instead of behind that answer (where it
    timed out too, and every later one after it)."""
    import time

    answer = threading.Event()
    srv = server([(answer, ok(b"late")), ok(b"second"), ok(b"third")])
    client = HttpClient(f"http://127.0.0.1:{srv.port}", timeout=10)
    worker, box = _waiting_request(client)
    _wait_for(lambda: len(srv.requests) == 1)
    started = time.monotonic()
    assert client.post("/chat", b"next").read() == b"second"
    assert time.monotonic() - started < 2
    answer.set()
    worker.join(5)
    assert box == {"body": b"late"}
    assert client.post("/chat", b"again").read() == b"third"  # on a kept-alive connection: no third one
    assert [n for n, _, _ in srv.requests] == [1, 2, 2]


def test_closing_the_client_wakes_a_request_waiting_on_a_silent_model(server):
    """What a SIGTERM'd `hermes api` does for a turn waiting on the model: the client's close shuts the in-flight
    socket down, so the waiting thread ends at once with an error instead of hanging until the model answers."""
    import time

    srv = server([(threading.Event(), ok(b"never"))])
    client = HttpClient(f"http://127.0.0.1:{srv.port}", timeout=60)
    worker, box = _waiting_request(client)
    _wait_for(lambda: len(srv.requests) == 1)
    time.sleep(0.1)
    started = time.monotonic()
    client.close()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - started < 2
    assert isinstance(box.get("error"), TransientError), box
