"""Where prompts run, behind one seam: `submit(task)` and `wait()` -> finished (task, result) pairs.
Local: a process pool (spawned workers). Ray: remote tasks on a cluster (`ray.init(address)`), results
streamed back to the driver, which alone writes files."""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures

from hermes_agent.batch.worker import run_prompt

_ENV_PREFIXES = ("HERMES_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_", "TERMINAL_")


class LocalExecutor:
    def __init__(self, workers: int) -> None:
        self.capacity = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        self._running: dict[Future, dict] = {}

    def submit(self, task: dict) -> None:
        self._running[self._pool.submit(run_prompt, task)] = task

    def wait(self, timeout: float = 1.0) -> list[tuple[dict, dict]]:
        done, _ = wait_futures(list(self._running), timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        for fut in done:
            task = self._running.pop(fut)
            try:
                out.append((task, fut.result()))
            except Exception as exc:  # a worker process died (OOM, signal): this prompt failed, the run goes on
                out.append((task, {"ok": False, "error": f"worker died: {type(exc).__name__}: {exc}"}))
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class RayExecutor:
    """`address`: "auto" (a running cluster), ray://host:port, host:port, or "local" (start one here with
    `workers` CPUs); workers get the hermes env vars. Ray's usage reporting is turned off (no phoning home)."""

    def __init__(self, address: str, workers: int) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray

        env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)}
        kw: dict = {"num_cpus": workers} if address == "local" else {"address": address}
        if not ray.is_initialized():
            ray.init(runtime_env={"env_vars": env}, log_to_driver=False, logging_level=logging.ERROR,
                     include_dashboard=False, **kw)
        self._ray = ray
        self._remote = ray.remote(num_cpus=1, max_retries=0)(run_prompt)
        self.capacity = workers or int(ray.cluster_resources().get("CPU", 1))
        self._running: dict = {}

    def submit(self, task: dict) -> None:
        self._running[self._remote.remote(task)] = task

    def wait(self, timeout: float = 1.0) -> list[tuple[dict, dict]]:
        if not self._running:
            return []
        ready, _ = self._ray.wait(list(self._running), num_returns=1, timeout=timeout)
        out = []
        for ref in ready:
            task = self._running.pop(ref)
            try:
                out.append((task, self._ray.get(ref)))
            except Exception as exc:  # a lost worker or node: this prompt failed, the run goes on
                out.append((task, {"ok": False, "error": f"ray task failed: {type(exc).__name__}: {exc}"}))
        return out

    def close(self) -> None:
        self._ray.shutdown()
