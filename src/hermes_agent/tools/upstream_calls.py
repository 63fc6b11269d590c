"""Tool calls in today's upstream Hermes shapes (2026.9, after 0.19.0), turned into ours at dispatch time.

One place for every rename and reshaped argument upstream introduced, so a model trained on either
version keeps working and a session written by either resumes with its tool calls intact. The schemas
we send stay ours; this only widens what is accepted. 0.19.0's own variants are handled by each
tool's `normalise_*` (they predate this module). A call that cannot be mapped raises Unmappable with
one line the model can act on.

- names: `todo_list` -> todo, `process_manage` -> process, `cronjob_manage` -> cronjob; `tool_call`
  {name, arguments} (upstream's deferred-tool bridge) is unwrapped when we did not offer the bridge.
- clarify `questions[]`, skill_manage `operations[]` (one call per operation), delegate_task
  `action` (spawn only), terminal `notify`/`heartbeat`/`persist_on_release`, session_search
  `after`/`before`/`detail`/`exclude_session_ids`, memory `new_text` (its span-only `patch` action is the
  memory tool's own).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from hermes_agent.messages import safe_loads

NAMES = {"todo_list": "todo", "process_manage": "process", "cronjob_manage": "cronjob"}
BRIDGE = "tool_call"


class Unmappable(ValueError):
    """An upstream-only request this hermes-agent has no feature for."""


def canonical_name(name: str) -> str:
    return NAMES.get(name, name)


def with_upstream_names(definitions: list[dict]) -> list[dict]:
    """`tools.schema_style: upstream`: the definitions under upstream's tool names (schemas stay ours)."""
    ours_to_theirs = {v: k for k, v in NAMES.items()}
    out = []
    for d in definitions:
        name = d.get("function", {}).get("name")
        if name in ours_to_theirs:
            d = {**d, "function": {**d["function"], "name": ours_to_theirs[name]}}
        out.append(d)
    return out


def _json_value(value: object) -> object:
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return safe_loads(value)
        except ValueError:
            return value
    return value


def _clarify(args: dict) -> list[dict]:
    questions = _json_value(args.get("questions"))
    if "question" in args or questions is None:
        return [args]
    if not isinstance(questions, list) or not questions:
        raise Unmappable("questions must be a non-empty list of {question, choices?} objects")
    items = [q if isinstance(q, dict) else {"question": str(q)} for q in questions]
    if len(items) == 1:
        one = {"question": items[0].get("question", ""), **({"choices": items[0]["choices"]}
                                                             if items[0].get("choices") else {})}
        return [one]
    text = "\n".join(f"{i}. {q.get('question', '')}" + (f" (options: {', '.join(map(str, q['choices']))})"
                                                          if q.get("choices") else "")
                     for i, q in enumerate(items, 1))
    return [{"question": f"Please answer each question:\n{text}"}]


def _skill_op(op: object) -> dict:
    if not isinstance(op, dict):
        raise Unmappable("each of operations must be an object with action and name")
    out = dict(op)
    action = out.get("action")
    if action == "write_file" and "file_content" not in out and "content" in out:
        out["file_content"] = out.pop("content")
    if action == "patch" and "old_string" not in out and "content" in out:
        out["action"] = "edit"  # upstream's full-rewrite form of patch
    return out


def _skill_manage(args: dict) -> list[dict]:
    ops = _json_value(args.get("operations"))
    if ops is None or "action" in args:
        return [args]
    if not isinstance(ops, list) or not ops:
        raise Unmappable("operations must be a non-empty list of {action, name, ...} objects")
    return [_skill_op(op) for op in ops]


def _delegate_task(args: dict) -> list[dict]:
    action = args.get("action")
    if action in (None, "", "spawn"):
        return [{k: v for k, v in args.items() if k not in ("action", "message", "subagent_id")}]
    raise Unmappable(f"delegate_task action {action!r} needs persistent subagents, which this hermes-agent "
                     "does not have: use action 'spawn' (or omit it) with goal or tasks; each call returns "
                     "when its subagents finish")


def _terminal(args: dict) -> list[dict]:
    out = {k: v for k, v in args.items() if k not in ("notify", "heartbeat", "persist_on_release")}
    notify = _json_value(args.get("notify"))
    if isinstance(notify, list) and notify and "watch_patterns" not in out:
        out["watch_patterns"] = notify
    elif (notify is True or args.get("heartbeat")) and "notify_on_complete" not in out:
        out["notify_on_complete"] = True
    return [out]


def _session_search(args: dict) -> list[dict]:
    out = {k: v for k, v in args.items() if k not in ("after", "before", "detail", "exclude_session_ids")}
    for theirs, ours in (("after", "since"), ("before", "until")):
        if args.get(theirs) and not out.get(ours):
            out[ours] = args[theirs]
    return [out]


def _memory(args: dict) -> list[dict]:
    out = dict(args)
    if out.get("content") is None and out.get("new_text") is not None:
        out["content"] = out["new_text"]
    out.pop("new_text", None)
    ops = _json_value(out.get("operations"))
    if isinstance(ops, list):
        out["operations"] = [{**{k: v for k, v in op.items() if k != "new_text"},
                              "content": op.get("content", op.get("new_text"))}
                             if isinstance(op, dict) and "new_text" in op else op for op in ops]
    return [out]


_ARGS: dict[str, Callable[[dict], list[dict]]] = {
    "clarify": _clarify, "skill_manage": _skill_manage, "delegate_task": _delegate_task,
    "terminal": _terminal, "session_search": _session_search, "memory": _memory,
}


def _unwrap_bridge(args: dict, offered: Collection[str] | None) -> tuple[str, dict]:
    target = args.get("name") or args.get("tool_name")
    inner = _json_value(args.get("arguments", args.get("args", {})))
    if not isinstance(target, str) or not target or not isinstance(inner, dict):
        raise Unmappable("tool_call needs name (a tool) and arguments (an object)")
    if offered is not None and canonical_name(target) not in {canonical_name(n) for n in offered}:
        raise Unmappable(f"tool_call: {target} is not among this run's tools")
    return target, inner


def to_ours(name: str, args: dict, offered: Collection[str] | None = None) -> list[tuple[str, dict]]:
    """The call(s) in our names and shapes: usually one; one per operation for a skill_manage batch."""
    if name == BRIDGE and offered is not None and BRIDGE not in offered and "name" in args:
        name, args = _unwrap_bridge(args, offered)
    name = canonical_name(name)
    shape = _ARGS.get(name)
    return [(name, a) for a in shape(args)] if shape else [(name, args)]
