"""Issue 19, red-team round 3 (a35): the unconfined file tools answer in bounded time whatever the model
names: a FIFO and a socket in the workspace, devices, /proc/kmsg (a procfs "regular" file that blocks),
search_files on a FIFO. Through the real `hermes chat -q`, HOME outside /tmp, the scripted model."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers import model_config, run_hermes


def _call(name: str, **args) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def test_special_files_are_refused_at_once(scripted, hermes_home, outside_dir):
    home = outside_dir / "home"
    work = home / "proj"
    work.mkdir(parents=True)
    model_config(hermes_home, scripted.url)
    prep = "mkfifo pipe.txt; python3 -c \"import socket;s=socket.socket(socket.AF_UNIX);s.bind('sock.txt')\""
    scripted.add(_call("terminal", command=prep),
                 *[_call("read_file", path=p) for p in ("/proc/kmsg", "pipe.txt", "sock.txt", "/dev/zero",
                                                        "/dev/tty", "/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled")],
                 _call("search_files", pattern="x", path="pipe.txt"),
                 _call("search_files", pattern="x", path="."),
                 {"content": "done"})
    t0 = time.monotonic()
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, cwd=str(work), timeout=90,
                     env={"HOME": str(home)})
    took = time.monotonic() - t0
    assert out.returncode == 0, out.stderr
    assert took < 40, took
    tools = [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tools) == 10
    for res in tools[1:9]:
        assert "error" in res, res
    assert "kernel procfs file" in tools[1]["error"] and "kernel procfs file" in tools[6]["error"]
    assert "kernel sysfs file" in tools[7]["error"]
    for res in tools[2:6]:
        assert "not a regular file" in res["error"], res
    assert "not a regular file or directory" in tools[8]["error"], tools[8]
    assert "error" not in tools[9] and "no matches" in tools[9]["note"], tools[9]  # the FIFO inside is skipped
    assert Path(work / "pipe.txt").is_fifo()


def test_a_file_tool_that_blocks_answers_at_its_deadline(tmp_path):
    """The backstop for what no check foresees (a hung mount): a real blocking open of a FIFO."""
    import os

    from hermes_agent.tools.builtin.files import bounded

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def read_file(args: dict, **kw: object) -> str:
        with open(args["path"], "rb") as fh:
            return fh.read().decode()

    t0 = time.monotonic()
    out = json.loads(bounded(read_file, 0.5)({"path": str(fifo)}))
    assert time.monotonic() - t0 < 3
    assert "did not finish within 0.5 s" in out["error"]
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the stuck worker go
    assert json.loads(bounded(lambda args, **kw: json.dumps({"ok": args["x"]}), 5)({"x": 1})) == {"ok": 1}
