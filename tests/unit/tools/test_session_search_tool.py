"""session_search: registration, and run_session_search over a real store as the agent loop calls it."""

from __future__ import annotations

import json
import time
from datetime import date

import pytest

from hermes_agent.config.settings import Settings
from hermes_agent.errors import ProviderError
from hermes_agent.messages import Message
from hermes_agent.storage import SessionStore
from hermes_agent.tools.builtin import session_search as tool
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry


@pytest.fixture
def store(hermes_home):
    s = SessionStore()
    yield s
    s.close()


@pytest.fixture
def seeded(store):
    def session(source, texts, ts=None):
        info = store.create_session(source)
        for t in texts:
            store.append_message(info.id, Message("user", t), timestamp=ts)
        return info.id

    ids = {
        "nginx": session("cli", ["configure nginx TLS with certbot", "certbot renew --dry-run worked"]),
        "tg": session("telegram", ["remind me about the nginx upgrade"]),
        "old": session("cli", ["nginx 502 errors last winter"], ts=time.mktime((2024, 1, 5, 12, 0, 0, 0, 0, -1))),
        "sub": session("subagent", ["nginx config audit by a subagent"]),
        "zh": session("cli", ["我们把数据库迁移到了新的服务器"]),
    }
    ids["current"] = session("cli", ["nginx is what we are talking about right now"])
    return ids


def run(store, current, summarize=None, **args):
    return json.loads(tool.run_session_search(args, store, current, summarize))


def test_registered_schema_is_small_and_runs_the_context_search(store, seeded):
    entry = registry.get("session_search")
    assert entry.toolset == "session_search" and entry.emoji == "🔎"
    size = len(json.dumps(entry.definition()["function"], separators=(",", ":"), ensure_ascii=False).encode())
    assert size < 1500
    ctx = ToolContext(settings=Settings())
    assert json.loads(registry.dispatch("session_search", {"query": "x"}, ctx=ctx)) == {
        "error": "session_search is not available in this context"}
    ctx.session_search = lambda args: tool.run_session_search(args, store, seeded["current"])
    out = json.loads(registry.dispatch("session_search", {"query": "nginx certbot"}, ctx=ctx))
    assert [r["session_id"] for r in out["results"]] == [seeded["nginx"]]


def test_search_best_first_excluding_current_and_subagents(store, seeded):
    out = run(store, seeded["current"], query="nginx certbot", limit=5)
    assert out["mode"] == "search"
    assert [r["session_id"] for r in out["results"]] == [seeded["nginx"]]
    assert "**certbot**" in out["results"][0]["hits"][0]["text"]
    ids = [r["session_id"] for r in run(store, seeded["current"], query="nginx", limit=10)["results"]]
    assert set(ids) == {seeded["nginx"], seeded["tg"], seeded["old"]}


def test_filters_source_and_dates(store, seeded):
    cur = seeded["current"]
    assert [r["session_id"] for r in run(store, cur, query="nginx", source="telegram")["results"]] == [seeded["tg"]]
    assert [r["session_id"] for r in run(store, cur, query="nginx", source="subagent")["results"]] == [seeded["sub"]]
    assert [r["session_id"] for r in run(store, cur, query="nginx", until="2024-01-05")["results"]] == [seeded["old"]]
    recent = run(store, cur, query="nginx", since="7d", limit=10)["results"]
    assert seeded["old"] not in {r["session_id"] for r in recent}
    today = date.today().isoformat()
    assert seeded["old"] not in {r["session_id"] for r in run(store, cur, query="nginx", since=today)["results"]}


def test_chinese_query(store, seeded):
    out = run(store, seeded["current"], query="数据库")
    assert [r["session_id"] for r in out["results"]] == [seeded["zh"]]


def test_no_match_gives_a_hint(store, seeded):
    out = run(store, seeded["current"], query="kubernetes")
    assert out["count"] == 0 and "hint" in out


def test_browse_recent_without_query(store, seeded):
    out = run(store, seeded["current"], limit=10)
    assert out["mode"] == "recent"
    ids = [s["session_id"] for s in out["sessions"]]
    assert seeded["current"] not in ids and seeded["sub"] not in ids
    assert ids[0] == seeded["zh"] and ids[-1] == seeded["old"]
    assert out["sessions"][0]["title"] == "我们把数据库迁移到了新的服务器"


def test_read_a_session_around_a_hit(store, seeded):
    hit = run(store, seeded["current"], query="renew")["results"][0]
    out = run(store, seeded["current"], session_id=hit["session_id"], around_id=hit["hits"][0]["id"])
    assert out["mode"] == "read" and out["session_id"] == seeded["nginx"]
    assert [m["text"] for m in out["shown"]] == ["configure nginx TLS with certbot", "certbot renew --dry-run worked"]


def test_bad_arguments_are_json_errors(store, seeded):
    assert "since: expected YYYY-MM-DD" in run(store, None, query="x", since="last week")["error"]
    assert "limit: expected an integer" in run(store, None, query="x", limit="many")["error"]
    assert run(store, None, session_id="nope")["error"] == "no session matches 'nope'"
    assert "around_id" in run(store, None, session_id=seeded["nginx"], around_id="x")["error"]


def test_summary_only_when_a_summarizer_is_given(store, seeded):
    prompts = []

    def summarize(prompt: str) -> str:
        prompts.append(prompt)
        return "They set up certbot renewal."

    plain = run(store, seeded["current"], query="certbot")
    assert "summary" not in plain["results"][0] and prompts == []
    out = run(store, seeded["current"], summarize, query="certbot")
    assert out["results"][0]["summary"] == "They set up certbot renewal."
    assert "relevant to: certbot" in prompts[0] and "user: certbot renew --dry-run worked" in prompts[0]


def test_failing_summarizer_keeps_the_snippets(store, seeded):
    def summarize(prompt: str) -> str:
        raise ProviderError("auxiliary model unavailable")

    out = run(store, seeded["current"], summarize, query="certbot")
    assert out["count"] == 1 and "summary" not in out["results"][0] and out["results"][0]["hits"]


def test_hermes_scroll_shape_around_message_id_window_and_role_filter(store, seeded):
    sid = seeded["nginx"]
    ids = [r.id for r in store.get_records(sid)]
    store.append_message(sid, Message("assistant", "renewal configured"))
    out = run(store, None, session_id=sid, around_message_id=ids[0], window=1)
    assert [m["id"] for m in out["shown"]] == ids[:2]
    only_assistant = run(store, None, session_id=sid, around_message_id=ids[1], window=5, role_filter="assistant")
    assert [m["text"] for m in only_assistant["shown"]] == ["renewal configured"]
    newest = run(store, None, query="nginx", sort="newest", limit=5)
    whens = [r["when"] for r in newest["results"]]
    assert whens == sorted(whens, reverse=True) and len(whens) >= 3
    assert "error" in run(store, None, query="nginx", sort="sideways")
    assert run(store, None, session_id=sid, profile="default")["mode"] == "read"
