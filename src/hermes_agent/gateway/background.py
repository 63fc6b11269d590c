"""What `hermes gateway run` serves besides chats: the cron scheduler on a thread of its own (the same
cross-process claim as `hermes cron daemon`, so both on one home never run a due job twice), and the
OpenAI-compatible API server on the gateway's loop when API_SERVER_ENABLED / platforms.api_server.enabled."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from hermes_agent import paths
from hermes_agent.config.settings import Settings
from hermes_agent.gateway.base import platform_conf
from hermes_agent.gateway.send import Outbox

if TYPE_CHECKING:
    from hermes_agent.api.server import ApiConfig
    from hermes_agent.cron.scheduler import CronHost

log = logging.getLogger(__name__)
_TRUE = ("1", "true", "yes", "on")


def cron_host(outbox: Outbox | None) -> CronHost:
    """What the cron scheduler is handed here and by `hermes cron`: bootstrap's agent and script shell, the
    outbox its deliveries go through, and how a job a person made runs as them."""
    from hermes_agent.bootstrap import build_agent
    from hermes_agent.bootstrap.options import job_person
    from hermes_agent.bootstrap.stores import script_backend
    from hermes_agent.cron.scheduler import CronHost

    return CronHost(build_agent=build_agent, script_backend=script_backend, messenger=outbox, as_person=job_person)


class CronTicker:
    """`cron.run_forever` on a daemon thread: job turns never hold up the gateway's loop or its chats."""

    def __init__(self, settings: Settings, outbox: Outbox) -> None:
        self.settings, self.outbox = settings, outbox
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.runs = 0
        self.last = ""

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="gateway-cron", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from hermes_agent.cron.jobs import JobStore
        from hermes_agent.cron.scheduler import RunResult, run_forever, tick_seconds

        def report(result: RunResult) -> None:
            self.runs += 1
            self.last = f"job {result.job_id}: {'ok' if result.ok else 'FAILED: ' + str(result.error)}"
            print(f"gateway: cron {self.last}" + (f" (delivery: {result.delivery_error})"
                                                   if result.delivery_error else ""), flush=True)

        try:
            run_forever(JobStore(paths.cron_dir()), self.settings, cron_host(self.outbox),
                        interval=tick_seconds(self.settings), stop=self.stop_event, on_result=report)
        except Exception:  # frontend boundary: a broken jobs file must not take the chats down
            log.exception("cron scheduler stopped")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop ticking (waits `timeout` for a running job). A job still running when the process exits is cut
        off; its due time is not run again (the claim already moved it), as after a crash of the daemon."""
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout)

    def status(self) -> dict:
        return {"running": bool(self.thread and self.thread.is_alive()), "runs": self.runs, "last": self.last}


def api_enabled(settings: Settings) -> bool:
    """API_SERVER_ENABLED=true (env or .env) or `platforms.api_server.enabled: true` (Hermes's keys)."""
    if str(settings.env.get("API_SERVER_ENABLED", "")).strip().lower() in _TRUE:
        return True
    conf = platform_conf(settings.cfg.platforms, "api_server")
    return str(conf.get("enabled", "")).strip().lower() in _TRUE


def api_config(settings: Settings) -> ApiConfig:
    """The ApiConfig `hermes api` would use (ApiConfigError when it refuses: a public host without a key)."""
    from hermes_agent.api.server import ApiConfig

    config = ApiConfig.from_env(settings.env, platform_conf(settings.cfg.platforms, "api_server", "extra"))
    config.check()
    return config


async def serve_api(settings: Settings, config: ApiConfig, stop: asyncio.Event) -> None:
    """The API server on this loop until `stop` (its agents and turns on its own worker threads)."""
    from hermes_agent.api.conversations import ConversationPool
    from hermes_agent.api.server import serve

    try:
        await serve(ConversationPool(settings), config, stop)
    except OSError as exc:  # the port is taken: the chats go on without the API
        print(f"gateway: api server failed to start: {exc}", flush=True)
