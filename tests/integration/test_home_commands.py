"""`hermes profile`, `-p`, `backup`, `import` and `logs` through the real CLI on a temp home."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import zipfile

from tests.helpers import HERMES


def _run(tmp_path, *args: str, home_env: str | None = None, input: str | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env["HOME"] = str(tmp_path)
    if home_env:
        env["HERMES_HOME"] = home_env
    return subprocess.run([HERMES, *args], capture_output=True, text=True, env=env, timeout=60, input=input)


def test_profiles_create_use_and_pick_per_run(tmp_path):
    root = tmp_path / ".hermes"
    (root).mkdir()
    (root / "config.yaml").write_text("model: {default: main-model}\n")
    out = _run(tmp_path, "profile", "create", "work", "--clone")
    assert out.returncode == 0, out.stderr
    assert (root / "profiles/work/config.yaml").read_text() == "model: {default: main-model}\n"
    assert _run(tmp_path, "-p", "work", "version").stdout.strip().endswith(str(root / "profiles/work"))
    assert _run(tmp_path, "version").stdout.strip().endswith(str(root))
    assert _run(tmp_path, "profile", "use", "work").returncode == 0
    assert (root / "active_profile").read_text().strip() == "work"
    assert _run(tmp_path, "version").stdout.strip().endswith(str(root / "profiles/work"))
    listing = _run(tmp_path, "profile", "list").stdout
    assert "* work" in listing and "  default" in listing
    bad = _run(tmp_path, "-p", "nope", "version")
    assert bad.returncode == 2 and "no profile 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    assert _run(tmp_path, "profile", "create", "../evil").returncode == 2
    assert _run(tmp_path, "profile", "delete", "work", "--yes").returncode == 0
    assert not (root / "profiles/work").exists()
    assert _run(tmp_path, "version").stdout.strip().endswith(str(root))


def test_backup_and_import_round_trip(tmp_path):
    root = tmp_path / ".hermes"
    (root / "memories").mkdir(parents=True)
    (root / "config.yaml").write_text("model: {default: m}\n")
    (root / ".env").write_text("OPENAI_API_KEY=sk-x\n")
    (root / "memories/MEMORY.md").write_text("likes tea")
    (root / "checkpoints").mkdir()
    (root / "checkpoints/big").write_text("x" * 1000)
    db = sqlite3.connect(root / "state.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t(x)")
    db.execute("INSERT INTO t VALUES ('kept')")
    db.commit()  # left open: a live database with a WAL
    out = _run(tmp_path, "backup", "-o", str(tmp_path / "b.zip"))
    db.close()
    assert out.returncode == 0, out.stderr
    assert "this zip holds your keys" in out.stdout  # -o outside the Hermes home: the user is told (rt14 b28)
    names = zipfile.ZipFile(tmp_path / "b.zip").namelist()
    assert {"config.yaml", ".env", "memories/MEMORY.md", "state.db"} <= set(names)
    assert not any(n.startswith("checkpoints/") or n.endswith("-wal") for n in names)
    restored = tmp_path / "new"
    restored.mkdir()
    out = _run(restored, "import", str(tmp_path / "b.zip"))
    assert out.returncode == 0, out.stderr
    home = restored / ".hermes"
    assert (home / "memories/MEMORY.md").read_text() == "likes tea"
    assert oct((home / ".env").stat().st_mode & 0o777) == "0o600"
    assert sqlite3.connect(home / "state.db").execute("SELECT x FROM t").fetchall() == [("kept",)]
    again = _run(restored, "import", str(tmp_path / "b.zip"))
    assert again.returncode == 1 and "--force" in again.stderr


def test_import_refuses_entries_outside_the_home(tmp_path):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("config.yaml", "model: {default: m}\n")
        zf.writestr("../outside.txt", "pwned")
        zf.writestr("/abs.txt", "pwned")
    out = _run(tmp_path, "import", str(evil))
    assert out.returncode == 0
    assert "outside the Hermes home" in out.stderr
    assert not (tmp_path / "outside.txt").exists() and (tmp_path / ".hermes/config.yaml").exists()


def test_logs_filters_by_level_and_count(tmp_path):
    logs = tmp_path / ".hermes/logs"
    logs.mkdir(parents=True)
    (logs / "agent.log").write_text("".join(
        f"2026-01-01 10:00:0{i} {'WARNING' if i % 2 else 'INFO'} hermes_agent.tools: line {i}\n" for i in range(6)))
    assert _run(tmp_path, "logs", "-n", "2").stdout.splitlines()[-1].endswith("line 5")
    warned = _run(tmp_path, "logs", "--level", "warning").stdout.splitlines()
    assert [ln[-6:] for ln in warned] == ["line 1", "line 3", "line 5"]
    assert _run(tmp_path, "logs", "--since", "1h").stdout == ""
    assert _run(tmp_path, "logs", "nope").returncode == 2
