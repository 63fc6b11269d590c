"""Retries with backoff (honouring Retry-After) and an ordered fallback chain over Providers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from hermes_agent.errors import AuthError, ProviderError, StreamStalledError
from hermes_agent.lazylog import get_logger
from hermes_agent.messages import Message
from hermes_agent.providers.base import ChatRequest, OnDelta, Provider

log = get_logger(__name__)
Notify = Callable[[str], None]


class RetryingProvider:
    """Retries retryable ProviderErrors up to `max_retries` times with exponential backoff. A stalled
    stream is retried only while another silent attempt would still end within `stall_budget` seconds
    of the first one, so an endpoint that never answers fails in bounded time."""

    def __init__(self, inner: Provider, max_retries: int = 3, base_delay: float = 1.0, max_delay: float = 60.0,
                 notify: Notify | None = None, sleep: Callable[[float], None] = time.sleep,
                 stall_budget: float = 300.0) -> None:
        self.inner, self.max_retries, self.stall_budget = inner, max_retries, stall_budget
        self.base_delay, self.max_delay = base_delay, max_delay
        self.notify, self._sleep = notify, sleep
        self.name, self.model = inner.name, inner.model

    def delay_for(self, attempt: int, error: ProviderError) -> float:
        if error.retry_after is not None:
            return min(error.retry_after, self.max_delay)
        import random  # on a retry only: not every run's import

        return min(self.base_delay * (2 ** attempt) * (0.5 + random.random() / 2), self.max_delay)

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        attempt, started = 0, time.monotonic()
        while True:
            try:
                return self.inner.complete(request, on_delta, cancel)
            except ProviderError as exc:
                if not exc.retryable or attempt >= self.max_retries or (cancel and cancel.is_set()):
                    raise
                wait = self.delay_for(attempt, exc)
                if isinstance(exc, StreamStalledError) and \
                        time.monotonic() - started + wait + exc.silent_for > self.stall_budget:
                    raise
                attempt += 1
                if self.notify:
                    self.notify(f"{exc} — retrying in {wait:.1f}s ({attempt}/{self.max_retries})")
                if cancel is not None:
                    if cancel.wait(wait):
                        raise
                else:
                    self._sleep(wait)

    def close(self) -> None:
        self.inner.close()


class FallbackProvider:
    """Tries providers in order; moves on when one keeps failing (retryable or auth errors)."""

    def __init__(self, chain: Sequence[Provider], notify: Notify | None = None) -> None:
        if not chain:
            raise ValueError("empty provider chain")
        self.chain, self.notify = list(chain), notify
        self.active = 0

    @property
    def name(self) -> str:
        return self.chain[self.active].name

    @property
    def model(self) -> str:
        return self.chain[self.active].model

    def complete(self, request: ChatRequest, on_delta: OnDelta | None = None,
                 cancel: threading.Event | None = None) -> Message:
        last: ProviderError | None = None
        for index in range(self.active, len(self.chain)):
            provider = self.chain[index]
            try:
                result = provider.complete(request, on_delta, cancel)
            except ProviderError as exc:
                if not (exc.retryable or isinstance(exc, AuthError)) or index == len(self.chain) - 1:
                    raise
                last = exc
                nxt = self.chain[index + 1]
                if self.notify:
                    self.notify(f"{provider.name}/{provider.model} failed ({exc}); falling back to {nxt.name}/{nxt.model}")
                continue
            self.active = index
            return result
        raise last or ProviderError("no provider succeeded")

    def close(self) -> None:
        for p in self.chain:
            p.close()
