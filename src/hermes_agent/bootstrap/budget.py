"""Hard spending caps (budget.*): one Meter per agent (shared with its subagents and auxiliary calls) that every
provider bootstrap builds is wrapped in. Before a call it prices the request (input from the loop's token
estimate, output at max_tokens) and refuses one that would cross a cap; after it, the call's usage is recorded
in the spend ledger (state.db). `caps_for` says what caps a person has (team roles included)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from hermes_agent.config.settings import Settings
from hermes_agent.errors import BudgetExceeded, StorageError
from hermes_agent.events import BUDGET_NOTICE
from hermes_agent.messages import Message, Usage
from hermes_agent.providers.base import ChatRequest, OnDelta, Provider
from hermes_agent.providers.retry import FallbackProvider
from hermes_agent.storage.pricing import Price, cost_at, lookup
from hermes_agent.storage.spend import SpendRow, Spent

Notify = Callable[[str], None]
DEFAULT_OUTPUT = 4096  # output tokens assumed for a request that sets no max_tokens
WINDOWS = ("session", "day", "month")
_REFRESH = 2.0  # seconds a cached day/month total is trusted (other processes spend too)


@dataclass(frozen=True, slots=True)
class Caps:
    """One person's caps: None = no cap. Money in USD, tokens input + output."""

    session_usd: float | None = None
    day_usd: float | None = None
    month_usd: float | None = None
    session_tokens: int | None = None
    day_tokens: int | None = None
    month_tokens: int | None = None
    warn_at: float = 0.8
    config_prefix: str = "budget"  # where these caps are set, for the "raise it" hint

    def any(self) -> bool:
        return any(getattr(self, f"{w}_{u}") is not None for w in WINDOWS for u in ("usd", "tokens"))


_CAP_KEYS = tuple(f"{w}_{u}" for w in WINDOWS for u in ("usd", "tokens"))


def caps_for(settings: Settings, who: str, role: str | None = None) -> Caps:
    """The caps of a person: `budget.*`, overridden by `budget.cron.*` for cron runs, `budget.batch.*` for batch
    runs; for a gateway/API person by their team role's `team.roles.<role>.budget` (config/team.py; `role` when
    the frontend resolved it) and then by `budget.users.<platform:id>` (or `.<id>`): a person's own caps win."""
    b = settings.cfg.budget
    values = {k: getattr(b, k) for k in _CAP_KEYS}
    kind, _, ident = who.partition(":")
    prefix = "budget"
    layers: list[dict] = []
    if kind in ("cron", "batch"):
        layers, prefix = [getattr(b, kind) or {}], f"budget.{kind}"
    else:
        from hermes_agent.config.team import caps_for as role_caps

        by_role = role_caps(settings, who, role) if ident else {}
        users = b.users or {}
        key = who if who in users else ident if ident in users else ""
        layers = [by_role, users.get(key) or {}]
        if key:
            prefix = f'budget.users."{key}"'
        elif by_role:
            prefix = f"team.roles.{role or _role_of(settings, who)}.budget"
    for over in layers:
        for k, v in over.items():
            if k in values:
                values[k] = None if v is None else (int(v) if k.endswith("tokens") else float(v))
    return Caps(**values, warn_at=b.warn_at, config_prefix=prefix)  # type: ignore[arg-type]


def _role_of(settings: Settings, who: str) -> str:
    from hermes_agent.config.team import Team

    platform, _, user_id = who.partition(":")
    return Team(settings).person(platform, user_id).role


def month_start(now: float) -> float:
    d = datetime.fromtimestamp(now)
    return d.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()


def day_start(now: float) -> float:
    return datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


class Ledger:
    """Where spend lives: the session store once the agent has one (none: this run's memory only)."""

    def __init__(self, store: Callable[[], object | None]) -> None:
        self.store = store

    def add(self, row: SpendRow) -> None:
        store = self.store()
        if store is not None and not getattr(store, "read_only", None):
            try:
                store.add_spend(row)  # type: ignore[attr-defined]
            except StorageError:
                pass  # the cap still holds in memory for this run

    def spent(self, session_id: str | None, who: str, now: float) -> tuple[Spent, ...] | None:
        store = self.store()
        if store is None:
            return None
        try:
            return store.spent(session_id, who, day_start(now), month_start(now))  # type: ignore[attr-defined]
        except StorageError:
            return None  # an unreadable store: this run's own totals still hold


