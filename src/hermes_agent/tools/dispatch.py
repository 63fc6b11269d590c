"""Tool definitions for a run and the guarded call path: parse, coerce, hooks, dispatch, cap, wrap."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection

from hermes_agent import lazyre
from hermes_agent.lazylog import get_logger
from hermes_agent.messages import cap_result, safe_loads
from hermes_agent.tools import upstream_calls
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.hooks import HookBus
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import shown_name, tool_error
from hermes_agent.tools.toolsets import TOOLSETS, require_known, resolve_or_skip

log = get_logger(__name__)

DEFAULT_RESULT_CAP = 100_000
hooks = HookBus()


def resolve_tool_names(enabled_toolsets: list[str] | None = None,
                       disabled_toolsets: list[str] | None = None) -> set[str]:
    """Tool names selected by enabled/disabled toolsets (None enabled = every toolset). An enabled name
    nobody knows raises ToolError; a table entry that is broken (include cycle, unknown include) is
    logged once and left out, so it never takes the other toolsets down with it."""
    dynamic = registry.toolsets()
    if enabled_toolsets:
        require_known(enabled_toolsets, dynamic)
        names = {t for ts in enabled_toolsets for t in resolve_or_skip(ts, dynamic)}
        if any(ts.startswith("hermes-") for ts in enabled_toolsets):  # presets include MCP and plugin tools
            names.update(t for ts, tools in dynamic.items() if ts.startswith(("mcp-", "plugin-")) for t in tools)
    else:
        names = {t for ts in (*TOOLSETS, *dynamic) for t in resolve_or_skip(ts, dynamic)}
    require_known(disabled_toolsets or (), dynamic)
    for ts in disabled_toolsets or ():
        names -= set(resolve_or_skip(ts, dynamic))
    return names


def get_tool_definitions(enabled_toolsets: list[str] | None = None, disabled_toolsets: list[str] | None = None,
                         quiet_mode: bool = False) -> list[dict]:
    """OpenAI-format definitions of the available tools selected by the toolsets, each description
    naming only tools among them (see without_absent_tools)."""
    defs = registry.get_definitions(resolve_tool_names(enabled_toolsets, disabled_toolsets), quiet=quiet_mode)
    return without_absent_tools(defs)


_SENTENCE_END = lazyre.compile(r"(?<=[.!?])\s+")
_WORD = lazyre.compile(r"\w+")  # a name made of word characters is mentioned exactly where a word equals it


def without_absent_tools(defs: list[dict]) -> list[dict]:
    """Dynamic schema patching: a description's sentences (after the first) that name a tool this run does
    not offer are dropped, so no schema points the model at a tool it lacks. Only names with an
    underscore count (`web_search`, not `patch` or `memory`, which are also plain words). A tool with a
    dynamic_schema wrote its description for this run already (execute_code's script functions are not calls
    the model makes), so it is left alone."""
    present = {d["function"]["name"] for d in defs}
    known = set(registry.names()) | {t for spec in TOOLSETS.values() for t in spec.get("tools", [])}
    absent = {t for t in known - present if "_" in t}
    if not absent:
        return defs
    words = {t for t in absent if _WORD.fullmatch(t)}  # found as whole words: no pattern built per run
    others = [t for t in absent if t not in words]
    mention = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(others))) + r")\b") if others else None

    def names_absent(sentence: str) -> bool:
        return bool(words.intersection(_WORD.findall(sentence))) or bool(mention and mention.search(sentence))

    for d in defs:
        fn = d["function"]
        entry = registry.get(fn.get("name", ""))
        if entry is not None and entry.dynamic_schema is not None:
            continue
        sentences = _SENTENCE_END.split(fn.get("description") or "")
        kept = sentences[:1] + [s for s in sentences[1:] if not names_absent(s)]
        if len(kept) < len(sentences):
            fn["description"] = " ".join(kept)
    return defs


def parse_arguments(function_args: str | dict | None) -> dict:
    """Tool-call arguments as a dict; raises ValueError with a model-readable message."""
    if function_args is None or function_args == "":
        return {}
    if isinstance(function_args, dict):
        return function_args
    try:
        value = safe_loads(function_args)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
                         "send a JSON object matching the tool's parameters") from None
    if not isinstance(value, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def _coerce(value: object, spec: dict) -> object:
    kind = spec.get("type")
    if not isinstance(value, str):
        return value
    try:
        if kind == "integer":
            return int(value.strip())
        if kind == "number":
            return float(value.strip())
        if kind == "boolean" and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if kind in ("array", "object"):
            parsed = safe_loads(value)
            return parsed if isinstance(parsed, list | dict) else value
    except (ValueError, TypeError):
        return value
    return value


def coerce_to_schema(name: str, args: dict) -> dict:
    """Fix common model slips ("42" for 42, "true" for true) using the tool's JSON schema."""
    entry = registry.get(name)
    props = ((entry.schema.get("parameters") or {}).get("properties") or {}) if entry else {}
    return {k: _coerce(v, props[k]) if k in props else v for k, v in args.items()}


