"""Full-text search: ranking, snippets, CJK (trigram and the short-term fallback), filters, hostile input."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from hermes_agent.messages import Message, ToolCall
from hermes_agent.storage import SessionStore


@pytest.fixture
def store(hermes_home):
    s = SessionStore()
    yield s
    s.close()


def _session(store, texts, source="cli", timestamp=None):
    info = store.create_session(source)
    for text in texts:
        store.append_message(info.id, Message("user", text), timestamp=timestamp)
    return info.id


def test_best_session_first_with_marked_snippets(store):
    weak = _session(store, ["we once mentioned postgres in passing, along with many other words here"])
    strong = _session(store, ["postgres replication lag", "postgres vacuum settings", "tune postgres"])
    _session(store, ["nothing relevant"])
    hits = store.search("postgres")
    assert [h.session.id for h in hits] == [strong, weak]
    assert hits[0].score > hits[1].score
    assert len(hits[0].snippets) == 3 and all("**postgres**" in s.text for s in hits[0].snippets)


def test_all_words_then_any_word(store):
    both = _session(store, ["nginx reverse proxy with certbot"])
    one = _session(store, ["nginx only"])
    assert [h.session.id for h in store.search("nginx certbot")] == [both]
    assert {h.session.id for h in store.search("nginx unicorn")} == {both, one}
    assert [h.session.id for h in store.search("certbot OR unicorn")] == [both]


def test_phrase_and_prefix(store):
    a = _session(store, ["the deploy script failed"])
    b = _session(store, ["failed to deploy the script"])
    assert [h.session.id for h in store.search('"deploy script"')] == [a]
    assert {h.session.id for h in store.search("depl*")} == {a, b}


@pytest.mark.parametrize("query", [
    '"', '""', "'", "*", "AND", "OR OR", "NOT x", "NEAR(a b)", "a:b", "col:text", "(", ")", "^start",
    "foo\"bar", "-x", "+y", "{a b}", "a AND (b", "\\", "%_", "🙂", "  ",
])
def test_fts_syntax_in_user_input_never_raises(store, query):
    _session(store, ["some ordinary text with a:b and foo\"bar"])
    assert isinstance(store.search(query), list)


def test_chinese_search_three_chars_and_more(store):
    zh = _session(store, ["我们今天讨论了数据库迁移的问题，然后部署到服务器"])
    _session(store, ["an English-only session about databases"])
    hits = store.search("数据库迁移")
    assert [h.session.id for h in hits] == [zh]
    assert "**数据库迁移**" in hits[0].snippets[0].text
    assert [h.session.id for h in store.search("数据库 部署")] == [zh]


def test_short_cjk_terms_fall_back_to_like(store):
    zh = _session(store, ["明天去北京开会"])
    ja = _session(store, ["東京でラーメンを食べました"])
    assert [h.session.id for h in store.search("北京")] == [zh]
    assert "**北京**" in store.search("北京")[0].snippets[0].text
    assert [h.session.id for h in store.search("東京")] == [ja]
    assert [h.session.id for h in store.search("ラーメン 東京")] == [ja]


def test_japanese_kana_and_kanji(store):
    ja = _session(store, ["設定ファイルを更新してから再起動してください"])
    assert [h.session.id for h in store.search("設定ファイル")] == [ja]
    assert [h.session.id for h in store.search("再起動")] == [ja]


def test_mixed_script_message_found_by_english_words(store):
    mixed = _session(store, ["docker 部署失败了，请检查日志"])
    assert [h.session.id for h in store.search("docker")] == [mixed]
    assert [h.session.id for h in store.search("部署失败")] == [mixed]


def test_tool_calls_and_tool_output_are_searchable(store):
    info = store.create_session()
    store.append_message(info.id, Message("assistant", None, (ToolCall("c1", "terminal", '{"command": "pg_dump mydb"}'),)))
    store.append_message(info.id, Message("tool", "dump written to /backups/mydb.sql", tool_call_id="c1", name="terminal"))
    hits = store.search("pg_dump")
    assert hits and "**pg_dump** mydb" in hits[0].snippets[0].text
    assert store.search("backups mydb")[0].snippets[0].text == "dump written to /**backups**/**mydb**.sql"


def test_existing_markdown_bold_is_not_mistaken_for_a_hit(store):
    _session(store, ["**Important** note: rotate the signing keys"])
    text = store.search("rotate")[0].snippets[0].text
    assert "**rotate**" in text


def test_source_date_and_exclusion_filters(store):
    day = 86400
    old = _session(store, ["redis eviction policy"], timestamp=datetime(2024, 1, 10, 12).timestamp())
    tg = _session(store, ["redis eviction policy"], source="telegram")
    cur = _session(store, ["redis eviction policy"])
    assert {h.session.id for h in store.search("redis")} == {old, tg, cur}
    assert [h.session.id for h in store.search("redis", source="telegram")] == [tg]
    assert [h.session.id for h in store.search("redis", until=datetime(2024, 1, 11).timestamp())] == [old]
    assert old not in {h.session.id for h in store.search("redis", since=time.time() - day)}
    assert cur not in {h.session.id for h in store.search("redis", exclude_session=cur)}
    assert tg not in {h.session.id for h in store.search("redis", exclude_sources=("telegram",))}
    assert [h.session.id for h in store.search("数据", source="telegram")] == []


def test_limit_caps_sessions(store):
    for i in range(8):
        _session(store, [f"grafana dashboard {i}"])
    assert len(store.search("grafana", limit=3)) == 3
    assert store.search("grafana", limit=0) == []


@pytest.mark.parametrize("query", ["北京", "nginx", "北京 nginx", "北京開会"])
def test_one_busy_session_does_not_hide_the_others(store, query):
    quiet = _session(store, ["北京開会 nginx quiet"])
    busy = store.create_session().id
    store.append_messages(busy, [Message("user", f"北京開会 nginx busy {i}") for i in range(2600)])
    assert {h.session.id for h in store.search(query)} == {busy, quiet}


def test_sessions_past_the_first_lookups_are_found(store):
    busy = _session(store, ["redis redis"] * 60)  # the 60 best hits all belong to one session
    others = {_session(store, [f"redis came up once among many other words in chat number {i}"]) for i in range(12)}
    hits = store.search("redis", limit=10)
    assert hits[0].session.id == busy and len(hits[0].snippets) == 3
    assert len(hits) == 10 and {h.session.id for h in hits[1:]} < others


def test_snippet_marks_whole_words_even_when_a_term_starts_or_ends_with_punctuation(store):
    _session(store, ["copy .env to the envelope dir, keep prod.env; build with c++ not c++17 nor cpp"])
    assert store.search(".env")[0].snippets[0].text == ("copy **.env** to the envelope dir, keep prod.env; build "
                                                        "with c++ not c+…")
    assert store.search("env")[0].snippets[0].text.startswith("copy .**env** to the envelope dir, keep prod.**env**;")
    assert "with **c++** not c++17 nor cpp" in store.search('"c++"')[0].snippets[0].text
