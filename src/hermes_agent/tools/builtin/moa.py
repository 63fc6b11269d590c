"""`mixture_of_agents`: one hard question to several reference models in parallel, their answers merged by an
aggregator model. Models come from Hermes's `moa` config (`moa.active_preset` or `moa.default_preset` ->
`moa.presets.<name>` with `reference_models: [{provider, model}]`, `aggregator: {provider, model}`,
`max_tokens`); a reference that fails or passes `moa.timeout` seconds (default 120) is left out and named."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait

from hermes_agent.config.schema import switch
from hermes_agent.messages import Message, system, user
from hermes_agent.providers.base import ChatRequest, Provider
from hermes_agent.storage.pricing import estimate_cost
from hermes_agent.tools.builtin._checks import moa_configured, preset
from hermes_agent.tools.registry import registry
from hermes_agent.tools.results import tool_error

MOA_SCHEMA = {
    "name": "mixture_of_agents",
    "description": (
        "Ask several strong models the same hard question in parallel; returns one answer synthesized from "
        "theirs. Slow and costly: only for genuinely hard reasoning, math, proofs or design trade-offs, "
        "never for routine work. Put all needed context in the prompt (the models see nothing else)."
    ),
    "parameters": {
        "type": "object",
        "properties": {"user_prompt": {"type": "string", "description": "The complete question"}},
        "required": ["user_prompt"],
    },
}

AGGREGATE = ("You are given answers from several models to the user's question. Critically evaluate them (some "
             "may be wrong or biased), then write one accurate, complete answer of your own. Do not mention the "
             "models or that answers were combined.\n\n{answers}")


def _label(row: Mapping) -> str:
    return "/".join(str(row[k]) for k in ("provider", "model") if row.get(k)) or "main model"


def _ask(make: Callable[[Mapping], Provider], row: Mapping, messages: tuple[Message, ...], max_tokens: int,
         cancel: threading.Event) -> tuple[str, float | None]:
    """One model's answer and its estimated cost (None: unknown price)."""
    provider = make(row)
    try:
        reply = provider.complete(ChatRequest(messages, max_tokens=max_tokens), cancel=cancel)
    finally:
        provider.close()
    text = (reply.content or "").strip()
    if not text:
        raise ValueError("empty answer")
    cost = estimate_cost(str(row.get("model") or ""), reply.usage) if reply.usage else None
    return text, cost


def _references(make, refs: list, prompt: str, max_tokens: int, timeout: float,  # type: ignore[no-untyped-def]
                interrupt: threading.Event) -> tuple[list[tuple[str, str]], list[str], list[float | None]]:
    """(label, answer) of each reference that answered in time; the failures named; their costs."""
    cancel = threading.Event()
    pool = ThreadPoolExecutor(max_workers=len(refs), thread_name_prefix="moa")
    futures = {pool.submit(_ask, make, row, (user(prompt),), max_tokens, cancel): row for row in refs}
    deadline = time.monotonic() + timeout
    pending = set(futures)
    while pending and time.monotonic() < deadline and not interrupt.is_set():
        _, pending = wait(pending, timeout=min(0.2, max(0.0, deadline - time.monotonic())))
    cancel.set()
    pool.shutdown(wait=False, cancel_futures=True)
    answers, failed, costs = [], [], []
    for fut, row in futures.items():
        if fut in pending:
            failed.append(f"{_label(row)}: no answer within {timeout:g}s")
        elif fut.exception() is not None:
            failed.append(f"{_label(row)}: {type(fut.exception()).__name__}: {fut.exception()}")
        else:
            text, cost = fut.result()
            answers.append((_label(row), text))
            costs.append(cost)
    return answers, failed, costs


def run_moa(args: dict, make: Callable[[Mapping], Provider], moa: Mapping, interrupt: threading.Event) -> str:
    prompt = str(args.get("user_prompt") or "").strip()
    if not prompt:
        return tool_error("user_prompt is required")
    name, conf = preset(moa)
    refs = [r for r in conf.get("reference_models") or [] if isinstance(r, Mapping)]
    if refs and not switch(conf.get("enabled"), True):
        return tool_error(f"the MoA preset {name!r} is turned off (moa.presets.{name}.enabled)")
    if not refs:
        return tool_error(f"no reference models configured: set moa.presets.{name}.reference_models "
                          "(a list of {provider, model}) in config.yaml")
    max_tokens = int(conf.get("max_tokens") or 4096)
    timeout = float(moa.get("timeout") or 120)
    t0 = time.monotonic()
    answers, failed, costs = _references(make, refs, prompt, max_tokens, timeout, interrupt)
    if not answers:
        return tool_error("every reference model failed", failures=failed)
    joined = "\n\n".join(f"[{i}] {text}" for i, (_, text) in enumerate(answers, 1))
    aggregator = conf.get("aggregator") if isinstance(conf.get("aggregator"), Mapping) else {}
    try:
        final, agg_cost = _ask(make, aggregator, (system(AGGREGATE.format(answers=joined)), user(prompt)),
                               max_tokens, interrupt)
    except Exception as exc:  # a provider boundary: fall back to the best-effort first answer
        final, agg_cost = answers[0][1], None
        failed.append(f"aggregator {_label(aggregator)}: {type(exc).__name__}: {exc} (first answer returned)")
    spent = [c for c in [*costs, agg_cost] if c is not None]
    out = {"response": final, "models": [label for label, _ in answers], "failed": failed,
           "seconds": round(time.monotonic() - t0, 2),
           "cost_usd": round(sum(spent), 6) if spent else None}
    return json.dumps(out, ensure_ascii=False)


def _handle(args: dict, **kw: object) -> str:
    ctx = kw["ctx"]
    return run_moa(args, ctx.provider_for, ctx.settings.cfg.moa, ctx.interrupt)  # type: ignore[attr-defined]


registry.register("mixture_of_agents", "moa", MOA_SCHEMA, _handle, check_fn=moa_configured, emoji="🧠",
                  needs={"provider_for"},
                  parallel_safe=False)
