"""`hermes api` with `a2a.enabled`, over loopback HTTP with the scripted model behind it: the v0.3 dialect in
v0.3 shapes (raw JSON-RPC, and a2a-sdk 0.3's own client when a scratch venv holds it), tasks that outlive a
restart (one cut off by it is failed with the reason), ListTasks / tasks/list with paging, and push
notifications to a real HTTP receiver (token, retries, no redirects, http(s) only)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes, venv_program_skip
from tests.integration.test_a2a_server import KEY, _serve
from tests.integration.test_mcp_confinement import MECHANISMS

pytest.importorskip("aiohttp")
pytest.importorskip("a2a")
httpx = pytest.importorskip("httpx")
AUTH = {"Authorization": f"Bearer {KEY}"}
# the python of a venv with a2a-sdk 0.3.x (.ci/install-a2a-sdk03.sh)
SDK03_PYTHON = Path(os.environ.get("HERMES_TEST_A2A_SDK03_PYTHON") or "/nonexistent")


@pytest.fixture
def server(scripted, hermes_home):
    proc, url = _serve(scripted, hermes_home, KEY)
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def rpc(url: str, method: str, params: dict, rid: int = 1) -> dict:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return httpx.post(url + "/a2a", json=body, headers=AUTH, timeout=60).json()


def sse(url: str, method: str, params: dict) -> list[dict]:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    with httpx.stream("POST", url + "/a2a", json=body, headers=AUTH, timeout=60) as resp:
        return [json.loads(line[6:]) for line in resp.iter_lines() if line.startswith("data: ")]


def v03_message(text: str, context_id: str = "") -> dict:
    message = {"kind": "message", "messageId": f"m-{time.monotonic_ns()}", "role": "user",
               "parts": [{"kind": "text", "text": text}]}
    return {**message, "contextId": context_id} if context_id else message


def v10_message(text: str, context_id: str = "") -> dict:
    message = {"messageId": f"m-{time.monotonic_ns()}", "role": "ROLE_USER", "parts": [{"text": text}]}
    return {**message, "contextId": context_id} if context_id else message


def test_v03_calls_are_answered_in_v03_shapes(server, scripted):
    scripted.add({"content": "hello in v0.3"}, {"content": "streamed in v0.3 pieces", "chunks": 3},
                 {"content": "old alias still works"})
    sent = rpc(server, "message/send", {"message": v03_message("hi", "ctx-03")})["result"]
    assert sent["kind"] == "task" and sent["status"]["state"] == "completed" and sent["contextId"] == "ctx-03"
    assert sent["artifacts"][0]["parts"] == [{"kind": "text", "text": "hello in v0.3"}]
    got = rpc(server, "tasks/get", {"id": sent["id"]})["result"]
    assert (got["kind"], got["status"]["state"], got["id"]) == ("task", "completed", sent["id"])

    events = sse(server, "message/stream", {"message": v03_message("stream it", "ctx-03")})
    kinds = [e["result"]["kind"] for e in events]
    assert kinds[0] == "task" and "artifact-update" in kinds and kinds[-1] == "status-update", kinds
    assert events[-1]["result"]["status"]["state"] == "completed" and events[-1]["result"]["final"] is True
    assert all(e["id"] == 7 and e["jsonrpc"] == "2.0" for e in events)

    not_cancelable = rpc(server, "tasks/cancel", {"id": sent["id"]})["error"]
    missing = rpc(server, "tasks/get", {"id": "no-such-task"})["error"]
    assert (not_cancelable["code"], missing["code"]) == (-32002, -32001), (not_cancelable, missing)
    # what this server took before: a v0.3 method name with a v1.0 payload, answered as v1.0
    old = rpc(server, "message/send", {"message": v10_message("alias")})["result"]
    assert old["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    card = httpx.get(server + "/.well-known/agent-card.json", headers=AUTH, timeout=10).json()
    assert card["url"] == server + "/a2a" and card["protocolVersion"] == "0.3"  # what a v0.3 client reads
    assert card["capabilities"]["pushNotifications"] is True
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0", "0.3"}


CLIENT03 = r'''
import asyncio, json, sys, uuid
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart

async def main(url, key):
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        out = {"card_url": card.url}
        for streaming in (True, False):
            client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
            msg = Message(role=Role.user, message_id=uuid.uuid4().hex, context_id="ctx-sdk03",
                          parts=[Part(root=TextPart(text=f"streaming={streaming}"))])
            events = [e async for e in client.send_message(msg)]
            task = events[-1][0]
            out[f"stream_{streaming}"] = {"state": task.status.state.value, "kind": task.kind,
                                          "text": task.artifacts[0].parts[0].root.text, "events": len(events)}
        from a2a.types import TaskQueryParams
        fetched = await client.get_task(TaskQueryParams(id=task.id))
        out["fetched"] = {"state": fetched.status.state.value, "context": fetched.context_id}
        from a2a.types import (GetTaskPushNotificationConfigParams, PushNotificationConfig,
                               TaskPushNotificationConfig)
        hook = PushNotificationConfig(id="cb-1", url="http://127.0.0.1:9/hook", token="t-03")
        await client.set_task_callback(TaskPushNotificationConfig(task_id=task.id, push_notification_config=hook))
        got = await client.get_task_callback(GetTaskPushNotificationConfigParams(id=task.id,
                                                                                push_notification_config_id="cb-1"))
        out["callback"] = [got.task_id == task.id, got.push_notification_config.url, got.push_notification_config.token]
    print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2]))
'''


@pytest.mark.skipif(bool(venv_program_skip(SDK03_PYTHON, "HERMES_TEST_A2A_SDK03_PYTHON, .ci/install-a2a-sdk03.sh")),
                    reason=f"the a2a-sdk 0.3 client: "
                    f"{venv_program_skip(SDK03_PYTHON, 'HERMES_TEST_A2A_SDK03_PYTHON, .ci/install-a2a-sdk03.sh')}")
def test_the_a2a_sdk_03_client_talks_to_us(server, scripted, tmp_path):
    scripted.add({"content": "answer one", "chunks": 3}, {"content": "answer two"})
    script = tmp_path / "client03.py"
    script.write_text(CLIENT03)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(SDK03_PYTHON), str(script), server, KEY], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["card_url"] == server + "/a2a"
    assert got["stream_True"]["state"] == "completed" and got["stream_True"]["text"] == "answer one"
    assert got["stream_False"] == {"state": "completed", "kind": "task", "text": "answer two", "events": 1}
    assert got["fetched"] == {"state": "completed", "context": "ctx-sdk03"}
    assert got["callback"] == [True, "http://127.0.0.1:9/hook", "t-03"]


@pytest.mark.parametrize("stop", ["kill", "terminate"])
def test_tasks_outlive_a_restart_and_one_cut_off_is_failed_with_the_reason(scripted, hermes_home, stop, receiver):
    scripted.add({"content": "finished before the restart"}, {"content": "never seen", "delay": 60})
    proc, url = _serve(scripted, hermes_home, KEY)
    try:
        done = rpc(url, "SendMessage", {"message": v10_message("quick", "ctx-r")})["result"]["task"]
        running = rpc(url, "SendMessage", {"message": v10_message("slow", "ctx-r"), "configuration": {
            "returnImmediately": True, "taskPushNotificationConfig": {"url": receiver.url + "/r"}}})["result"]["task"]
        assert running["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        deadline = time.monotonic() + 20
        while len(scripted.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        started = time.monotonic()
        getattr(proc, stop)()  # kill: a crash, nothing gets to tidy up; terminate: a stop that does not wait
        proc.wait(timeout=30)  # for the 60 s turn
    assert time.monotonic() - started < 15
    proc, url = _serve(scripted, hermes_home, KEY)
    try:
        kept = rpc(url, "GetTask", {"id": done["id"]})["result"]
        assert kept["status"]["state"] == "TASK_STATE_COMPLETED"
        assert kept["artifacts"][0]["parts"][0]["text"] == "finished before the restart"
        cut = rpc(url, "GetTask", {"id": running["id"]})["result"]
        assert cut["status"]["state"] == "TASK_STATE_FAILED", cut
        assert "Hermes stopped while this task was running" in cut["status"]["message"]["parts"][0]["text"]
        old = rpc(url, "tasks/get", {"id": running["id"]})["result"]  # the same, to a v0.3 client
        assert old["status"]["state"] == "failed" and "Send the message again" in json.dumps(old)
        deadline = time.monotonic() + 20  # its push receiver is told
        while "TASK_STATE_FAILED" not in json.dumps(receiver.posts) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert receiver.posts[-1]["body"]["task"]["status"]["state"] == "TASK_STATE_FAILED"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert (hermes_home / "api_server" / "a2a_tasks.db").stat().st_mode & 0o077 == 0  # owner-only


def test_tasks_are_listed_newest_first_in_pages(server, scripted):
    scripted.default = lambda body: {"content": "ok"}
    ids = [rpc(server, "SendMessage", {"message": v10_message(f"n{i}", "ctx-a" if i % 2 else "ctx-b")})
           ["result"]["task"]["id"] for i in range(5)]
    first = rpc(server, "ListTasks", {"pageSize": 2})["result"]
    assert first["totalSize"] == 5 and first["pageSize"] == 2 and len(first["tasks"]) == 2 and first["nextPageToken"]
    assert "artifacts" not in first["tasks"][0]  # only with includeArtifacts
    seen, token = [t["id"] for t in first["tasks"]], first["nextPageToken"]
    while token:
        page = rpc(server, "ListTasks", {"pageSize": 2, "pageToken": token})["result"]
        seen += [t["id"] for t in page["tasks"]]
        token = page["nextPageToken"]
    assert seen == ids[::-1]
    only_a = rpc(server, "ListTasks", {"contextId": "ctx-a", "includeArtifacts": True})["result"]
    assert [t["id"] for t in only_a["tasks"]] == [ids[3], ids[1]] and only_a["tasks"][0]["artifacts"]
    assert rpc(server, "ListTasks", {"status": "TASK_STATE_FAILED"})["result"]["totalSize"] == 0
    old = rpc(server, "tasks/list", {"pageSize": 3, "status": "completed"})["result"]
    assert [t["kind"] for t in old["tasks"]] == ["task"] * 3 and old["totalSize"] == 5 and old["nextPageToken"]
    bad = [rpc(server, "ListTasks", params)["error"] for params in ({"pageToken": "not-a-token"}, {"pageSize": 500})]
    assert [e["code"] for e in bad] == [-32602, -32602], bad
    assert "Traceback" not in json.dumps(bad)


class Receiver:
    """A real HTTP server on loopback recording every POST; /flaky answers 500 twice, /down always 503,
    /redirect a 302 to file:."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        self.flaky_left = 2
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
                outer.posts.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", "file:///etc/passwd")
                elif self.path == "/flaky" and outer.flaky_left > 0:
                    outer.flaky_left -= 1
                    self.send_response(500)
                elif self.path == "/down":
                    self.send_response(503)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for(self, path: str, count: int, timeout: float = 20) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = [p for p in self.posts if p["path"] == path]
            if len(got) >= count:
                return got
            time.sleep(0.05)
        return [p for p in self.posts if p["path"] == path]


