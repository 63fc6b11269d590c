"""Telegram updates read as JSON (gateway/platforms/telegram_update.py), checked against python-telegram-bot's
own reading of the same update where the library has one (entity text at UTF-16 offsets); and the durable
inbox's shared writes (gateway/delivery.py): answers given at the same time cost fewer writes, none is lost."""

from __future__ import annotations

import threading

import pytest

from hermes_agent.gateway import delivery
from hermes_agent.gateway.delivery import Inbox
from hermes_agent.gateway.platforms.telegram_update import entity_texts, translate

BOT_ID, BOT = 4242, "hermes_test_bot"
ALICE = {"id": 7, "is_bot": False, "first_name": "Alice", "last_name": "Liddell"}


def _msg(text: str = "", chat_type: str = "private", **extra: object) -> dict:
    return {"message_id": 5, "date": 1, "from": ALICE, "chat": {"id": -100 if chat_type != "private" else 7,
                                                                "type": chat_type}, "text": text, **extra}


def _mention(text: str, word: str, kind: str = "mention") -> dict:
    offset = len(text[:text.index(word)].encode("utf-16-le")) // 2
    return {"type": kind, "offset": offset, "length": len(word.encode("utf-16-le")) // 2}


def test_entity_text_is_cut_at_utf16_offsets_as_the_library_cuts_it():
    telegram = pytest.importorskip("telegram")
    text = "🎉👍 héllo @hermes_test_bot and /status@hermes_test_bot"
    entities = [_mention(text, "@hermes_test_bot"), _mention(text, "/status@hermes_test_bot", "bot_command")]
    ours = [t for _, t in entity_texts(text, entities)]
    lib = telegram.Message.de_json(_msg(text, entities=entities), None).parse_entities()
    assert ours == list(lib.values()) == ["@hermes_test_bot", "/status@hermes_test_bot"]


def test_a_direct_message_and_its_sender():
    got = translate(11, {"update_id": 11, "message": _msg("hi there")}, BOT_ID, BOT, False)
    assert got is not None and (got.event_id, got.chat_id, got.user_id, got.text, got.is_dm) == \
        (11, "7", "7", "hi there", True)
    assert got.user_name == "Alice Liddell"  # no username: the full name, as the library's full_name
    named = translate(12, {"message": _msg("x", **{"from": {**ALICE, "username": "alice"}})}, BOT_ID, BOT, False)
    assert named is not None and named.user_name == "alice"


def test_group_rules_with_mentions_required():
    text = "👋 @hermes_test_bot, what is 2+2?"
    addressed = _msg(text, "supergroup", entities=[_mention(text, "@hermes_test_bot")])
    got = translate(1, {"message": addressed}, BOT_ID, BOT, True)
    assert got is not None and got.text == "👋 what is 2+2?" and not got.is_dm
    assert translate(2, {"message": _msg("just chatting", "group")}, BOT_ID, BOT, True) is None
    reply = _msg("and this?", "group", reply_to_message={"message_id": 1, "date": 1, "from": {"id": BOT_ID},
                                                        "chat": {"id": -100, "type": "group"}})
    assert translate(3, {"message": reply}, BOT_ID, BOT, True) is not None
    other_bot = _msg("/status@other_bot", "group", entities=[_mention("/status@other_bot", "/status@other_bot",
                                                                      "bot_command")])
    assert translate(4, {"message": other_bot}, BOT_ID, BOT, True) is None
    caption = _msg("", "group", caption="look @hermes_test_bot", photo=[{"file_id": "s"}, {"file_id": "big"}],
                   caption_entities=[_mention("look @hermes_test_bot", "@hermes_test_bot")])
    got = translate(5, {"message": caption}, BOT_ID, BOT, True)
    assert got is not None and got.extra == {"file_id": "big", "file_name": "photo_5.jpg"} and got.text == "look"
    plain = _msg("hey @Hermes_Test_Bot", "group")  # a client that sent no entities: the text itself
    assert translate(6, {"message": plain}, BOT_ID, BOT, True) is not None
    assert translate(7, {"message": _msg("just chatting", "group")}, BOT_ID, BOT, False) is not None


def test_files_buttons_and_what_is_never_answered():
    doc = translate(1, {"message": _msg(document={"file_id": "d1", "file_name": "a.pdf"})}, BOT_ID, BOT, False)
    assert doc is not None and doc.extra == {"file_id": "d1", "file_name": "a.pdf"}
    voice = translate(2, {"message": _msg(voice={"file_id": "v1", "duration": 2})}, BOT_ID, BOT, False)
    assert voice is not None and voice.extra == {"file_id": "v1", "file_name": "voice_5.ogg", "voice": True}
    press = {"callback_query": {"id": "cb9", "from": ALICE, "data": "approve:once", "chat_instance": "x",
                                "message": {"message_id": 3, "date": 0, "chat": {"id": -100, "type": "group"}}}}
    got = translate(3, press, BOT_ID, BOT, False)
    assert got is not None and (got.chat_id, got.callback_data, got.callback_id, got.is_dm) == \
        ("-100", "approve:once", "cb9", False)
    assert translate(4, {"message": _msg("mine", **{"from": {"id": BOT_ID}})}, BOT_ID, BOT, False) is None
    assert translate(5, {"message": _msg("")}, BOT_ID, BOT, False) is None
    assert translate(6, {"edited_message": _msg("x")}, BOT_ID, BOT, False) is None


def test_answers_given_at_once_share_writes_and_all_reach_the_disk(tmp_path, monkeypatch):
    writes: list[int] = []
    real = delivery.write_json

    def counted(path, obj, **kw):  # type: ignore[no-untyped-def]
        writes.append(len(obj["pending"]))
        real(path, obj, **kw)

    monkeypatch.setattr(delivery, "write_json", counted)
    inbox = Inbox("telegram", tmp_path)
    assert inbox.accept([(i, {"update_id": i}) for i in range(1, 41)]) == list(range(1, 41))
    writes.clear()
    threads = [threading.Thread(target=inbox.done, args=([i],)) for i in range(1, 21)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(21, 41):
        inbox.done_soon([i])
    inbox.done_soon([999])  # never accepted: nothing to write
    assert inbox._writer is not None
    inbox._writer.submit(lambda: None).result()  # the writer has caught up
    again = Inbox("telegram", tmp_path)
    assert again.unanswered() == [] and again.offset == 41 and sorted(again.recent) == list(range(1, 41))
    assert 1 <= len(writes) < 40  # 40 answers, fewer writes: the last one has no event left pending
    assert writes[-1] == 0
