"""The central tool registry: tools self-register with typed traits (how they run in parallel, how the
approval gate judges them, whether subagents get them, what ToolContext state they need); definitions
are filtered by check_fn; dispatch never raises."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from hermes_agent.approval.subject import ApprovalSubject
from hermes_agent.lazylog import get_logger
from hermes_agent.tools.results import shown_name, tool_error

log = get_logger(__name__)

Handler = Callable[..., object]
Approval = Literal["none", "command", "writes", "external"]
SubjectFn = Callable[[dict], ApprovalSubject | None]
APPROVALS: tuple[Approval, ...] = ("none", "command", "writes", "external")
_ASYNC_TIMEOUT_S = 300.0


@dataclass(slots=True)
class ToolEntry:
    """One registered tool and its traits:
    - parallel_safe: may run at the same time as the other calls of one model message; a tool that is
      not, but names a `path_arg`, still runs in parallel when no other such call names the same path;
    - approval: how the gate judges a call: "none", "command" (shell text), "writes" (paths modified),
      "external" (MCP/plugin tools: asked when their server's config says so); `approval_subject(args)`
      returns what is judged (None: nothing to judge for these arguments);
    - subagent_ok: delegate_task may hand the tool to a subagent;
    - needs: ToolContext fields that must be set for the tool to run (else dispatch answers
      "<name> is not available in this context");
    - preview_arg / show_name: how frontends label a call (`ls -la` vs `read_file src/app.py`);
    - dynamic_schema(offered names) -> schema: rebuilt for each agent so it names only tools it offers;
    - untrusted_output (bool, or a function of the arguments): the result carries content nobody vouches
      for (web pages, external MCP tools, downloads); once one is taken in, the conversation is tainted;
    - persists(args) -> what future sessions would see changed (None: nothing): such calls need the
      user's approval in a tainted conversation (tools/provenance.py, approval/gate.py check_persist);
    - unlocked_by: offered only once the conversation has called that tool (a family behind one entry point,
      e.g. the browser's commands after browser_navigate: the first request stays small)."""

    name: str
    toolset: str
    schema: dict
    handler: Handler
    check_fn: Callable[[], object] | None = None
    requires_env: list[str] = field(default_factory=list)
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    max_result_size_chars: int | None = None
    parallel_safe: bool = True
    approval: Approval = "none"
    approval_subject: SubjectFn | None = None
    subagent_ok: bool = True
    needs: frozenset[str] = frozenset()
    path_arg: str | None = None
    preview_arg: str | None = None
    show_name: bool = True
    dynamic_schema: Callable[[frozenset[str]], dict] | None = None
    untrusted_output: bool | Callable[[dict], bool] = False
    persists: Callable[[dict], str | None] | None = None
    unlocked_by: str | None = None

    def subject(self, args: dict) -> ApprovalSubject | None:
        """What the approval gate judges for these arguments (None: nothing)."""
        return self.approval_subject(args) if self.approval_subject is not None else None

    def brings_untrusted(self, args: dict) -> bool:
        """Does this call's result carry untrusted content?"""
        flag = self.untrusted_output
        try:
            return bool(flag(args)) if callable(flag) else bool(flag)
        except Exception:
            return True  # cannot tell: assume it does

    def persisted(self, args: dict) -> str | None:
        """What this call would change for future sessions (None: nothing)."""
        if self.persists is None:
            return None
        try:
            return self.persists(args)
        except Exception:
            return f"{self.name} (its effect could not be checked)"

    def definition(self, offered: frozenset[str] | None = None) -> dict:
        """The OpenAI-format function definition (for an agent offering `offered`, when the schema depends on it)."""
        schema = self.dynamic_schema(offered) if self.dynamic_schema is not None and offered is not None else self.schema
        fn = {k: v for k, v in schema.items() if k != "name"}
        fn = {"name": self.name, **fn}
        fn.setdefault("description", self.description)
        fn.setdefault("parameters", {"type": "object", "properties": {}})
        return {"type": "function", "function": fn}


class ManifestEntry(ToolEntry):
    """A built-in tool known from the tool manifest (tools/manifest.py) before its module is imported: its
    schema and plain traits are the module's own; its handler (and any trait function that lives in the
    module) imports the module on first use, which registers the real entry into `real`."""

    __slots__ = ("module", "real")

    def __init__(self, module: str, **fields: object) -> None:
        super().__init__(**fields)  # type: ignore[arg-type]
        self.module = module
        self.real: ToolEntry | None = None

    def load(self) -> ToolEntry:
        """The real entry, importing the tool's module the first time."""
        if self.real is None:
            import importlib

            importlib.import_module(self.module)
        if self.real is None:
            raise RuntimeError(f"{self.module} no longer registers {self.name} (the tool manifest is out of date: "
                               "python -m hermes_agent.tools.manifest)")
        return self.real


class LazyTrait:
    # A trait function of a ManifestEntry that lives in the tool's module: loads it, then calls the real one.
    __slots__ = ("entry", "trait")

    def __init__(self, entry: ManifestEntry, trait: str) -> None:
        self.entry, self.trait = entry, trait

    def __call__(self, *args: object, **kwargs: object) -> object:
        return getattr(self.entry.load(), self.trait)(*args, **kwargs)

    def explain(self) -> str:
        """What the real check function says is missing."""
        return check_explanation(getattr(self.entry.load(), self.trait))


_PLACEHOLDERS: dict[str, ManifestEntry] = {}  # name -> the placeholder registered for it (once per process)


class _AsyncBridge:
    """Runs coroutines from sync code: a persistent loop on the main thread, one per worker
    thread, and a disposable thread when the caller is already inside a running loop."""

    def __init__(self) -> None:
        self._local = threading.local()

    def run(self, coro_factory: Callable[[], object]) -> object:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = getattr(self._local, "loop", None)
            if loop is None or loop.is_closed():
                loop = asyncio.new_event_loop()
                self._local.loop = loop
            return loop.run_until_complete(coro_factory())
        return self._run_in_thread(coro_factory)

    @staticmethod
    def _run_in_thread(coro_factory: Callable[[], object]) -> object:
        import asyncio

        box: dict[str, object] = {}

        def target() -> None:
            try:
                box["value"] = asyncio.run(asyncio.wait_for(coro_factory(), _ASYNC_TIMEOUT_S))
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        t = threading.Thread(target=target, name="hermes-async-tool", daemon=True)
        t.start()
        t.join()
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return box.get("value")


class ToolRegistry:
    """Singleton store of ToolEntry objects keyed by name."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._lock = threading.RLock()
        self._bridge = _AsyncBridge()
        self.generation = 0
        self._unlockers: tuple[int, frozenset[str]] = (-1, frozenset())
        self._fills = False  # the process-wide registry: built-in modules fill their manifest placeholders

    def register(self, name: str, toolset: str, schema: dict, handler: Handler,
                 check_fn: Callable[[], object] | None = None, requires_env: Iterable[str] | None = None,
                 is_async: bool = False, description: str = "", emoji: str = "",
                 max_result_size_chars: int | None = None, parallel_safe: bool = True, *,
                 approval: Approval = "none", approval_subject: SubjectFn | None = None, subagent_ok: bool = True,
                 needs: Iterable[str] = (), path_arg: str | None = None, preview_arg: str | None = None,
                 show_name: bool = True, dynamic_schema: Callable[[frozenset[str]], dict] | None = None,
                 untrusted_output: bool | Callable[[dict], bool] = False,
                 persists: Callable[[dict], str | None] | None = None, unlocked_by: str | None = None) -> ToolEntry:
        """Add (or replace, with a warning) a tool; the keyword traits are described on ToolEntry."""
        if approval not in APPROVALS:
            raise ValueError(f"tool {name!r}: approval must be one of {', '.join(APPROVALS)}, got {approval!r}")
        entry = ToolEntry(name, toolset, dict(schema), handler, check_fn, list(requires_env or ()),
                          bool(is_async), description or str(schema.get("description", "")), emoji,
                          max_result_size_chars, bool(parallel_safe), approval, approval_subject, bool(subagent_ok),
                          frozenset(needs), path_arg, preview_arg, bool(show_name), dynamic_schema, untrusted_output,
                          persists, unlocked_by)
        return self.add(entry, sys._getframe(1).f_globals.get("__name__"))  # the registering module

    def add(self, entry: ToolEntry, origin: str | None = None) -> ToolEntry:
        """Add (or replace) an already built entry (copies between registries keep every trait). In the
        process-wide registry, a built-in tool registered by its module (`origin`) while a manifest placeholder
        stands for it fills that placeholder, and takes its place only if it still holds the name: a plugin that
        replaced (or code that removed) the placeholder keeps the name, as if the module had loaded first."""
        name, toolset = entry.name, entry.toolset
        with self._lock:
            old = self._tools.get(name)
            held = _PLACEHOLDERS.get(name) if self._fills else None
            if held is not None and held.real is None and origin == held.module:
                held.real = entry
                if old is not held:
                    return entry
            elif old is not None and old.toolset != toolset:
                log.warning("tool %r from toolset %r replaced by toolset %r", name, old.toolset, toolset)
            self._tools[name] = entry
            self.generation += 1
        return entry

    def add_placeholder(self, entry: ManifestEntry) -> bool:
        """Register a manifest placeholder (tools/manifest.py) unless the name is taken or was deferred
        before (a placeholder a plugin replaced stays replaced)."""
        with self._lock:
            if entry.name in self._tools or entry.name in _PLACEHOLDERS:
                return False
            _PLACEHOLDERS[entry.name] = entry
            self._tools[entry.name] = entry
            self.generation += 1
        return True

    def deregister(self, name: str) -> bool:
        with self._lock:
            self.generation += 1
            return self._tools.pop(name, None) is not None

    def get(self, name: str) -> ToolEntry | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def entries(self) -> list[ToolEntry]:
        return [self._tools[n] for n in sorted(self._tools)]

    def unlockers(self) -> frozenset[str]:
        """Names of tools whose first call unlocks others (see ToolEntry.unlocked_by)."""
        cached = self._unlockers
        if cached[0] != self.generation:
            cached = (self.generation, frozenset(e.unlocked_by for e in self._tools.values() if e.unlocked_by))
            self._unlockers = cached
        return cached[1]

    def toolsets(self) -> dict[str, list[str]]:
        """Toolset name -> registered tool names."""
        out: dict[str, list[str]] = {}
        for entry in self.entries():
            out.setdefault(entry.toolset, []).append(entry.name)
        return out

    @staticmethod
    def _check(entry: ToolEntry, cache: dict[int, bool]) -> bool:
        if entry.check_fn is None:
            return True
        key = id(entry.check_fn)
        if key not in cache:
            try:
                cache[key] = bool(entry.check_fn())
            except Exception:
                log.debug("check_fn of %s raised; tool unavailable", entry.name, exc_info=True)
                cache[key] = False
        return cache[key]

    def why_unavailable(self, name: str) -> str:
        """What the failed check of `name` says is missing ('' when it cannot say)."""
        entry = self._tools.get(name)
        return check_explanation(entry.check_fn) if entry is not None and entry.check_fn is not None else ""

    def availability(self, tool_names: Iterable[str]) -> dict[str, bool]:
        """Name -> available, running each distinct check_fn once."""
        cache: dict[int, bool] = {}
        return {n: self._check(e, cache) for n in tool_names if (e := self._tools.get(n))}

    def get_definitions(self, tool_names: Iterable[str], quiet: bool = False) -> list[dict]:
        """OpenAI-format schemas of the available tools among `tool_names`, sorted by name."""
        ok = self.availability(set(tool_names))
        offered = frozenset(n for n in ok if ok[n])
        return [self._tools[n].definition(offered) for n in sorted(offered)]

    def is_toolset_available(self, toolset: str) -> bool:
        """True when at least one tool of the toolset passes its check."""
        names = [e.name for e in self.entries() if e.toolset == toolset]
        return any(self.availability(names).values())

    def dispatch(self, name: str, args: dict, **kwargs: object) -> str:
        """Run a tool; unknown names and handler exceptions come back as error JSON."""
        entry = self._tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {shown_name(name)}")
        if isinstance(entry, ManifestEntry):
            try:
                entry = entry.load()
            except Exception as exc:
                log.warning("tool %s could not be loaded", name, exc_info=True)
                return tool_error(f"{name} could not be loaded: {type(exc).__name__}: {exc}")
        ctx = kwargs.get("ctx")
        if any(getattr(ctx, need, None) is None for need in entry.needs):
            return tool_error(f"{name} is not available in this context")
        try:
            if entry.is_async or _coroutine_function(entry.handler):
                result = self._bridge.run(lambda: entry.handler(args, **kwargs))
            else:
                result = entry.handler(args, **kwargs)
                if not isinstance(result, str | dict | list) and _awaitable(result):
                    awaitable = result
                    result = self._bridge.run(lambda: _await(awaitable))
        except Exception as exc:
            log.info("tool %s failed", name, exc_info=True)
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")
        if isinstance(result, str):
            return result
        if isinstance(result, dict | list):
            return json.dumps(result, ensure_ascii=False, default=str)
        return tool_error(f"Tool handler returned unsupported result type: {type(result).__name__}")


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE


def _coroutine_function(handler: object) -> bool:
    """inspect.iscoroutinefunction, answered for a plain function without importing inspect (with ast, dis and
    tokenize: ~36 M instructions that a run whose tools are all plain functions never needs)."""
    if type(handler) is type(_coroutine_function):
        return bool(handler.__code__.co_flags & _CO_COROUTINE)  # type: ignore[attr-defined]
    import inspect

    return inspect.iscoroutinefunction(handler)


def _awaitable(result: object) -> bool:
    import inspect

    return inspect.isawaitable(result)


async def _await(awaitable: object) -> object:
    return await awaitable  # type: ignore[misc]


registry = ToolRegistry()
registry._fills = True


def discover_builtin_tools(tools_dir: str | None = None, toolsets: Iterable[str] | None = None) -> list[str]:
    """Import the built-in tool modules that register tools (those `toolsets` need; see tools/discovery.py)."""
    from hermes_agent.tools.discovery import discover_builtin_tools as _discover

    return _discover(tools_dir, toolsets=toolsets)


def check_explanation(check: Callable[..., object]) -> str:
    """A check_fn's own account of what is missing: its `explain()` when it has one, else its docstring's first
    line ('' when neither says anything)."""
    explain = getattr(check, "explain", None)
    if callable(explain):
        try:
            why = str(explain())
        except Exception:  # a requirement check is third-party code: say nothing rather than crash
            why = ""
        if why:
            return why
    doc = (getattr(check, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else ""