@pytest.fixture
def receiver():
    recv = Receiver()
    yield recv
    recv.httpd.shutdown()


def test_push_notifications_reach_the_clients_url_with_its_token(server, scripted, receiver):
    scripted.add({"content": "pushed answer", "chunks": 4}, {"content": "second"}, {"content": "third"})
    config = {"url": receiver.url + "/hook", "token": "tok-123", "id": "cfg-1"}
    sent = rpc(server, "SendMessage", {"message": v10_message("push me"),
                                       "configuration": {"taskPushNotificationConfig": config}})["result"]["task"]
    posts = receiver.wait_for("/hook", 1)
    deadline = time.monotonic() + 20
    while not any("TASK_STATE_COMPLETED" in json.dumps(p["body"]) for p in posts) and time.monotonic() < deadline:
        time.sleep(0.05)
        posts = receiver.wait_for("/hook", 1)
    assert all(p["headers"]["X-A2A-Notification-Token"] == "tok-123" for p in posts)
    final = posts[-1]["body"]
    assert final["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED" and final["statusUpdate"]["taskId"] == \
        sent["id"]
    pushed_text = [p["body"]["artifactUpdate"]["artifact"]["parts"][0]["text"] for p in posts if
                   "artifactUpdate" in p["body"]]
    assert pushed_text == ["pushed answer"]  # the whole answer once, not the streamed pieces

    listed = rpc(server, "ListTaskPushNotificationConfigs", {"taskId": sent["id"]})["result"]
    assert [(c["id"], c["url"], c["token"]) for c in listed["configs"]] == [("cfg-1", config["url"], "tok-123")]
    got = rpc(server, "GetTaskPushNotificationConfig", {"taskId": sent["id"], "id": "cfg-1"})["result"]
    assert got["url"] == config["url"]
    assert rpc(server, "DeleteTaskPushNotificationConfig", {"taskId": sent["id"], "id": "cfg-1"})["result"] is None
    assert rpc(server, "ListTaskPushNotificationConfigs", {"taskId": sent["id"]})["result"].get("configs", []) == []

    for url in ("file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1:70/", "http://"):
        refused = rpc(server, "CreateTaskPushNotificationConfig", {"taskId": sent["id"], "url": url})["error"]
        assert refused["code"] == -32602 and "push notification URL" in refused["message"], refused
    refused = rpc(server, "message/send", {"message": v03_message("x"), "configuration": {
        "pushNotificationConfig": {"url": "file:///etc/shadow"}}})["error"]
    assert "http:// or https://" in refused["message"], refused


def _per_notification(posts: list[dict]) -> list[int]:
    counts: dict[str, int] = {}
    for post in posts:
        key = json.dumps(post["body"], sort_keys=True)
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.values())


