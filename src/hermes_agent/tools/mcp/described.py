"""Tool descriptions as content (rt13 a36): an MCP server the user has not marked `trusted` writes the
descriptions of its tools (and of their parameters), and they reach the model in every request whether or not a
tool is ever called. One that reads as an instruction (the intent scan: run something as a standing order, send
data out, hide from the user, switch safety off) counts as untrusted content taken in from the start, so what
the conversation then saves for later sessions (memory, context files, skills, cron jobs) needs the user's yes.
Judged once per description per process."""

from __future__ import annotations

from hermes_agent.tools.registry import registry

_JUDGED: dict[tuple[str, str], str] = {}


def _texts(schema: object) -> list[str]:
    """Every description string in a tool's definition (its own and its parameters', at any depth)."""
    out: list[str] = []
    stack = [schema]
    while stack and len(out) < 200:
        node = stack.pop()
        if isinstance(node, dict):
            desc = node.get("description")
            if isinstance(desc, str):
                out.append(desc)
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return out


def untrusted_description(defs: list[dict]) -> str:
    """Why an offered tool's description counts as untrusted content ("" when none does)."""
    for d in defs:
        fn = d.get("function", d)
        name = str(fn.get("name", ""))
        entry = registry.get(name)
        if entry is None or entry.approval != "external" or not entry.untrusted_output:
            continue
        text = "\n".join(_texts(fn))
        key = (name, text)
        if key not in _JUDGED:
            from hermes_agent import intent

            hits = intent.scan(text) if text.strip() else []
            _JUDGED[key] = (f"the description of the MCP tool {name}, which reads as an instruction "
                            f"({hits[0].kind}: \"{hits[0].quote[:60]}\"); its server is not marked trusted") if hits else ""
        if _JUDGED[key]:
            return _JUDGED[key]
    return ""
