"""The sandbox warmed while the model thinks (wired by `stores.wire_terminal` for the CLI): once a model call of
a run that offers a command tool on the local backend has run for 0.15 s, one background thread compiles the
approval rules, loads the terminal tool, plans the sandbox and starts its launcher (bwrap or Landlock,
slirp4netns), so the model's first command does not wait ~0.3-0.8 s for them. Nothing runs before the sandbox is there: a command
that comes first waits for the same start (the launcher's lock) and runs inside it. This module loads on that
thread, after the first request has left."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def warm_sandbox(backend: Callable[[], object], stop: threading.Event, lock: threading.Condition,
                 warming: list) -> None:
    """`backend`: the task's backend (ctx.backend: made by the pool on first call); `stop`: the run is closing,
    start nothing more. Under `lock`, unless stopped, the backend is put in `warming` before anything is started:
    the closer then aborts that start and waits for this thread; until then there is nothing to wait for (a plan
    is only memory), so a run that ends meanwhile does not wait for it."""
    try:
        from hermes_agent.approval.rules import warm as warm_rules

        warm_rules()
        if stop.is_set():
            return
        import hermes_agent.tools.builtin.terminal  # noqa: F401 - its first call then finds it loaded

        if stop.is_set():
            return
        chosen = backend()
        warm = getattr(chosen, "warm", None)
        if warm is None:
            return
        with lock:
            if stop.is_set():
                return
            warming.append(chosen)
        warm()
    except Exception:  # the first command then starts it itself and says what went wrong
        log.debug("sandbox warm-up failed", exc_info=True)