def _money(v: float) -> str:
    return f"${v:.4f}" if v < 1 else f"${v:.2f}"


class Meter:
    """Counts every call a person's work causes and refuses the one that would cross a cap. Thread-safe:
    subagents run in threads and share their parent's meter."""

    def __init__(self, settings: Settings, who: str, ledger: Ledger, session_id: Callable[[], str | None],
                 notify: Notify | None = None, caps: Caps | None = None, role: str | None = None) -> None:
        self.settings, self.who, self.ledger, self.session_id = settings, who, ledger, session_id
        self.caps = caps if caps is not None else caps_for(settings, who, role)
        self.notify = notify
        self._lock = threading.Lock()
        self._totals: dict[str, list[float]] = {}  # window -> [usd, tokens]
        self._loaded: tuple[str | None, float] = ("", 0.0)
        self._warned: set[str] = set()
        self._unpriced_told: set[str] = set()
        self._estimated_told = False
        self._tool_tokens: tuple[tuple[int, ...], int] = ((), 0)
        self._msg_chars: tuple[int, Message | None, int] = (0, None, 0)
        from .provider import own_prices

        self.own_prices = own_prices(settings)

    # -- pricing --------------------------------------------------------------------------
    def price(self, model: str) -> Price | None:
        """The price of the model that makes a call: the user's own (model.pricing, a fallback row's pricing:
        custom endpoints), else the pricing table."""
        return lookup(model, self.own_prices)

    def estimate_input(self, request: ChatRequest) -> int:
        """The loop's estimate (chars/4 of the messages) plus the tool definitions, as the loop counts them."""
        n = self._message_tokens(request.messages)
        if request.tools:
            key = tuple(id(d) for d in request.tools)
            if self._tool_tokens[0] != key:
                from hermes_agent.tools.tool_search import estimate_tokens as tool_tokens

                self._tool_tokens = (key, tool_tokens(request.tools))
            n += self._tool_tokens[1]
        return n

    def _message_tokens(self, messages: tuple[Message, ...]) -> int:
        """compression.estimate_tokens (chars/4), counting only what was appended since the last call."""
        from hermes_agent.core.compression import message_chars

        count, last, chars = self._msg_chars
        if not (0 < count <= len(messages) and messages[count - 1] is last):
            count, chars = 0, 0
        chars += sum(message_chars(m) for m in messages[count:])
        if messages:
            self._msg_chars = (len(messages), messages[-1], chars)
        return (chars + 3) // 4

    # -- totals ---------------------------------------------------------------------------
    def _fresh(self, now: float) -> dict[str, list[float]]:
        sid = self.session_id()
        same = self._loaded[0] == sid and bool(self._totals)
        if not same or now - self._loaded[1] > _REFRESH:
            spent = self.ledger.spent(sid, self.who, now)
            mine = self._totals if same else {}
            fresh = {w: list(mine.get(w, [0.0, 0.0])) for w in WINDOWS}
            if spent is not None:  # the store knows the person's day and month (and a stored session's spend)
                fresh["day"], fresh["month"] = [spent[1].usd, spent[1].tokens], [spent[2].usd, spent[2].tokens]
                if sid:
                    fresh["session"] = [spent[0].usd, float(spent[0].tokens)]
            self._totals = fresh
            self._loaded = (sid, now)
        return self._totals

    def totals(self) -> dict[str, tuple[float, int]]:
        """Spend per window now: {"session": (usd, tokens), "day": ..., "month": ...}."""
        with self._lock:
            return {w: (v[0], int(v[1])) for w, v in self._fresh(time.time()).items()}

    # -- the check and the record ---------------------------------------------------------
    def check(self, model: str, request: ChatRequest) -> None:
        """Raise BudgetExceeded when this call could cross a cap (no caps: returns at once)."""
        caps = self.caps
        if not caps.any():
            return
        tokens_in = self.estimate_input(request)
        tokens_out = request.max_tokens or self.settings.model.max_tokens or DEFAULT_OUTPUT
        price = self.price(model)
        cost = None if price is None else (tokens_in * price.input + tokens_out * price.output) / 1_000_000
        with self._lock:
            totals = self._fresh(time.time())
        for window in WINDOWS:
            usd, tokens = totals[window]
            cap = getattr(caps, f"{window}_usd")
            if cap is not None and cost is not None and usd + cost > cap:
                self._stop(window, "usd", _money(cap), _money(usd), f"up to {_money(cost)}", cap * 2)
            cap = getattr(caps, f"{window}_tokens")
            if cap is not None and tokens + tokens_in + tokens_out > cap:
                self._stop(window, "tokens", f"{cap:,} tokens", f"{int(tokens):,}",
                           f"up to {tokens_in + tokens_out:,} tokens", cap * 2)
        if price is None and any(getattr(caps, f"{w}_usd") is not None for w in WINDOWS):
            self._tell_unpriced(model)

    def _stop(self, window: str, unit: str, cap: str, spent: str, call: str, suggest: float) -> None:
        key = f"{self.caps.config_prefix}.{window}_{unit}"
        how = (f"-C {key}={suggest:g} or {key} in config.yaml" if self.caps.config_prefix == "budget"
               else f"{key} in config.yaml")
        whose = {"session": "this session", "day": "today", "month": "this month"}[window]
        raise BudgetExceeded(f"Budget reached: {window} cap {cap} ({key}); spent {spent} {whose}, the next model "
                             f"call could cost {call}. Raise it ({how}) and resume this session to go on.")

    def _tell_unpriced(self, model: str) -> None:
        if model not in self._unpriced_told:
            self._unpriced_told.add(model)
            if self.notify:
                self.notify(f"{BUDGET_NOTICE}{model} has no price (set model.pricing for a custom endpoint): "
                            "counting its tokens only, money caps cannot see it")

    def record(self, model: str, task: str, request: ChatRequest, reply: Message) -> None:
        """Add one finished call to the totals and the ledger; warn once per cap at warn_at of it."""
        usage = self.counted_usage(model, request, reply)
        price = self.price(model)
        cost = None if price is None else cost_at(price, usage)
        with self._lock:
            totals = self._fresh(time.time())  # before the row lands, so a reload cannot count it twice
            self.ledger.add(SpendRow(self.session_id() or "", self.who, model, task, usage.prompt_tokens,
                                     usage.completion_tokens, cost))
            for window in WINDOWS:
                totals[window][0] += cost or 0.0
                totals[window][1] += usage.prompt_tokens + usage.completion_tokens
        self._warn(totals)

    def counted_usage(self, model: str, request: ChatRequest, reply: Message) -> Usage:
        """What a call counts: the endpoint's usage when plausible (at least a quarter of hermes's own estimate from
        the request and the reply, chars/4), else the larger of the two: an endpoint that reports 0, nothing or a
        token count far below the text it moved (llama.cpp, proxies, a hostile relay, red-team rt7 a07) cannot
        lift a cap. Said once per meter when the estimate counted instead of the report."""
        from hermes_agent.core.compression import message_chars

        est_in = self.estimate_input(request)
        est_out = (message_chars(reply) + len(reply.reasoning or "") + 3) // 4
        told = reply.usage or Usage()
        if told.total * 4 >= est_in + est_out:  # a plausible report (chars/4 over-counts JSON and code): the truth
            return told
        usage = replace(told, prompt_tokens=max(told.prompt_tokens, est_in),
                        completion_tokens=max(told.completion_tokens, est_out))
        if usage.total > told.total * 1.1 and self.caps.any() and not self._estimated_told:
            self._estimated_told = True
            said = "no usage" if reply.usage is None else f"{told.total:,} tokens"
            if self.notify:
                self.notify(f"{BUDGET_NOTICE}{model} reported {said} for a call hermes estimates at {usage.total:,} "
                            "tokens: the caps count the estimate when it is larger")
        return usage

    def _warn(self, totals: dict[str, list[float]]) -> None:
        for window in WINDOWS:
            for unit, i in (("usd", 0), ("tokens", 1)):
                cap = getattr(self.caps, f"{window}_{unit}")
                key = f"{window}_{unit}"
                if cap and key not in self._warned and totals[window][i] >= self.caps.warn_at * cap:
                    self._warned.add(key)
                    shown = (f"{_money(totals[window][0])} of {_money(cap)}" if unit == "usd"
                             else f"{int(totals[window][1]):,} of {cap:,} tokens")
                    if self.notify:
                        share = totals[window][i] / cap
                        self.notify(f"{BUDGET_NOTICE}{share:.0%} of the {window} cap used ({shown}, "
                                    f"{self.caps.config_prefix}.{key})")

    def wrap(self, provider: Provider, task: str = "main") -> Provider:
        """`provider` with this meter in front of every call (idempotent)."""
        if isinstance(provider, MeteredProvider) and provider.meter is self:
            return provider
        return MeteredProvider(provider, self, task)


