"""Issue 19, rt14 b25: a home written by Hermes 0.19 keeps `approvals.deny` globs that Hermes matches
case-insensitively and that block a command even under --yolo. Through the real `hermes chat -q --yolo` with
the scripted model: `DROP TABLE`, `Delete From` and a mixed-case `Git Push --FORCE` are refused like their
lowercase spellings; commands no rule names still run."""

from __future__ import annotations

import sqlite3

from tests.helpers import model_config, run_hermes

DENY = "approvals:\n  deny:\n    - '*drop table*'\n    - '  *DELETE FROM*  '\n    - 'git push --force*'\n"


def _sql(statement: str) -> dict:
    code = f"import sqlite3; c=sqlite3.connect('app.db'); c.execute('{statement}'); c.commit()"
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": f'python3 -c "{code}"'}}]}


def test_deny_globs_match_any_case_under_yolo(scripted, hermes_home, outside_dir):
    work = outside_dir / "proj"
    work.mkdir()
    db = work / "app.db"
    con = sqlite3.connect(db)
    con.executescript("create table users(id); create table logs(id); create table orders(id);"
                      "insert into orders values(7); create table keep(id);")
    con.commit()
    con.close()
    model_config(hermes_home, scripted.url, DENY)
    scripted.add(_sql("drop table logs"), _sql("DROP TABLE users"), _sql("Delete From orders"),
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "Git Push --FORCE origin main"}}]},
                 _sql("create table made(id)"), {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, cwd=str(work), timeout=180)
    assert out.returncode == 0, out.stderr
    con = sqlite3.connect(db)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    assert {"users", "logs", "orders", "made"} <= tables, tables
    assert con.execute("select count(*) from orders").fetchone()[0] == 1
    tools = [str(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(tools) == 5
    for result, rule in zip(tools[:4], ["*drop table*", "*drop table*", "*DELETE FROM*", "git push --force*"], strict=True):
        assert "BLOCKED" in result and f"approvals.deny rule '{rule}'" in result, result
    assert "BLOCKED" not in tools[4]
