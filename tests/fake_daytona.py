"""A local fake of the Daytona HTTP API: the REST endpoints the Daytona Python SDK calls to create,
get and delete a sandbox, and the toolbox endpoints for process execute and bulk file
upload/download. A "sandbox" is a directory on this machine (its HOME and working directory);
commands run there with `sh -c`, as the toolbox daemon runs them. Bearer-key checked."""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import subprocess
import tempfile
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.helpers import end_fake_box


class FakeDaytona:
    """Start with `start()`; `url` is the API URL for DAYTONA_API_URL; `sandboxes` the live ones."""

    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.sandboxes: dict[str, dict] = {}
        self.created: list[dict] = []
        self.deleted: list[str] = []
        self.execs = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api"

    def start(self) -> FakeDaytona:
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
        for box in self.sandboxes.values():
            end_fake_box(box["root"], box.get("commands", []))

    def dto(self, box: dict) -> dict:
        return {"id": box["id"], "organizationId": "org", "name": box["name"], "user": "daytona", "env": {},
                "labels": box["labels"], "public": False, "networkBlockAll": False, "kvm": False,
                "target": "local", "cpu": box["cpu"], "gpu": 0, "memory": box["memory"], "disk": box["disk"],
                "state": box["state"], "toolboxProxyUrl": self.url.removesuffix("/api") + "/toolbox"}


class _Handler(BaseHTTPRequestHandler):
    state: FakeDaytona

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, code: int, body: dict | bytes, ctype: str = "application/json") -> None:
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.state.api_key}":
            return True
        self._send(401, {"statusCode": 401, "message": "Invalid API key", "error": "Unauthorized"})
        return False

    def _box(self, box_id: str) -> dict | None:
        box = self.state.sandboxes.get(box_id)
        if box is None:
            self._send(404, {"statusCode": 404, "message": f"Sandbox {box_id} not found"})
        return box

    def do_GET(self) -> None:
        parts = self.path.split("?")[0].strip("/").split("/")
        if not self._authorized():
            return
        if parts[:2] == ["api", "sandbox"] and len(parts) == 3 and (box := self._box(parts[2])):
            return self._send(200, self.state.dto(box))
        self._send(404, {"statusCode": 404, "message": "not found"})

    def do_DELETE(self) -> None:
        parts = self.path.strip("/").split("/")
        if not self._authorized():
            return
        if parts[:2] == ["api", "sandbox"] and len(parts) == 3 and (box := self._box(parts[2])):
            box["state"] = "destroyed"
            self.state.sandboxes.pop(box["id"], None)
            self.state.deleted.append(box["id"])
            end_fake_box(box["root"], box.get("commands", []))
            return self._send(200, self.state.dto(box))
        self._send(404, {"statusCode": 404, "message": "not found"})

    def do_POST(self) -> None:
        parts = self.path.split("?")[0].strip("/").split("/")
        if not self._authorized():
            return
        if parts == ["api", "sandbox"]:
            return self._create(json.loads(self._body() or b"{}"))
        if parts[0] == "toolbox" and len(parts) >= 3 and (box := self._box(parts[1])):
            route = "/".join(parts[2:])
            handler = {"process/execute": self._execute, "files/bulk-upload": self._upload,
                       "files/bulk-download": self._download}.get(route)
            if handler:
                return handler(box)
        self._send(404, {"statusCode": 404, "message": "not found"})

    def _create(self, req: dict) -> None:
        box_id = uuid.uuid4().hex
        root = tempfile.mkdtemp(prefix="fake-daytona-")
        box = {"id": box_id, "name": req.get("name") or box_id, "labels": req.get("labels") or {},
               "cpu": req.get("cpu") or 1, "memory": req.get("memory") or 1, "disk": req.get("disk") or 1,
               "state": "started", "root": root, "request": req}
        self.state.sandboxes[box_id] = box
        self.state.created.append(req)
        self._send(200, self.state.dto(box))

    def _execute(self, box: dict) -> None:
        req = json.loads(self._body())
        self.state.execs += 1
        box.setdefault("commands", []).append(str(req.get("command", "")))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": box["root"], "LANG": "C.UTF-8",
               **(req.get("envs") or {})}
        proc = subprocess.Popen(["sh", "-c", req["command"]], cwd=req.get("cwd") or box["root"], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=req.get("timeout") or 10)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            code = -1
        self._send(200, {"exitCode": code, "result": out.decode("utf-8", "replace")})

    def _upload(self, box: dict) -> None:
        raw = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + self._body()
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
        paths: dict[str, str] = {}
        blobs: dict[str, bytes] = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True) or b""
            if name.endswith(".path"):
                paths[name[:-5]] = payload.decode()
            elif name.endswith(".file"):
                blobs[name[:-5]] = payload
        for key, path in paths.items():
            try:
                with open(path, "wb") as fh:  # like the daemon: the parent must exist
                    fh.write(blobs.get(key, b""))
            except OSError as exc:
                return self._send(400, {"statusCode": 400, "message": str(exc)})
        self._send(200, b"", "text/plain")

    def _download(self, box: dict) -> None:
        paths = json.loads(self._body())["paths"]
        boundary = uuid.uuid4().hex
        chunks: list[bytes] = []
        for path in paths:
            try:
                with open(path, "rb") as fh:
                    name, data, ctype = "file", fh.read(), "application/octet-stream"
            except OSError as exc:
                name, data, ctype = "error", json.dumps({"message": str(exc)}).encode(), "application/json"
            chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{path}"\r\n'
                          f"Content-Type: {ctype}\r\n\r\n".encode() + data + b"\r\n")
        chunks.append(f"--{boundary}--\r\n".encode())
        self._send(200, b"".join(chunks), f"multipart/form-data; boundary={boundary}")