class MeteredProvider:
    """A Provider whose calls pass the meter first and are recorded after (the one accounting point). Over a
    fallback chain each link is metered on its own, so a call is checked and booked at the price of the model
    that makes it, not the primary's."""

    def __init__(self, inner: Provider, meter: Meter, task: str = "main") -> None:
        self.inner, self.meter, self.task = inner, meter, task
        self.links = isinstance(inner, FallbackProvider)
        if isinstance(inner, FallbackProvider):  # (narrowed for the type checker)
            inner.chain = [meter.wrap(link, task) for link in inner.chain]

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:  # a chain's: the model that answered last
        return self.inner.model

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        if self.links:
            return self.inner.complete(request, on_delta, cancel)
        model = self.inner.model
        self.meter.check(model, request)
        reply = self.inner.complete(request, on_delta, cancel)
        self.meter.record(model, self.task, request, reply)
        return reply

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> object:  # adapter extras (e.g. a fallback chain's state)
        return getattr(self.inner, name)


def standing(caps: Caps, totals: dict[str, tuple[float, int]]) -> list[tuple[str, str, str, float]]:
    """Rows (cap key, spent, cap, share used) for every cap that is set."""
    rows = []
    for window in WINDOWS:
        usd, tokens = totals[window]
        cap = getattr(caps, f"{window}_usd")
        if cap is not None:
            rows.append((f"{window}_usd", _money(usd), _money(cap), usd / cap if cap else 1.0))
        cap = getattr(caps, f"{window}_tokens")
        if cap is not None:
            rows.append((f"{window}_tokens", f"{tokens:,}", f"{cap:,} tokens", tokens / cap if cap else 1.0))
    return rows


