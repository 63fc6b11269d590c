"""A Bot API update (the JSON dict, as polled, pushed or kept in the inbox) -> the gateway's Inbound, read
directly: python-telegram-bot's object tree cost ~0.3 ms an update and kept every reply waiting for the
library to load (issue 24). Field meanings as the library gives them (`full_name`, entity text cut at
UTF-16 offsets, the largest photo last)."""

from __future__ import annotations

import re

from hermes_agent.gateway.base import Inbound


def full_name(user: dict) -> str:
    return " ".join(str(p) for p in (user.get("first_name"), user.get("last_name")) if p)


def entity_texts(text: str, entities: object) -> list[tuple[dict, str]]:
    """Each entity with the text it covers (Telegram counts offsets in UTF-16 code units)."""
    if not isinstance(entities, list) or not text:
        return []
    units = text.encode("utf-16-le")
    out = []
    for e in entities:
        if isinstance(e, dict):
            start, length = int(e.get("offset") or 0), int(e.get("length") or 0)
            out.append((e, units[start * 2:(start + length) * 2].decode("utf-16-le", errors="replace")))
    return out


def _user_id(user: object) -> int | None:
    return user.get("id") if isinstance(user, dict) else None


def addressed_to_bot(msg: dict, bot_id: int, username: str) -> bool:
    """Telegram's group rule: a reply to the bot, an @mention of it (entity, or plain text when the client sent
    no entities) or a /command@bot. A bare /command is not addressed to any one bot."""
    reply = msg.get("reply_to_message")
    if isinstance(reply, dict) and _user_id(reply.get("from")) == bot_id:
        return True
    handle = "@" + username.lower()
    parsed = entity_texts(msg.get("text") or "", msg.get("entities")) + \
        entity_texts(msg.get("caption") or "", msg.get("caption_entities"))
    for entity, text in parsed:
        kind = entity.get("type")
        if (kind == "mention" and text.lower() == handle) or \
                (kind == "text_mention" and _user_id(entity.get("user")) == bot_id) or \
                (kind == "bot_command" and text.lower().endswith(handle)):
            return True
    raw = msg.get("text") or msg.get("caption") or ""
    return not parsed and bool(username) and re.search(rf"(?i)(?<![\w@/]){re.escape(handle)}\b", raw) is not None


def _attachment(msg: dict) -> dict:
    """file_id / file_name (/ voice) of a document, photo, voice note or audio file; {} for none."""
    if isinstance(msg.get("document"), dict):
        doc = msg["document"]
        return {"file_id": doc.get("file_id"), "file_name": doc.get("file_name") or "document"}
    if isinstance(msg.get("photo"), list) and msg["photo"]:
        return {"file_id": msg["photo"][-1].get("file_id"), "file_name": f"photo_{msg.get('message_id')}.jpg"}
    audio = msg.get("voice") if isinstance(msg.get("voice"), dict) else msg.get("audio")
    if isinstance(audio, dict):
        name = audio.get("file_name") or f"voice_{msg.get('message_id')}.ogg"
        return {"file_id": audio.get("file_id"), "file_name": name, "voice": True}
    return {}


def _callback(event_id: int, q: dict) -> Inbound:
    user = q.get("from") or {}
    chat = (q.get("message") or {}).get("chat")
    chat = chat if isinstance(chat, dict) else None
    return Inbound("telegram", event_id, str(chat["id"] if chat else user.get("id")), str(user.get("id")),
                   full_name(user), "", is_dm=bool(chat and chat.get("type") == "private"),
                   callback_data=q.get("data") or "", callback_id=str(q.get("id") or ""))


def translate(event_id: int, update: dict, bot_id: int, username: str, require_mention: bool) -> Inbound | None:
    """The Inbound for an update, or None when there is nothing to answer (the bot's own message, group chatter
    not addressed to it when mentions are required, a message without text or file)."""
    if isinstance(update.get("callback_query"), dict):
        return _callback(event_id, update["callback_query"])
    msg = update.get("message")
    if not isinstance(msg, dict) or not isinstance(msg.get("from"), dict) or not isinstance(msg.get("chat"), dict):
        return None
    user, chat = msg["from"], msg["chat"]
    if user.get("id") == bot_id:
        return None
    text = msg.get("text") or msg.get("caption") or ""
    if chat.get("type") in ("group", "supergroup") and username:
        if require_mention and not addressed_to_bot(msg, bot_id, username):
            return None  # group chatter not meant for the bot: accepted, never answered
        text = re.sub(rf"(?i)@{re.escape(username)}\b[,:]?\s*", "", text).strip() or text
    extra = _attachment(msg)
    if not (text or extra):
        return None
    return Inbound("telegram", event_id, str(chat.get("id")), str(user.get("id")),
                   user.get("username") or full_name(user) or "", text,
                   is_dm=chat.get("type") == "private", extra=extra)
