"""tools/mcp/errlog.py: a server's stderr stored terminal-safe, capped, never through a symlink."""

from __future__ import annotations

import os
import subprocess
import sys

from hermes_agent.tools.mcp import errlog
from hermes_agent.tools.mcp.errlog import StderrRelay


def _server(relay: StderrRelay, code: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=relay.fd)
    relay.close_writer()
    proc.wait(timeout=30)
    relay.wait(5)


def test_escapes_are_stored_as_text_and_a_split_crlf_stays_one_newline(tmp_path):
    log = tmp_path / "logs" / "mcp" / "s.log"
    relay = StderrRelay(log)
    _server(relay, "import sys,time; e=sys.stderr.buffer; e.write(b'a\\x1b]52;c;eA==\\x07b\\r'); e.flush();"
                   "time.sleep(0.2); e.write(b'\\n\\xe6\\xbc'); e.flush(); time.sleep(0.2); e.write(b'\\xa2 ok\\n')")
    assert log.read_bytes() == "a^[]52;c;eA==^Gb\n漢 ok\n".encode()
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_output_beyond_the_cap_is_drained_and_dropped_with_one_note(tmp_path, monkeypatch):
    monkeypatch.setattr(errlog, "MAX_BYTES", 1000)
    log = tmp_path / "s.log"
    relay = StderrRelay(log)
    _server(relay, "import sys; sys.stderr.write('x' * 200000)")  # more than a pipe holds: must not block
    data = log.read_text()
    assert len(data) < 1200 and data.count("further output dropped") == 1


def test_a_symlinked_log_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    log = tmp_path / "s.log"
    log.symlink_to(target)
    relay = StderrRelay(log)
    _server(relay, "import sys; sys.stderr.write('noise\\n')")
    assert target.read_text() == "keep\n" and os.path.islink(log)
