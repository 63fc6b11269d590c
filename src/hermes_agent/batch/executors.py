"""Where prompts run, behind one seam: `submit(task)`, `wait()` -> finished (task, result) pairs, `close()`, and
`abort()` after a Ctrl-C: the prompts in flight are stopped, not waited for.
Local: a process pool (spawned workers). Ray: remote tasks on a cluster (`ray.init(address)`), results
streamed back to the driver, which alone writes files."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures

from hermes_agent.batch.worker import run_prompt

_ENV_PREFIXES = ("HERMES_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_", "TERMINAL_")


_ABORT_GRACE_S = 3.0  # a stopped prompt's own cleanup (its sandbox, its temp dir); then the worker is killed
_stopping = False


def _end_prompt(_signum: int, _frame: object) -> None:
    global _stopping
    _stopping = True
    raise SystemExit(143)


def _worker_init() -> None:
    """In each local worker. Ctrl-C is the driver's: a terminal sends it to the whole process group, and a worker
    must not turn it into a half-run prompt reported as finished. SIGTERM from the driver ends the prompt at hand
    (its `finally` cleans up) and then the worker; the worker also gets SIGTERM if the driver dies (kill -9)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_prompt)
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        driver = multiprocessing.parent_process()
        if driver is not None and os.getppid() != driver.pid:  # the driver was already gone
            raise SystemExit(143)


def _run_local(task: dict) -> dict:
    try:
        return run_prompt(task)
    finally:
        if _stopping:  # stopped by the driver: exit now, never take the next queued prompt
            os._exit(143)


class LocalExecutor:
    def __init__(self, workers: int) -> None:
        self.capacity = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_worker_init)
        self._running: dict[Future, dict] = {}
        self._procs: list = []

    def submit(self, task: dict) -> None:
        self._running[self._pool.submit(_run_local, task)] = task

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

    def abort(self) -> None:
        """After a Ctrl-C: queued prompts are dropped and the running ones stopped (SIGTERM: a prompt's own
        cleanup runs; SIGKILL after a grace or at a second Ctrl-C), so the driver exits now, not after them.
        `wait()` then still returns what finished meanwhile (the rest come back failed)."""
        if not self._procs:
            self._procs = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        try:
            for proc in self._procs:
                _signal_quietly(proc.terminate)
            deadline = time.monotonic() + _ABORT_GRACE_S
            for proc in self._procs:
                proc.join(max(0.0, deadline - time.monotonic()))
        except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
            pass
        for proc in self._procs:
            _signal_quietly(proc.kill)
        for proc in self._procs:
            proc.join(1.0)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _signal_quietly(send) -> None:  # noqa: ANN001 - Process.terminate / Process.kill
    try:
        send()
    except (OSError, ValueError, AttributeError):  # already reaped or closed
        pass


class RayExecutor:
    """`address`: "auto" (a running cluster), ray://host:port, host:port, or "local" (start one here with
    `workers` CPUs); workers get the hermes env vars. Ray's usage reporting is turned off (no phoning home)."""

    def __init__(self, address: str, workers: int) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        token = os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
        if address != "local" and "RAY_AUTH_MODE" not in os.environ and os.path.isfile(token):
            os.environ["RAY_AUTH_MODE"] = "token"  # as `ray start` did when the token existed: the cluster wants it
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

    def abort(self) -> None:
        """The running tasks cancelled (force: their worker processes are killed); `wait()` still returns what
        finished meanwhile."""
        for ref in list(self._running):
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: S110 - already finished or its node is gone: nothing left to stop
                pass

    def close(self) -> None:
        self._ray.shutdown()  # a cluster started here (`--ray local`) stops with it