def report(settings: Settings, who: str, meter: Meter | None = None, store: object | None = None,
           session_id: str | None = None, role: str | None = None) -> str:
    """What is left of each cap (`/budget` in the REPL and in chats), from a live meter or from the store."""
    if meter is None:
        caps = caps_for(settings, who, role)
        if not caps.any():
            return "No spending caps are set (budget.session_usd, day_usd, month_usd and *_tokens in config.yaml)."
        meter = Meter(settings, who, Ledger(lambda: store), lambda: session_id, caps=caps)
    rows = standing(meter.caps, meter.totals())
    if not rows:
        return "No spending caps are set (budget.session_usd, day_usd, month_usd and *_tokens in config.yaml)."
    lines = [f"Budget{f' of {who}' if who else ''}:"]
    for key, spent, cap, share in rows:
        lines.append(f"  {key.replace('_', ' ')}: {spent} of {cap} spent ({share:.0%}), "
                     f"{'nothing' if share >= 1 else f'{1 - share:.0%}'} left  [{meter.caps.config_prefix}.{key}]")
    unpriced = meter.price(settings.model.model) is None and any(k.endswith("usd") for k, *_ in rows)
    if unpriced:
        lines.append(f"  {settings.model.model or 'this model'} has no price: only tokens are counted "
                     "(set model.pricing for a custom endpoint)")
    return "\n".join(lines)


def overview(settings: Settings, store: object | None) -> list[tuple[str, str, str, str, float]]:
    """(who, cap key, spent, cap, share) for everyone with a cap: the owner, and each gateway user, cron and batch
    that spent this month (session caps against the session they spent in last). For insights and the dashboard."""
    now = time.time()
    people: dict[str, str | None] = {"": None}
    if store is not None:
        try:
            people.update(store.spenders(month_start(now)))  # type: ignore[attr-defined]
        except StorageError:
            pass
    rows = []
    for who, sid in people.items():
        caps = caps_for(settings, who)
        if not caps.any():
            continue
        meter = Meter(settings, who, Ledger(lambda: store), lambda sid=sid: sid, caps=caps)
        label = who or "owner"
        rows += [(label, f"{caps.config_prefix}.{key}", spent, cap, share)
                 for key, spent, cap, share in standing(caps, meter.totals())]
    return rows
