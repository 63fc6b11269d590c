"""Provider chains: the main model with retries and fallbacks, and the auxiliary model for side tasks."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hermes_agent import paths
from hermes_agent.config.settings import ModelSettings, Settings, parse_pricing
from hermes_agent.errors import ConfigError
from hermes_agent.messages import user
from hermes_agent.providers.base import ChatRequest, Provider
from hermes_agent.providers.caching import apply_cache_breakpoints
from hermes_agent.providers.http import IdlePolicy, Proxy
from hermes_agent.providers.openai_chat import OpenAIChatProvider
from hermes_agent.providers.profiles import resolve_endpoint
from hermes_agent.providers.retry import FallbackProvider, RetryingProvider
from hermes_agent.storage.pricing import Price

if TYPE_CHECKING:
    from .budget import Meter

Notify = Callable[[str], None]


def _fallback_models(settings: Settings) -> list[ModelSettings]:
    out = []
    for i, row in enumerate(settings.cfg.fallback_providers):
        if not isinstance(row, dict):
            raise ConfigError(f"{settings.config_file}: fallback_providers[{i}] must be a mapping")
        key = row.get("api_key") or (settings.env.get(row["key_env"], "") if row.get("key_env") else "")
        out.append(ModelSettings(provider=str(row.get("provider") or "custom"), model=str(row.get("model") or ""),
                                 base_url=str(row.get("base_url") or ""), api_key=str(key or ""),
                                 pricing=parse_pricing(row.get("pricing"), f"fallback_providers[{i}].pricing")))
    return out


def own_prices(settings: Settings) -> dict[str, Price]:
    """The prices the user set, by model name: `model.pricing` for the main model and a fallback row's `pricing`
    for its model (custom endpoints); the main model's wins a name they share. A call is priced by the model
    that answered it."""
    out: dict[str, Price] = {}
    for m in reversed([settings.model, *_fallback_models(settings)]):
        if m.pricing is not None and m.model:
            out[m.model] = Price(*m.pricing)
    return out


def proxy_for(base_url: str, env: Mapping[str, str]) -> Proxy | None:
    """The proxy from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (either case) honouring NO_PROXY."""
    scheme = "https" if base_url.startswith("https:") else "http"
    names = (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY")
    url = next((env[n] for n in names if env.get(n, "").strip()), "")
    if not url:
        return None
    bypass = (env.get("no_proxy") or env.get("NO_PROXY") or "").split(",")
    return Proxy(url.strip() if "://" in url else f"http://{url.strip()}", tuple(b for b in bypass if b.strip()))


def _single(settings: Settings, model: ModelSettings, notify: Notify | None) -> Provider:
    env = settings.env
    if paths.auth_files(settings.home):  # Hermes's credential pools (a profile's, then its root's)
        from hermes_agent.providers.auth_store import env_with_pool_keys
        from hermes_agent.providers.profiles import PROFILES

        env = env_with_pool_keys(settings.home, env, {name: p.key_env for name, p in PROFILES.items()})
    ep = resolve_endpoint(model, env, str(settings.config_file))
    hook = None
    if settings.cfg.prompt_caching.enabled:
        hook = functools.partial(apply_cache_breakpoints, ttl=settings.cfg.prompt_caching.cache_ttl)
    inner = OpenAIChatProvider(ep.base_url, ep.api_key, ep.model, name=ep.provider,
                               timeout=settings.cfg.agent.request_timeout, wire_hook=hook,
                               proxy=proxy_for(ep.base_url, settings.env), idle=_idle_policy(settings, notify),
                               max_reply_chars=settings.cfg.agent.max_reply_chars)
    retries = settings.cfg.agent.api_max_retries
    return RetryingProvider(inner, retries, settings.cfg.agent.retry_base_delay, notify=notify)


def _idle_policy(settings: Settings, notify: Notify | None) -> IdlePolicy:
    """agent.stream_notice_after / agent.stream_idle_timeout: report, then abandon, a silent endpoint."""
    notice = settings.cfg.agent.stream_notice_after
    give_up = settings.cfg.agent.stream_idle_timeout

    def on_notice(silent: float) -> None:
        if notify is not None:
            notify(f"the model has sent nothing for {silent:.0f}s; still waiting "
                   f"(gives up after {give_up:g}s, agent.stream_idle_timeout)")

    return IdlePolicy(notice, give_up, on_notice)


def build_provider(settings: Settings, notify: Notify | None = None, meter: Meter | None = None,
                   task: str = "main") -> Provider:
    """Primary endpoint plus `fallback_providers`, each with retries and backoff; behind `meter` (spending
    caps) when given."""
    chain = [_single(settings, m, notify) for m in [settings.model, *_fallback_models(settings)]]
    provider = chain[0] if len(chain) == 1 else FallbackProvider(chain, notify=notify)
    return meter.wrap(provider, task) if meter is not None else provider


def auxiliary_provider(settings: Settings, task: str, main: Provider) -> Provider:
    """The provider for a side task (`auxiliary.<task>` in config), else the main one; metered like `main`."""
    row = settings.cfg.auxiliary.get(task) or {}
    if not isinstance(row, dict):
        return main
    chosen = str(row.get("provider") or "").strip()
    chosen = "" if chosen.lower() == "auto" else chosen  # Hermes's default rows: "auto" is the main endpoint
    if not (row.get("model") or row.get("base_url") or chosen):
        return main
    meter = getattr(main, "meter", None)  # a metered main provider: its side tasks spend the same budget
    return provider_from_row(settings, {**row, "provider": chosen}, meter, f"aux:{task}")


def provider_from_row(settings: Settings, row: Mapping, meter: Meter | None = None, task: str = "aux") -> Provider:
    """A provider from a config row {provider, model, base_url, api_key} (auxiliary tasks, MoA models); what
    the row leaves out comes from the main model (its endpoint only when the row names no other provider:
    `provider: custom` beside a custom main model is that model's endpoint)."""
    chosen = str(row.get("provider") or "").strip()
    chosen = "" if chosen.lower() == "auto" else chosen
    base = settings.model
    same = not chosen or chosen.lower() == base.provider.lower()
    model = ModelSettings(provider=chosen or base.provider, model=str(row.get("model") or base.model),
                          base_url=str(row.get("base_url") or (base.base_url if same else "")),
                          api_key=str(row.get("api_key") or (base.api_key if same else "")))
    provider = _single(settings, model, None)
    return meter.wrap(provider, task) if meter is not None else provider


def summarizer(provider: Provider, max_tokens: int = 4000, timeout: float | None = None) -> Callable[[str], str]:
    """A `summarize(prompt) -> text` callable over a provider (used by compression); with `timeout`, a call
    that has not answered by then raises TimeoutError (the request is left to finish on its own thread)."""

    def summarize(prompt: str) -> str:
        return provider.complete(ChatRequest((user(prompt),), max_tokens=max_tokens)).content or ""

    if not timeout or timeout <= 0:
        return summarize

    def bounded(prompt: str) -> str:
        import threading

        box: dict[str, object] = {}

        def run() -> None:
            try:
                box["text"] = summarize(prompt)
            except BaseException as exc:  # handed to the caller below
                box["error"] = exc

        worker = threading.Thread(target=run, name="compression-summary", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise TimeoutError(f"no summary within {timeout:g}s")
        if "error" in box:
            raise box["error"]  # type: ignore[misc]
        return str(box.get("text") or "")

    return bounded


def titler(provider: Provider) -> Callable[[str, str], str]:
    """A `title(first_message, first_answer) -> str` callable (sessions.title_mode: llm)."""

    def title(question: str, answer: str) -> str:
        prompt = ("Write a title of at most 6 words for this conversation. Reply with the title only.\n\n"
                  f"User: {question[:1500]}\n\nAssistant: {answer[:1500]}")
        return provider.complete(ChatRequest((user(prompt),), max_tokens=30)).content or ""

    return title