def handle_function_call(function_name: str, function_args: str | dict | None, task_id: str | None = None,
                         user_task: str | None = None, *, ctx: ToolContext | None = None,
                         hook_bus: HookBus | None = None, offered: Collection[str] | None = None) -> str:
    """Run one tool call and always return a JSON string (errors included). Hooks: `hook_bus`, else
    the context's bus, else the process-wide one. Upstream Hermes's names and argument shapes are turned
    into ours first (upstream_calls); with `offered`, a tool outside it is refused as unknown."""
    bus = hook_bus or (ctx.hook_bus if ctx is not None else None) or hooks
    try:
        try:
            calls = upstream_calls.to_ours(function_name, parse_arguments(function_args), offered)
        except ValueError as exc:
            return tool_error(f"Invalid arguments for {shown_name(function_name)}: {exc}")
        results = [_run_one(name, args, offered, task_id, user_task, ctx, bus) for name, args in calls]
        if len(results) == 1:
            return results[0]
        return json.dumps({"results": [_as_json(r) for r in results]}, ensure_ascii=False)
    except Exception as exc:
        log.exception("tool %s failed outside its handler", function_name)
        return tool_error(f"Error executing {shown_name(function_name)}: {type(exc).__name__}: {exc}")


def _as_json(result: str) -> object:
    try:
        return safe_loads(result)
    except ValueError:
        return result


def _run_one(name: str, raw_args: dict, offered: Collection[str] | None, task_id: str | None,
             user_task: str | None, ctx: ToolContext | None, bus: HookBus) -> str:
    entry = registry.get(name)
    if entry is None or not _is_offered(name, offered):
        known = ", ".join(sorted(offered) if offered is not None else registry.names()[:40])
        return tool_error(f"Unknown tool: {shown_name(name)}. Available tools: {known}")
    args = coerce_to_schema(name, raw_args)
    from hermes_agent.tools.confined import CONFINED_ORIGIN

    origin = CONFINED_ORIGIN.get()
    since, clean = _call_started(ctx), ctx is not None and not ctx.untrusted
    if ctx is not None and (ctx.traffic_watch or origin):  # what confined code fetched since the last look
        _taint_by_traffic(origin or "a command run earlier", ctx)
    if ctx is not None and not ctx.untrusted:  # ... and read of what tainted sessions wrote (tools/readwatch.py)
        from hermes_agent.tools import readwatch

        readwatch.look(ctx, "before " + name)
    if not (clean and ctx.untrusted):  # tainted before, or not by bytes seen now: the window starts with this call
        since = ctx.last_call_ns if ctx is not None else 0
    if ctx is not None and entry.approval == "command" and not ctx.untrusted:
        _reads_tainted_files(entry, args, ctx)
    blocked = bus.pre_tool_call(name, args, ctx)
    if blocked is not None:
        return tool_error(f"Blocked: {blocked.reason}", blocked=True)
    started = time.perf_counter()
    before = _guard_before(entry, args, ctx)
    if ctx is not None and entry.approval == "command":  # confined code: its script's RPC calls come before its end
        ctx.traffic_watch = True  # from now on they (and every later call) read the counters first
        if entry.brings_untrusted(args):  # ... and are judged as tainted when its text fetches (rt7 a08)
            ctx.taint(f"the result of {name}")
    result = registry.dispatch(name, args, task_id=task_id, user_task=user_task, ctx=ctx)
    if ctx is not None and entry.brings_untrusted(args):
        ctx.taint(f"the result of {name}")
    if ctx is not None and entry.approval == "command":
        _taint_by_traffic(name, ctx)
    if ctx is not None and not ctx.untrusted:
        from hermes_agent.tools import readwatch

        readwatch.look(ctx, "after " + name)
        readwatch.shown(ctx, result)  # a name, link target or xattr a tainted session made, shown (readnames.py)
    if ctx is not None and ctx.untrusted:
        from hermes_agent.tools import taintmark

        taintmark.after_call(ctx, entry.approval == "command", since)
    result = _guard_after(entry, args, before, result, ctx)
    result = cap_result(result, entry.max_result_size_chars or DEFAULT_RESULT_CAP)
    return bus.post_tool_call(name, args, result, ctx, (time.perf_counter() - started) * 1000)


