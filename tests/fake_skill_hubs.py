"""One loopback HTTP server faking every Skills Hub source the tests talk to:

/gh        GitHub REST: repos, contents (directory listings paginated 2 per page with Link headers),
           commits?path=, git refs, PUT contents, pulls; repos in `rate_limited` answer 403 + reset.
/wk        a site with /.well-known/skills/index.json (Hermes's format)
/claw      ClawHub API v1 (search, skill, download as zip)
/lobe      LobeHub agent index and agent JSON
/sksh      skills.sh search API (hits point at repos on /gh)
/files     plain files (SKILL.md, tar.gz) for direct-URL installs
/slow      sleeps `slow_seconds` before answering anything (a hung registry)

A GitHub repo named in `misbehaving` answers every request badly: "slow_body" (headers at once, the body after
`slow_seconds`), "trickle" (one byte of the body every 0.2 s: no single read ever times out), "hang" (nothing
at all for `slow_seconds`) or "reset" (the connection is reset before any answer).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

PAGE = 2


class HubFakes:
    """State of every fake; tests edit it between CLI runs."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}   # "owner/repo" -> path -> bytes (main branch)
        self.branches: dict[tuple[str, str], dict[str, bytes]] = {}
        self.rate_limited: set[str] = set()
        self.misbehaving: dict[str, str] = {}  # "owner/repo" -> slow_body | trickle | hang | reset
        self.well_known: dict[str, dict[str, bytes]] = {}  # skill name -> files
        self.clawhub: dict[str, tuple[str, dict[str, bytes]]] = {}  # slug -> (summary, files)
        self.lobehub: dict[str, dict] = {}
        self.skills_sh: list[dict] = []
        self.files: dict[str, bytes] = {}
        self.pulls: list[dict] = []
        self.log: list[tuple[str, str, str]] = []  # (method, path, authorization)
        self.slow_seconds = 5.0
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add_dir(self, repo: str, prefix: str, src: Path) -> None:
        for f in sorted(src.rglob("*")):
            if f.is_file():
                self.repos.setdefault(repo, {})[f"{prefix}/{f.relative_to(src).as_posix()}"] = f.read_bytes()

    def revision(self, repo: str) -> str:
        h = hashlib.sha1()
        for k, v in sorted(self.repos.get(repo, {}).items()):
            h.update(k.encode() + v)
        return h.hexdigest()

    def config(self, **over: object) -> str:
        """skills.hub YAML pointing every source at this server."""
        cfg = {"timeout": 3, "github_api": f"{self.url}/gh", "repos": [], "marketplaces": [],
               "well_known": [f"{self.url}/wk"], "clawhub_url": f"{self.url}/claw/api/v1",
               "lobehub_url": f"{self.url}/lobe", "skills_sh_url": f"{self.url}/sksh", **over}
        return "skills:\n  hub: " + json.dumps(cfg) + "\n"

    def start(self) -> HubFakes:
        fakes = self

        class Handler(_Handler):
            state = fakes

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops SYNs under concurrent searches (a 1 s retransmit)
    daemon_threads = True


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in files.items():
            zf.writestr(k, v)
    return buf.getvalue()


