"""The HermesError tree: failures the operator sees as one clear line (frontends render them).

    HermesError
    ├── ConfigError            broken or missing configuration (exit code 2)
    ├── ProviderError          the model endpoint failed
    │   ├── AuthError          bad/missing key (401/403) — never retried
    │   ├── RateLimitedError   429 — retried with backoff, honours retry_after
    │   ├── ContextTooLongError  the request exceeded the context window — compress and retry
    │   ├── TransientError     5xx, timeouts, connection resets — retried
    │   │   └── StreamStalledError  no byte for agent.stream_idle_timeout — retried within a budget
    │   └── BadRequestError    any other 4xx — not retried
    ├── ToolError              a tool runtime problem (unknown toolset, cycle in includes)
    ├── StorageError           the session store failed
    ├── BudgetExceeded         a model call would cross a spending cap (budget.*): the turn stops
    └── InterruptedTurn        a turn was stopped by interrupt()
"""

from __future__ import annotations


class HermesError(Exception):
    """Base class: its message is shown to the operator as a single line."""


class ConfigError(HermesError):
    """Configuration is broken or missing."""


class UsageError(HermesError):
    """A command-line value cannot be used (unknown skill, missing image file): one line, exit 2."""


class ProviderError(HermesError):
    """The model endpoint failed; `retryable` says whether retrying may help."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class AuthError(ProviderError):
    """The key was refused (401/403)."""


class RateLimitedError(ProviderError):
    """429: retry after a pause."""

    retryable = True


class ContextTooLongError(ProviderError):
    """The request did not fit the model's context window."""


class TransientError(ProviderError):
    """5xx, timeout or connection failure."""

    retryable = True


class StreamStalledError(TransientError):
    """The endpoint sent nothing for `silent_for` seconds; the attempt was abandoned."""

    def __init__(self, message: str, *, silent_for: float) -> None:
        super().__init__(message)
        self.silent_for = silent_for


class BadRequestError(ProviderError):
    """Another 4xx the endpoint rejected."""


class ToolError(HermesError):
    """A tool-runtime problem such as an unknown toolset."""


class BudgetExceeded(HermesError):
    """A model call would cross a spending cap; the message names the cap, the spend and how to raise it."""


class StorageError(HermesError):
    """The session store failed."""


class InterruptedTurn(HermesError):
    """A running turn was interrupted."""
