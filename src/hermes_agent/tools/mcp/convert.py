"""Translate between MCP objects and what our registry and the model see (schemas, result text)."""

from __future__ import annotations

import json

from hermes_agent.tools.results import tool_error, tool_result

MAX_DESCRIPTION = 600
_DROP_SCHEMA_KEYS = ("$schema", "$id")


def trim_description(text: str | None, limit: int = MAX_DESCRIPTION) -> str:
    """Collapse whitespace and cut long descriptions at a sentence end before `limit`."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > limit // 2 else cut.rstrip() + "…"


def _strip_titles(node: object) -> object:
    """Drop generated `title` keywords (pydantic adds one per field) but keep properties named title."""
    if isinstance(node, list):
        return [_strip_titles(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {k: _strip_titles(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not", "prefixItems"):
            out[key] = _strip_titles(value)
        else:
            out[key] = value
    return out


def input_schema(raw: object) -> dict:
    """A JSON-schema object the model APIs accept (type object, properties present, no $schema)."""
    stripped = _strip_titles(raw)
    schema = dict(stripped) if isinstance(stripped, dict) else {}
    for key in _DROP_SCHEMA_KEYS:
        schema.pop(key, None)
    schema["type"] = "object"
    if not isinstance(schema.get("properties"), dict):
        schema["properties"] = {}
    return schema


def tool_schema(name: str, description: str | None, raw_schema: object) -> dict:
    """The registry schema for one MCP tool."""
    return {"name": name, "description": trim_description(description), "parameters": input_schema(raw_schema)}


WITHHELD = "(description withheld by hermes: it read as instructions to the model)"


def withhold_orders(schema: dict) -> tuple[dict, tuple[str, ...]]:
    """An untrusted server's tool schema with every description (the tool's, its parameters') that reads as an
    order to the model withheld (intent.py: run something as a standing order, send data out, hide from the
    user, switch safety off, override instructions; any language), and what they wanted. The model reads them
    before any result of the server has tainted the turn (issue 19 class 2)."""
    from hermes_agent.intent import scan

    kinds: dict[str, None] = {}

    def judged(text: str) -> bool:
        found = [i.kind for i in scan(text)]
        kinds.update(dict.fromkeys(found))
        return bool(found)

    def walk(node: object) -> object:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        return {k: walk(v) for k, v in node.items() if not (k == "description" and isinstance(v, str) and judged(v))}

    params = walk(schema.get("parameters", {}))
    description = WITHHELD if judged(str(schema.get("description", ""))) else schema.get("description", "")
    return {**schema, "description": description, "parameters": params}, tuple(kinds)


def _block_text(block: object) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "") or "") * 3 // 4
        return f"[{kind} {getattr(block, 'mime_type', '')}, {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {getattr(block, 'uri', '')}: {getattr(block, 'name', '')}]"
    if kind == "resource":
        return resource_contents_text(getattr(block, "resource", None))
    return f"[{kind or type(block).__name__} content]"


def resource_contents_text(contents: object) -> str:
    """Text of a Text/BlobResourceContents (blobs are described, not inlined)."""
    if contents is None:
        return ""
    text = getattr(contents, "text", None)
    if text is not None:
        return str(text)
    blob = getattr(contents, "blob", "") or ""
    return f"[binary {getattr(contents, 'mime_type', '') or ''} {getattr(contents, 'uri', '')}, {len(blob) * 3 // 4} bytes]"


def content_text(blocks: object) -> str:
    """Join the content blocks of a result into one text."""
    return "\n".join(t for t in (_block_text(b) for b in (blocks or [])) if t)


def call_result_json(result: object) -> str:
    """JSON string for the model: {"result": text} or {"error": text} when the server says is_error."""
    text = content_text(getattr(result, "content", None))
    structured = getattr(result, "structured_content", None)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    if getattr(result, "is_error", False):
        return tool_error(text or "the MCP tool reported an error")
    return tool_result({"result": text})
