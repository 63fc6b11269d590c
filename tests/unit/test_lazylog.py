"""Logging set up as `logging` loads (hermes_agent/lazylog.py, issue 24 speed15): a run that logs nothing never
imports it (~28 M instructions and 11 regexes on `chat -q`'s path), and what is logged once it loads, by hermes or
by a library that imports `logging` itself, still reaches agent.log, errors.log and the one-line stderr warning."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import sys
    from hermes_agent.cli.logs import setup_logging, warnings_to_stderr
    from hermes_agent.lazylog import get_logger

    setup_logging()
    warnings_to_stderr()
    log = get_logger("hermes_agent.somewhere")
    print("logging loaded before any record:", "logging" in sys.modules)
    if sys.argv[1] == "library":  # a library's own `import logging` and records
        import logging
        logging.getLogger("somelib").warning("the library's warning")
        logging.getLogger("somelib").info("the library's detail")
    else:
        log.warning("hermes's warning")
        log.debug("not recorded at INFO")
""")


def _run(home: Path, who: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    return subprocess.run([sys.executable, "-c", SCRIPT, who], capture_output=True, text=True, env=env, timeout=60)


def test_records_reach_the_logs_and_stderr_after_a_late_import(tmp_path: Path) -> None:
    out = _run(tmp_path, "hermes")
    assert out.returncode == 0, out.stderr
    assert "logging loaded before any record: False" in out.stdout
    assert out.stderr.splitlines() == ["hermes: warning: hermes's warning"]
    assert "WARNING hermes_agent.somewhere: hermes's warning" in (tmp_path / "logs" / "errors.log").read_text()
    assert "not recorded" not in (tmp_path / "logs" / "agent.log").read_text()


def test_a_library_importing_logging_itself_is_set_up_too(tmp_path: Path) -> None:
    out = _run(tmp_path, "library")
    assert out.returncode == 0, out.stderr
    agent_log = (tmp_path / "logs" / "agent.log").read_text()
    assert "WARNING somelib: the library's warning" in agent_log and "INFO somelib: the library's detail" in agent_log
    assert "the library's warning" in (tmp_path / "logs" / "errors.log").read_text()
    assert out.stderr == ""  # not logging's bare last-resort handler on the terminal
