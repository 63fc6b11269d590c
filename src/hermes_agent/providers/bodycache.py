"""A chat request's JSON body, encoded once per piece: each message is encoded when it first goes out and its
text reused on every later request of the conversation, and the tool definitions (the bulk of a request,
~12 KB) once for as long as the agent offers the same ones. The bytes are exactly `json.dumps(body,
ensure_ascii=False, separators=(",", ":"))` of the same body (keys in the same order)."""

from __future__ import annotations

import json

from hermes_agent.messages import Message

_ORDER = ("model", "messages", "tools")


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class BodyEncoder:
    """One per provider. A request at a time per conversation; the message cache is swapped whole per request."""

    def __init__(self) -> None:
        self._messages: dict[int, list] = {}  # id(message) -> [message, its wire dict, its JSON text or ""]
        self._tools: tuple[tuple[dict, ...], str] | None = None

    def wire(self, messages: tuple[Message, ...]) -> list[list]:
        """Each message's [message, wire dict, JSON text or ""], the same entry (and dict object) for a message
        sent before: callers must not change the dicts (a hook that edits the wire copies it first, as
        caching.py does). Threads sharing a provider only miss each other's entries."""
        old, new = self._messages, {}
        for m in messages:
            hit = old.get(id(m))
            new[id(m)] = hit if hit is not None and hit[0] is m else [m, m.to_openai(), ""]
        self._messages = new  # only this request's messages stay: the cache never outgrows a conversation
        return [new[id(m)] for m in messages]

    def encode(self, body: dict, entries: list[list] | None) -> bytes:
        """`body` (as OpenAIChatProvider.body builds it) as bytes. `entries`: what `wire()` gave when
        body["messages"] are its dicts unchanged (None when a hook replaced them: those are encoded afresh)."""
        first = [k for k in _ORDER if k in body]
        if list(body)[:len(first)] != first or first[:2] != ["model", "messages"]:
            return dumps(body).encode()
        texts = (_text(e) for e in entries) if entries is not None else (dumps(d) for d in body["messages"])
        parts = ['{"model":', dumps(body["model"]), ',"messages":[', ",".join(texts), "]"]
        if "tools" in body:
            parts += [',"tools":', self._tools_text(body["tools"])]
        rest = {k: v for k, v in body.items() if k not in _ORDER}
        if rest:
            parts += [",", dumps(rest)[1:-1]]
        parts.append("}")
        return "".join(parts).encode()

    def _tools_text(self, tools: list[dict]) -> str:
        kept = self._tools
        if kept is not None and len(kept[0]) == len(tools) and all(a is b for a, b in zip(kept[0], tools, strict=True)):
            return kept[1]
        text = dumps(tools)
        self._tools = (tuple(tools), text)
        return text


def _text(entry: list) -> str:
    if not entry[2]:
        entry[2] = dumps(entry[1])
    return entry[2]