class _Handler(BaseHTTPRequestHandler):
    state: HubFakes

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: object, headers: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on a slow answer, as it should

    def do_GET(self) -> None:  # noqa: N802
        self._route("GET", None)

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST", self._body())

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT", self._body())

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def _route(self, method: str, body: dict | None) -> None:
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        self.state.log.append((method, u.path, self.headers.get("Authorization", "")))
        first, _, rest = u.path.lstrip("/").partition("/")
        if first == "slow":
            time.sleep(self.state.slow_seconds)
            return self._send(200, {"skills": [], "items": [], "agents": []})
        handler = {"gh": self._github, "wk": self._well_known, "claw": self._clawhub, "lobe": self._lobehub,
                   "sksh": self._skills_sh, "files": self._files}.get(first)
        if handler is None:
            return self._send(404, {"message": "Not Found"})
        return handler(method, rest, q, body)

    def _files(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        data = self.state.files.get(rest)
        self._send(200, data) if data is not None else self._send(404, b"not found")

    def _well_known(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        rest = rest.removeprefix(".well-known/skills/")
        if rest == "index.json":
            return self._send(200, {"skills": [
                {"name": n, "description": f"{n} from the well-known site", "files": sorted(f)}
                for n, f in self.state.well_known.items()]})
        name, _, rel = rest.partition("/")
        data = self.state.well_known.get(name, {}).get(rel)
        self._send(200, data) if data is not None else self._send(404, b"nope")

    def _clawhub(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        rest = rest.removeprefix("api/v1/")
        claw = self.state.clawhub
        if rest == "skills":
            words = q.get("search", "").lower().split()
            items = [{"slug": s, "displayName": s, "summary": d} for s, (d, _) in claw.items()
                     if all(w in f"{s} {d}".lower() for w in words)]
            return self._send(200, {"items": items})
        if rest.startswith("skills/") and rest[7:] in claw:
            slug = rest[7:]
            return self._send(200, {"skill": {"slug": slug, "displayName": slug, "summary": claw[slug][0]},
                                    "latestVersion": {"version": "1.0.0"}})
        if rest == "download" and q.get("slug") in claw:
            return self._send(200, _zip(claw[q["slug"]][1]), {"Content-Type": "application/zip"})
        self._send(404, {"message": "not found"})

    def _lobehub(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        if rest == "index.json":
            return self._send(200, {"agents": [{"identifier": k, "meta": v["meta"]} for k, v in self.state.lobehub.items()]})
        agent = self.state.lobehub.get(rest.removesuffix(".json"))
        self._send(200, {"identifier": rest.removesuffix(".json"), **agent}) if agent else self._send(404, {})

    def _skills_sh(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        words = q.get("q", "").lower().split()
        hits = [s for s in self.state.skills_sh if all(w in s["id"].lower() for w in words)]
        self._send(200, {"skills": hits})

    def _github(self, method: str, rest: str, q: dict, body: dict | None) -> None:
        parts = rest.split("/")
        if parts[0] != "repos" or len(parts) < 3:
            return self._send(404, {"message": "Not Found"})
        repo, tail = f"{parts[1]}/{parts[2]}", parts[3:]
        if repo in self.state.misbehaving:
            return self._misbehave(self.state.misbehaving[repo])
        if repo in self.state.rate_limited:
            return self._send(403, {"message": "API rate limit exceeded for 127.0.0.1."},
                              {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 1800)})
        if repo not in self.state.repos:
            return self._send(404, {"message": "Not Found"})
        if not tail:
            return self._send(200, {"full_name": repo, "default_branch": "main"})
        kind = tail[0]
        if kind == "contents":
            return self._contents(method, repo, "/".join(tail[1:]), q, body)
        if kind == "commits":
            return self._send(200, [{"sha": self.state.revision(repo)}])
        if kind == "git" and method == "GET":
            return self._send(200, {"object": {"sha": self.state.revision(repo)}})
        if kind == "git" and method == "POST":
            branch = body["ref"].removeprefix("refs/heads/")
            if (repo, branch) in self.state.branches:
                return self._send(422, {"message": "Reference already exists"})
            self.state.branches[(repo, branch)] = dict(self.state.repos[repo])
            return self._send(201, {"ref": body["ref"]})
        if kind == "pulls" and method == "POST":
            number = len(self.state.pulls) + 1
            self.state.pulls.append({"repo": repo, "number": number, **body})
            return self._send(201, {"number": number, "html_url": f"{self.state.url}/{repo}/pull/{number}"})
        self._send(404, {"message": "Not Found"})

    def _misbehave(self, mode: str) -> None:
        import socket
        import struct

        body = json.dumps([{"name": "late-skill", "path": "skills/late-skill", "type": "dir"}]).encode()
        if mode == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if mode == "hang":
            time.sleep(self.state.slow_seconds)
            return self._send(200, body)
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            if mode == "slow_body":
                time.sleep(self.state.slow_seconds)
                self.wfile.write(body)
                return
            for i in range(len(body)):  # trickle
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _contents(self, method: str, repo: str, path: str, q: dict, body: dict | None) -> None:
        if method == "PUT":
            branch = self.state.branches[(repo, body["branch"])]
            branch[path] = base64.b64decode(body["content"])
            return self._send(201, {"content": {"path": path}})
        files = self.state.branches.get((repo, q["ref"])) if q.get("ref") else self.state.repos[repo]
        if files is None:
            return self._send(404, {"message": "No commit found for the ref"})
        if path in files:
            return self._send(200, {"type": "file", "name": path.rsplit("/", 1)[-1], "path": path,
                                    "encoding": "base64", "content": base64.b64encode(files[path]).decode(),
                                    "sha": hashlib.sha1(files[path]).hexdigest()})
        prefix = f"{path}/" if path else ""
        names: dict[str, str] = {}
        for p in files:
            if p.startswith(prefix):
                head, sep, _ = p[len(prefix):].partition("/")
                names[head] = "dir" if sep else "file"
        if not names:
            return self._send(404, {"message": "Not Found"})
        entries = [{"name": n, "path": f"{prefix}{n}", "type": t} for n, t in sorted(names.items())]
        page = int(q.get("page", 1))
        chunk = entries[(page - 1) * PAGE: page * PAGE]
        headers = {}
        if page * PAGE < len(entries):
            base = f"{self.state.url}/gh/repos/{repo}/contents/{path}"
            headers["Link"] = f'<{base}?per_page={PAGE}&page={page + 1}>; rel="next"'
        self._send(200, chunk, headers)