def test_push_retries_are_bounded_and_redirects_not_followed(server, scripted, receiver):
    scripted.default = lambda body: {"content": "done"}
    for path in ("/flaky", "/down", "/redirect"):
        task = rpc(server, "SendMessage", {"message": v10_message(path), "configuration": {
            "taskPushNotificationConfig": {"url": receiver.url + path}}})["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"  # a failing receiver never fails the task
    # one task's notifications go out in order, each with its retries (3 attempts, 1.5 s of back-off): wait
    # until nothing new has come for 3 s
    deadline, seen, quiet_since = time.monotonic() + 40, -1, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < 3:
        if len(receiver.posts) != seen:
            seen, quiet_since = len(receiver.posts), time.monotonic()
        time.sleep(0.1)
    flaky, down, redirect = (receiver.wait_for(p, 1) for p in ("/flaky", "/down", "/redirect"))
    assert _per_notification(flaky)[-1] == 3  # 500, 500, then delivered; the others at once
    assert set(_per_notification(down)) == {3}, _per_notification(down)  # each tried 3 times, then given up
    assert set(_per_notification(redirect)) == {1}  # a 3xx is final and not followed
    assert {p["path"] for p in receiver.posts} == {"/flaky", "/down", "/redirect"}


def test_a_v03_push_config_gets_v03_tasks(server, scripted, receiver):
    scripted.add({"content": "for an old client"})
    sent = rpc(server, "message/send", {"message": v03_message("hi"), "configuration": {
        "pushNotificationConfig": {"url": receiver.url + "/old", "token": "t03"}}})["result"]
    posts = receiver.wait_for("/old", 1)
    deadline = time.monotonic() + 20
    while (not posts or posts[-1]["body"]["status"]["state"] != "completed") and time.monotonic() < deadline:
        time.sleep(0.05)
        posts = receiver.wait_for("/old", 1)
    assert posts[-1]["body"]["kind"] == "task" and posts[-1]["body"]["id"] == sent["id"]
    assert posts[-1]["headers"]["X-A2A-Notification-Token"] == "t03"
    listed = rpc(server, "tasks/pushNotificationConfig/list", {"id": sent["id"]})["result"]
    assert listed[0]["taskId"] == sent["id"] and listed[0]["pushNotificationConfig"]["url"] == receiver.url + "/old"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_confined_command_cannot_list_or_push_through_a_keyless_a2a(scripted, hermes_home, tmp_path, mechanism):
    """Without API_SERVER_KEY the peer check (terminal/sandbox/peer.py) still stands in front of every A2A
    call: a command inside the sandbox gets 403, for the v1.0 and the v0.3 dialects alike."""
    proc, url = _serve(scripted, hermes_home, "")
    try:
        scripted.add({"content": "a task the user made"})
        mine = httpx.post(url + "/a2a", timeout=60, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                                           "params": {"message": v10_message("mine")}}).json()
        task_id = mine["result"]["task"]["id"]
        chat_home, project = tmp_path / "chat-home", tmp_path / "project"
        chat_home.mkdir()
        project.mkdir()
        port = url.rsplit(":", 1)[1].split("/")[0]  # granted: the sandbox's own loopback is not the host's
        model_config(chat_home, scripted.url, extra=f"sandbox:\n  mechanism: {mechanism}\n  loopback_ports: [{port}]\n")
        calls = [{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}},
                 {"jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/set", "params": {
                     "taskId": task_id, "pushNotificationConfig": {"url": "http://127.0.0.1:9/steal"}}}]
        command = "; ".join(f"curl -sS --noproxy '*' -w ' CODE=%{{http_code}}\\n' -H 'Content-Type: application/json'"
                            f" -d '{json.dumps(call)}' {url}/a2a" for call in calls)
        scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}, {"content": "done"})
        out = run_hermes("chat", "-q", "list the agent's tasks", home=chat_home, cwd=str(project), timeout=120)
        assert out.returncode == 0, out.stderr
        output = json.loads(scripted.requests[-1]["body"]["messages"][-1]["content"])["output"]
        assert output.count("CODE=403") == 2 and "refused this client" in output, output
        assert task_id not in output
        configs = httpx.post(url + "/a2a", timeout=60, json={"jsonrpc": "2.0", "id": 3, "method":
                             "ListTaskPushNotificationConfigs", "params": {"taskId": task_id}}).json()["result"]
        assert configs.get("configs", []) == []  # nothing was registered
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_in_team_mode_each_person_has_their_own_tasks_and_role(scripted, hermes_home, tmp_path):
    """`X-Hermes-User` with that person's key: their A2A turns run with their role's tools, and their tasks
    (get, list, push configs) are theirs alone."""
    from tests.integration.test_gateway_team import _brain

    alice, bob = "alice-key-0123456789", "bob-key-0123456789ab"
    scripted.default = _brain
    model_config(hermes_home, scripted.url,
                 f"a2a:\n  enabled: true\nteam:\n  people:\n    'api:alice': guest\n    'api:bob': member\n"
                 f"  workspace_root: {tmp_path / 'team'}\n  api_keys:\n    alice: {alice}\n    bob: {bob}\n")
    from tests.integration.test_a2a_server import _free_port, _start

    port = _free_port()
    proc = _start(hermes_home, port, KEY)
    url = f"http://127.0.0.1:{port}"

    def call(who: str, key: str, method: str, params: dict) -> dict:
        headers = {"Authorization": f"Bearer {key}", "X-Hermes-User": who}
        return httpx.post(url + "/a2a", headers=headers, timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()

    try:
        marker = tmp_path / "alice-was-here"
        sent = call("alice", alice, "SendMessage", {"message": v10_message(f"run touch {marker}")})["result"]["task"]
        assert "Unknown tool: terminal" in json.dumps(sent["artifacts"]) and not marker.exists()  # a guest
        bobs = call("bob", bob, "SendMessage", {"message": v10_message("run echo bob-word")})["result"]["task"]
        assert "bob-word" in json.dumps(bobs["artifacts"])
        assert call("alice", alice, "GetTask", {"id": bobs["id"]})["error"]["code"] == -32001
        assert [t["id"] for t in call("alice", alice, "ListTasks", {})["result"]["tasks"]] == [sent["id"]]
        assert [t["id"] for t in call("bob", bob, "ListTasks", {})["result"]["tasks"]] == [bobs["id"]]
        hook = {"taskId": bobs["id"], "url": "http://127.0.0.1:9/alice"}
        assert call("alice", alice, "CreateTaskPushNotificationConfig", hook)["error"]["code"] == -32001
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_client_can_subscribe_to_a_running_task_again(server, scripted):
    scripted.add({"content": "worth the wait", "delay": 2}, {"content": "old client, same wait", "delay": 2})
    running = rpc(server, "SendMessage", {"message": v10_message("slow"), "configuration": {
        "returnImmediately": True}})["result"]["task"]
    events = sse(server, "SubscribeToTask", {"id": running["id"]})
    assert events[0]["result"]["task"]["id"] == running["id"]
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", events[-1]
    assert "worth the wait" in json.dumps(events)
    again = sse(server, "SubscribeToTask", {"id": running["id"]})  # finished: nothing more to follow
    assert again[-1]["error"]["code"] == -32004 and "terminal state" in again[-1]["error"]["message"]

    old = rpc(server, "message/send", {"message": v03_message("slow too"), "configuration": {"blocking": False}})
    events = sse(server, "tasks/resubscribe", {"id": old["result"]["id"]})
    assert events[-1]["result"]["kind"] == "status-update" and events[-1]["result"]["status"]["state"] == "completed"



def test_a_long_answer_streamed_in_many_pieces_is_stored_in_linear_time(server, scripted):
    answer = "".join(f"line {i} of a long streamed answer\n" for i in range(4000))  # 130 KB, thousands of deltas
    scripted.add({"content": answer})
    started = time.monotonic()
    task = rpc(server, "SendMessage", {"message": v10_message("write it all")})["result"]["task"]
    assert time.monotonic() - started < 10  # each delta stored the whole task again: 100 KB took 46 s
    assert task["artifacts"][0]["parts"][0]["text"] == answer
    assert rpc(server, "GetTask", {"id": task["id"]})["result"]["artifacts"][0]["parts"][0]["text"] == answer


def test_finished_tasks_past_the_retention_age_or_over_the_size_cap_are_pruned_in_the_background(scripted,
                                                                                              hermes_home):
    from tests.integration.test_a2a_server import _free_port, _start

    model_config(hermes_home, scripted.url, "a2a:\n  enabled: true\nsessions:\n  auto_prune_delay: 0\n"
                                            "  a2a_task_retention_days: 30\n  a2a_tasks_max_mb: 1\n")
    big = "artifact text " * 15_000  # a 210 KB answer: 420 KB a task (the artifact and the reply message)
    scripted.add({"content": "an old answer"}, *[{"content": f"answer {i} {big}"} for i in range(4)])
    db = hermes_home / "api_server" / "a2a_tasks.db"

    def serve() -> tuple[subprocess.Popen, str]:
        port = _free_port()
        return _start(hermes_home, port, KEY), f"http://127.0.0.1:{port}"

    proc, url = serve()
    try:
        ids = [rpc(url, "SendMessage", {"message": v10_message(f"q{i}", "ctx-keep")})["result"]["task"]["id"]
               for i in range(5)]
        assert rpc(url, "ListTasks", {})["result"]["totalSize"] == 5  # 1.7 MB of answers: pruned at the next start
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    with sqlite3.connect(db) as c:  # the first task finished 40 days ago
        c.execute("UPDATE a2a_tasks SET ts_ns = ts_ns - ? WHERE id = ?", (40 * 86400 * 10**9, ids[0]))
    before = _disk(db)
    proc, url = serve()
    try:
        deadline = time.monotonic() + 20
        while rpc(url, "ListTasks", {})["result"]["totalSize"] > 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        kept = rpc(url, "ListTasks", {"includeArtifacts": True})["result"]["tasks"]
        # the 40-day-old one by age; then the oldest while over 1 MB: the two newest tasks (840 KB) stay
        assert [t["id"] for t in kept] == [ids[4], ids[3]]
        assert kept[0]["artifacts"][0]["parts"][0]["text"].startswith("answer 3 artifact text")
        gone = rpc(url, "GetTask", {"id": ids[0]})["error"]
        assert gone["code"] == -32001 and "Traceback" not in json.dumps(gone)
        assert rpc(url, "SendMessage", {"message": v10_message("still served", "ctx-keep")})["result"]["task"]
        deadline = time.monotonic() + 20  # the pages the pruned answers held go back to the OS
        while _disk(db) > before - 700_000 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _disk(db) <= before - 700_000, (before, _disk(db))
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _disk(db: Path) -> int:
    """Bytes of the file and its WAL."""
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def test_a_caller_given_its_own_cap_in_team_mode_loses_its_old_tasks_the_others_keep_theirs(scripted, hermes_home,
                                                                                           tmp_path):
    """sessions.a2a_tasks_by_caller: alice's finished tasks are capped at 0.5 MB; bob, with no cap of his own,
    keeps his under the general limits. Pruned by the real `hermes api` in the background."""
    from tests.integration.test_a2a_server import _free_port, _start

    alice, bob = "alice-key-0123456789", "bob-key-0123456789ab"
    model_config(hermes_home, scripted.url,
                 "a2a:\n  enabled: true\nsessions:\n  auto_prune_delay: 0\n"
                 "  a2a_tasks_by_caller:\n    alice: {max_mb: 0.5}\n"
                 f"team:\n  people:\n    'api:alice': member\n    'api:bob': member\n"
                 f"  workspace_root: {tmp_path / 'team'}\n  api_keys:\n    alice: {alice}\n    bob: {bob}\n")
    big = "artifact text " * 15_000  # 420 KB a task (the artifact and the reply message)
    scripted.add(*[{"content": f"answer {i} {big}"} for i in range(5)])

    def serve() -> tuple[subprocess.Popen, str]:
        port = _free_port()
        return _start(hermes_home, port, KEY), f"http://127.0.0.1:{port}"

    def call(url: str, who: str, key: str, method: str, params: dict) -> dict:
        headers = {"Authorization": f"Bearer {key}", "X-Hermes-User": who}
        return httpx.post(url + "/a2a", headers=headers, timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()

    proc, url = serve()
    try:
        alices = [call(url, "alice", alice, "SendMessage", {"message": v10_message(f"a{i}")})["result"]["task"]["id"]
                  for i in range(3)]
        bobs = [call(url, "bob", bob, "SendMessage", {"message": v10_message(f"b{i}")})["result"]["task"]["id"]
                for i in range(2)]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    proc, url = serve()  # pruned at start (auto_prune_delay 0)
    try:
        deadline = time.monotonic() + 20
        while (len(call(url, "alice", alice, "ListTasks", {})["result"]["tasks"]) > 1
               and time.monotonic() < deadline):
            time.sleep(0.2)
        assert [t["id"] for t in call(url, "alice", alice, "ListTasks", {})["result"]["tasks"]] == [alices[2]]
        assert call(url, "alice", alice, "GetTask", {"id": alices[0]})["error"]["code"] == -32001
        assert [t["id"] for t in call(url, "bob", bob, "ListTasks", {})["result"]["tasks"]] == bobs[::-1]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_wrong_per_caller_retention_entry_is_one_line_at_start(scripted, hermes_home):
    model_config(hermes_home, scripted.url, "a2a:\n  enabled: true\nsessions:\n"
                                            "  a2a_tasks_by_caller:\n    alice: {max_mb: lots}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_", "API_"))}
    env.update(HERMES_HOME=str(hermes_home), API_SERVER_PORT="0", API_SERVER_KEY=KEY)
    from tests.integration.test_a2a_server import HERMES

    done = subprocess.run([HERMES, "api"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr + done.stdout
    assert "sessions.a2a_tasks_by_caller.alice.max_mb: expected a number >= 0" in done.stderr + done.stdout