def _is_offered(name: str, offered: Collection[str] | None) -> bool:
    """`name` (ours) is among the offered tools, offered under our name or upstream's."""
    if offered is None or (name in offered and upstream_calls.canonical_name(name) == name):
        return True
    return name in {upstream_calls.canonical_name(n) for n in offered}


def _call_started(ctx: ToolContext | None) -> int:
    """When the previous tool call of this conversation started (now for the first): bytes the counters show
    now may have come in since then (tools/taintmark.py: where the ledger's taint window starts)."""
    if ctx is None:
        return 0
    from hermes_agent.memory.ctxledger import stamp_now_ns

    now = stamp_now_ns()  # the kernel's file-stamp clock (coarse): a window from here covers every later change
    since, ctx.last_call_ns = ctx.last_call_ns or now, now
    return since


def _reads_tainted_files(entry: object, args: dict, ctx: ToolContext) -> None:
    """A command or script naming a file that a tainted session wrote taints this conversation before it runs."""
    subject = entry.subject(args)  # type: ignore[attr-defined]
    if subject is None or not subject.command:
        return
    from hermes_agent.tools import taintmark

    try:
        cwd = ctx.backend().cwd()
    except Exception:  # noqa: BLE001 - no backend yet: the workspace
        cwd = None
    taintmark.command_reads(ctx, subject.command, cwd)


def _taint_by_traffic(name: str, ctx: ToolContext) -> None:
    """Provenance by capability, not command text (red-team a08): a local command that received bytes from
    outside its sandbox's network namespace, or ran where nobody can tell (the host's network), taints the
    conversation. Remote backends keep the command-text rule alone. Read after every command tool call and,
    once one ran, before every tool call (a background process may fetch between calls; a few us each), tainted
    or not: the counters are "since the last look"."""
    try:
        backend = ctx.backend()
    except Exception:  # noqa: BLE001 - no backend: nothing ran
        return
    probe = getattr(backend, "network_input", None)
    if probe is None:
        return
    seen = probe()
    if seen is True:
        ctx.taint(f"the result of {name} (its commands received data from the network)")
    elif seen is None:
        ctx.taint(f"the result of {name} (it ran with network access hermes cannot watch: "
                  "anything it fetched counts as untrusted)")


def _guard_before(entry: object, args: dict, ctx: ToolContext | None) -> list[str] | None:
    """Lines about context files changed since the last look, when this call runs confined code
    (tools/ctxwatch.py); None when this call is not watched."""
    from hermes_agent.tools import ctxguard

    if ctx is None or not ctxguard.runs_confined_code(entry.approval):
        return None
    from hermes_agent.tools import ctxwatch

    try:
        return ctxwatch.before_call(ctx, ctx.session_id)
    except OSError:
        log.warning("could not look at the context files before %s", entry.name, exc_info=True)
        return []


def _guard_after(entry: object, args: dict, before: list[str] | None, result: str, ctx: ToolContext | None) -> str:
    """Context files a confined call changed are put back unless the user says yes; a file tool's write of one
    joins the session's baseline. The model is told in the result, the user by ctx.notice."""
    from hermes_agent.tools import ctxwatch

    if ctx is None:
        return result
    if before is None:
        subject = entry.subject(args) if entry.approval == "writes" else None
        from hermes_agent.tools.confined import CONFINED_ORIGIN

        if subject is not None and subject.paths and ctx.ctx_watch is not None and not CONFINED_ORIGIN.get():
            ctxwatch.after_write(ctx, list(subject.paths))  # hermes's own write (a script's is judged with it)
        if subject is not None and subject.paths and ctx.untrusted:
            from hermes_agent.tools import taintmark

            taintmark.on_write(ctx, list(subject.paths))
        return result
    try:
        lines = before + ctxwatch.after_call(ctx, entry.name, ctx.session_id)
    except OSError:
        log.warning("could not look at the context files after %s", entry.name, exc_info=True)
        lines = before
    if not lines:
        return result
    line = "\n".join(dict.fromkeys(lines))
    if ctx.notice is not None:
        ctx.notice(line)
    else:
        log.warning("%s", line)
    try:
        value = safe_loads(result)
    except ValueError:
        value = None
    if isinstance(value, dict):
        value["context_files"] = line
        return json.dumps(value, ensure_ascii=False)
    return f"{result}\n[{line}]"
