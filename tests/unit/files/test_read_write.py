"""read_file and write_file as the model sees them, on a real LocalBackend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from hermes_agent.tools.registry import registry

from .conftest import make_ctx

RELEASED_BYTES = {"read_file": 1027, "write_file": 1113, "patch": 1872, "search_files": 1710}


def test_schemas_are_small_and_parallel_safety_is_marked():
    for name, released in RELEASED_BYTES.items():
        entry = registry.get(name)
        assert entry is not None and entry.toolset == "file"
        size = len(json.dumps(entry.definition(), separators=(",", ":"), ensure_ascii=False).encode())
        assert size <= released * 0.56, (name, size)
    assert registry.get("read_file").parallel_safe and registry.get("search_files").parallel_safe
    assert not registry.get("write_file").parallel_safe and not registry.get("patch").parallel_safe


def test_read_pages_with_offset_and_limit(work, call):
    (work / "log.txt").write_text("".join(f"line {i}\n" for i in range(1, 1201)))
    out = call("read_file", path="log.txt", offset=10, limit=5)
    assert out["content"].splitlines() == [f"{i:>5}|line {i}" for i in range(10, 15)]
    assert out["total_lines"] == 1200 and out["lines"] == "10-14"
    assert "continue with offset=15" in out["note"]
    default = call("read_file", path=str(work / "log.txt"))
    assert len(default["content"].splitlines()) == 500 and "offset=501" in default["note"]
    last = call("read_file", path="log.txt", offset=1190)
    assert last["lines"] == "1190-1200" and "note" not in last
    past = call("read_file", path="log.txt", offset=5000)
    assert "past the end" in past["error"] and "1200 lines" in past["error"]


def test_read_keeps_crlf_files_and_counts_lines_like_grep(work, call):
    (work / "win.txt").write_bytes(b"a\r\nb\x0cc\r\n")
    out = call("read_file", path="win.txt")
    assert out["content"] == "    1|a\n    2|b\x0cc" and out["total_lines"] == 2


def test_binary_file_is_refused_by_type_and_size(work, call):
    (work / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    out = call("read_file", path="pic.png")
    assert "PNG image" in out["error"] and "10.0 KB" in out["error"] and "content" not in out
    (work / "blob.dat").write_bytes(b"abc\x00def" * 10)
    assert "binary" in call("read_file", path="blob.dat")["error"]


def test_latin1_text_is_read_not_refused(work, call):
    (work / "old.txt").write_bytes("café crème\n".encode("latin-1"))
    out = call("read_file", path="old.txt")
    assert out["total_lines"] == 1 and out["content"].startswith("    1|caf")


def test_one_gigabyte_sparse_file_is_never_read_whole(work, call):
    sparse = work / "huge.bin"
    subprocess.run(["truncate", "-s", "1G", str(sparse)], check=True)
    started = time.perf_counter()
    out = call("read_file", path="huge.bin")
    assert "binary" in out["error"] and "1.0 GB" in out["error"]
    text = work / "huge.log"
    text.write_text("".join(f"row {i}\n" for i in range(1, 2001)))  # text head, zero-filled tail
    subprocess.run(["truncate", "-s", "1G", str(text)], check=True)
    page = call("read_file", path="huge.log", offset=1998, limit=3)
    assert page["content"].splitlines() == [" 1998|row 1998", " 1999|row 1999", " 2000|row 2000"]
    assert "1.0 GB" in page["note"] and "total_lines" not in page
    assert time.perf_counter() - started < 5


def test_output_is_capped_by_file_read_max_chars(work, store):
    (work / "wide.txt").write_text("".join(f"{i:04d} " + "x" * 45 + "\n" for i in range(200)))
    ctx = make_ctx(work, store, file_read_max_chars=1000)
    out = json.loads(registry.dispatch("read_file", {"path": "wide.txt"}, ctx=ctx))
    assert len(out["content"]) <= 1000 and "capped at 1000 chars" in out["note"]
    shown = len(out["content"].splitlines())
    assert f"offset={shown + 1}" in out["note"]


def test_very_long_lines_are_cut_with_a_marker(work, call):
    (work / "min.js").write_text("a" * 5000 + "\nshort\n")
    out = call("read_file", path="min.js")
    first, second = out["content"].splitlines()
    assert first.endswith("[line truncated: 3000 more chars]") and second == "    2|short"


def test_missing_paths_give_actionable_errors(work, call):
    (work / "config.yaml").write_text("a: 1\n")
    out = call("read_file", path="confg.yaml")
    assert out["error"].startswith("File not found") and str(work / "config.yaml") in out["did_you_mean"]
    nodir = call("read_file", path="no/such/dir/f.txt")
    assert "does not exist" in nodir["error"] and f"nearest existing: {work}" in nodir["error"]
    (work / "pkg").mkdir()
    isdir = call("read_file", path="pkg")
    assert "is a directory" in isdir["error"] and "search_files" in isdir["error"]
    os.mkfifo(work / "pipe")
    fifo = call("read_file", path="pipe")
    assert "not a regular file" in fifo["error"]
    empty = call("read_file", path="")
    assert empty["error"] == "path is required"


def test_write_creates_parents_and_reports_what_it_wrote(work, call):
    out = call("write_file", path="a/b/c.txt", content="one\ntwo\n")
    assert out == {"path": "a/b/c.txt", "bytes_written": 8, "lines": 2, "created": True}
    assert (work / "a/b/c.txt").read_text() == "one\ntwo\n"
    again = call("write_file", path="a/b/c.txt", content="é")
    assert again["created"] is False and again["bytes_written"] == 2 and again["lines"] == 1
    assert not [p for p in (work / "a/b").iterdir() if p.name.startswith(".hermes-")]


def test_write_refuses_directories_and_file_parents(work, call):
    (work / "d").mkdir()
    assert "is a directory" in call("write_file", path="d", content="x")["error"]
    (work / "plain").write_text("keep")
    out = call("write_file", path="plain/inner.txt", content="x")
    assert "plain" in out["error"] and "not a directory" in out["error"].lower()
    assert (work / "plain").read_text() == "keep"
    assert "content is required" in call("write_file", path="x.txt")["error"]


def test_write_checkpoints_the_project_first_so_the_old_text_is_recoverable(work, call, store):
    (work / "pyproject.toml").write_text("[project]\n")
    (work / "src").mkdir()
    (work / "src/app.py").write_text("old = 1\n")
    call("write_file", path="src/app.py", content="new = 2\n")
    checkpoints = store.list(work)
    assert len(checkpoints) == 1 and "write_file" in checkpoints[0].reason
    store.restore(work, checkpoints[0].id)
    assert (work / "src/app.py").read_text() == "old = 1\n"


_PERM_SCRIPT = """
import json, sys
import hermes_agent.tools.builtin.files
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry
b = LocalBackend(cwd=sys.argv[1])
ctx = ToolContext(settings=Settings(), backend_factory=lambda t: b)
print(json.dumps([json.loads(registry.dispatch("read_file", {"path": "secret.txt"}, ctx=ctx)),
                  json.loads(registry.dispatch("write_file", {"path": "locked/x.txt", "content": "x"}, ctx=ctx))]))
"""


def test_permission_denied_is_reported_clearly():
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        open(os.path.join(d, "secret.txt"), "w").write("s")
        os.chmod(os.path.join(d, "secret.txt"), 0o000)
        os.mkdir(os.path.join(d, "locked"), 0o555)
        os.chmod(os.path.join(d, "locked"), 0o555)
        cmd = [sys.executable, "-c", _PERM_SCRIPT, d]
        if os.geteuid() == 0:  # root reads everything: run the tools as nobody
            probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                    sys.executable, "-c", "import hermes_agent"], capture_output=True)
            if probe.returncode != 0:
                pytest.skip("cannot run the package as an unprivileged user here")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        read, write = json.loads(proc.stdout)
    assert read["error"] == f"Permission denied reading {d}/secret.txt"
    assert write["error"] == f"Permission denied writing {d}/locked/x.txt"
