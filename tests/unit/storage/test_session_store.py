"""SessionStore against a real state.db: round trip, counters, titles, ids, usage, delete, prune, export."""

from __future__ import annotations

import json
import threading
import time

import pytest

from hermes_agent import paths
from hermes_agent.errors import StorageError
from hermes_agent.messages import Message, ToolCall, Usage
from hermes_agent.storage import AmbiguousSessionId, SessionNotFound, SessionStore


@pytest.fixture
def store(hermes_home):
    s = SessionStore()
    yield s
    s.close()


CONVERSATION = [
    Message("system", "You are Hermes."),
    Message("user", "  \nList the files in ~/projects and tell me about 数据库.\nThanks"),
    Message("assistant", None, (ToolCall("call_1", "terminal", '{"command": "ls ~/projects", "note": "日本語"}'),
                                ToolCall("call_2", "read_file", '{"path": "README.md"}')),
            reasoning="The user wants a listing.", usage=Usage(1200, 80, 1000, 0, 30), finish_reason="tool_calls"),
    Message("tool", "alpha\nbeta\n", tool_call_id="call_1", name="terminal"),
    Message("tool", "", tool_call_id="call_2", name="read_file"),
    Message("assistant", "Two projects: alpha and beta. **Bold** stays as is.", finish_reason="stop"),
]


def test_round_trip_is_exact_including_fields_excluded_from_equality(store):
    info = store.create_session("cli", "gpt-4o")
    for m in CONVERSATION:
        store.append_message(info.id, m)
    store.close()
    with SessionStore() as reopened:
        back = reopened.get_messages(info.id)
    assert back == CONVERSATION
    assert [(m.usage, m.finish_reason) for m in back] == [(m.usage, m.finish_reason) for m in CONVERSATION]
    assert back[2].tool_calls[0].arguments == '{"command": "ls ~/projects", "note": "日本語"}'
    assert back[4].content == "" and back[2].content is None


def test_state_db_lives_in_hermes_home(store):
    assert store.path == paths.state_db_path()
    assert store.path.exists()


def test_counters_title_and_activity(store):
    info = store.create_session("telegram", "gpt-4o", cwd="/tmp/x", session_key="telegram:42")
    store.append_messages(info.id, CONVERSATION)
    got = store.require_session(info.id)
    assert (got.message_count, got.tool_call_count) == (6, 2)
    assert got.title == "List the files in ~/projects and tell me about 数据库."
    assert got.source == "telegram" and got.cwd == "/tmp/x" and got.session_key == "telegram:42"
    assert got.last_active_at >= got.started_at


def test_title_is_shortened_and_not_overwritten(store):
    info = store.create_session()
    store.append_message(info.id, Message("user", "x" * 200))
    store.append_message(info.id, Message("user", "second question"))
    title = store.require_session(info.id).title
    assert len(title) == 60 and title.endswith("…")
    store.set_title(info.id, "My title")
    assert store.require_session(info.id).title == "My title"


def test_auto_title_can_be_turned_off(hermes_home):
    with SessionStore(auto_title=False) as s:
        info = s.create_session()
        s.append_message(info.id, Message("user", "hello"))
        assert s.require_session(info.id).title is None


def test_list_latest_and_source_filter(store):
    a = store.create_session("cli")
    b = store.create_session("telegram")
    c = store.create_session("cli")
    store.append_message(a.id, Message("user", "latest activity"), timestamp=time.time() + 5)
    assert [s.id for s in store.list_sessions()] == [a.id, c.id, b.id]
    assert [s.id for s in store.list_sessions(source="telegram")] == [b.id]
    assert store.latest_session().id == a.id
    assert store.latest_session(source="telegram").id == b.id
    assert store.list_sessions(limit=1, exclude=[a.id])[0].id == c.id


def test_ids_resolve_by_prefix_and_suffix(store):
    one = store.create_session(session_id="20250101_120000_aaaaaa")
    store.create_session(session_id="20250101_120000_bbbbbb")
    assert store.get_session("20250101_120000_a").id == one.id
    assert store.get_session("aaaaaa").id == one.id
    assert store.get_session("nope") is None
    with pytest.raises(AmbiguousSessionId, match="ambiguous"):
        store.get_session("20250101")
    with pytest.raises(SessionNotFound, match="no session matches 'zzz'"):
        store.require_session("zzz")


def test_generated_ids_are_unique_and_sortable(store):
    ids = [store.create_session().id for _ in range(50)]
    assert len(set(ids)) == 50
    assert all(len(i) == 22 and i[8] == "_" and i[15] == "_" for i in ids)


def test_append_to_unknown_session_is_a_clear_error(store):
    with pytest.raises(SessionNotFound, match="no session 'ghost'"):
        store.append_message("ghost", Message("user", "hi"))


def test_usage_accumulates_with_estimated_cost(store):
    info = store.create_session("cli", "anthropic/claude-sonnet-4")
    first = store.add_usage(info.id, Usage(prompt_tokens=10_000, completion_tokens=1_000, cache_read_tokens=8_000))
    store.add_usage(info.id, Usage(prompt_tokens=2_000, completion_tokens=500))
    got = store.require_session(info.id)
    # 2,000 uncached in at $3/M + 8,000 cache reads at $0.30/M + 1,000 out at $15/M
    assert first == pytest.approx((2_000 * 3 + 8_000 * 0.3 + 1_000 * 15) / 1e6)
    assert got.estimated_cost_usd == pytest.approx(first + (2_000 * 3 + 500 * 15) / 1e6)
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.api_call_count) == (12_000, 1_500, 8_000, 2)


def test_unknown_model_has_no_cost_but_explicit_cost_is_kept(store):
    info = store.create_session("cli", "my-local-llama")
    assert store.add_usage(info.id, Usage(100, 10)) is None
    assert store.require_session(info.id).estimated_cost_usd is None
    store.add_usage(info.id, Usage(100, 10), cost=0.25)
    assert store.require_session(info.id).estimated_cost_usd == pytest.approx(0.25)
    with pytest.raises(SessionNotFound):
        store.add_usage("ghost", Usage(1, 1))


def test_end_and_reopen(store):
    info = store.create_session()
    store.end_session(info.id, "compression")
    ended = store.require_session(info.id)
    assert ended.end_reason == "compression" and ended.ended_at is not None
    store.reopen_session(info.id)
    assert store.require_session(info.id).ended_at is None
    with pytest.raises(SessionNotFound):
        store.end_session("ghost")


def test_delete_removes_session_messages_and_search_hits(store):
    keep = store.create_session()
    gone = store.create_session()
    store.append_message(keep.id, Message("user", "kubernetes ingress keep 数据库迁移"))
    store.append_message(gone.id, Message("user", "kubernetes ingress gone 数据库迁移"))
    assert store.delete_session(gone.id) == 1
    assert store.get_session(gone.id) is None
    assert store.get_messages(gone.id) == []
    assert [h.session.id for h in store.search("kubernetes")] == [keep.id]
    assert [h.session.id for h in store.search("数据库迁移")] == [keep.id]
    with pytest.raises(SessionNotFound):
        store.delete_session(gone.id)


def test_prune_removes_only_idle_sessions(store):
    old = store.create_session()
    new = store.create_session()
    store.append_message(old.id, Message("user", "ancient history"), timestamp=time.time() - 40 * 86400)
    store.append_message(new.id, Message("user", "fresh"))
    assert store.count_prunable(30 * 86400) == (1, 1)
    assert store.prune(30 * 86400) == (1, 1)
    assert [s.id for s in store.list_sessions()] == [new.id]
    assert store.search("ancient") == []


def test_export_jsonl_round_trips_through_openai_dicts(store):
    info = store.create_session("cli", "gpt-4o", system_prompt="You are Hermes.")
    store.append_messages(info.id, CONVERSATION)
    lines = [json.loads(x) for x in store.export(info.id[:12], "jsonl").splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == info.id
    assert lines[0]["system_prompt"] == "You are Hermes." and lines[0]["message_count"] == 6
    assert [Message.from_openai(d) for d in lines[1:]] == CONVERSATION
    assert lines[3]["usage"]["prompt_tokens"] == 1200


def test_export_markdown_is_readable(store):
    info = store.create_session("cli", "gpt-4o")
    store.append_messages(info.id, CONVERSATION + [Message("tool", "```nested```", tool_call_id="x", name="t")])
    md = store.export(info.id, "md")
    assert md.startswith("# List the files in ~/projects and tell me about 数据库.\n")
    assert "**Tool call** `terminal`" in md and '"command": "ls ~/projects"' in md
    assert "> The user wants a listing." in md
    assert "````\n```nested```\n````" in md
    with pytest.raises(StorageError, match="unknown export format"):
        store.export(info.id, "pdf")


def test_stats_totals(store):
    a = store.create_session("cli", "gpt-4o")
    b = store.create_session("discord", "gpt-4o-mini")
    store.append_messages(a.id, CONVERSATION)
    store.append_message(b.id, Message("user", "hi"))
    store.add_usage(a.id, Usage(1_000_000, 100_000))
    st = store.stats()
    assert (st.sessions, st.messages, st.tool_calls) == (2, 7, 2)
    assert st.cost_usd == pytest.approx(2.5 + 1.0)
    assert dict((s, n) for s, n, _ in st.by_source) == {"cli": 1, "discord": 1}
    assert st.by_model[0][0] == "gpt-4o" and st.db_bytes > 0


def test_threads_sharing_one_store(store):
    info = store.create_session()

    def worker(n: int) -> None:
        for i in range(100):
            store.append_message(info.id, Message("user", f"thread {n} message {i}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.get_messages(info.id)) == 400
    assert store.require_session(info.id).message_count == 400


def test_compression_lineage_and_system_prompt(store):
    root = store.create_session("cli", system_prompt="v1")
    mid = store.create_session("cli", parent_session_id=root.id)
    leaf = store.create_session("cli", parent_session_id=mid.id)
    store.end_session(root.id, "compression")
    store.set_system_prompt(leaf.id, "v2")
    assert [s.id for s in store.lineage(leaf.id)] == [root.id, mid.id, leaf.id]
    assert store.lineage("ghost") == []
    assert store.require_session(leaf.id).system_prompt == "v2"
    assert store.require_session(root.id).system_prompt == "v1"


def test_database_files_are_owner_only(store):
    info = store.create_session()
    store.append_message(info.id, Message("user", "private"))
    for suffix in ("", "-wal"):
        assert (store.path.parent / (store.path.name + suffix)).stat().st_mode & 0o077 == 0
