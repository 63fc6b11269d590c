"""The batch driver: plan (resume by content, toolsets sampled per prompt from a seeded distribution), run on
an executor with bounded retries, write each finished prompt at once, then the combined file and stats."""

from __future__ import annotations

import random
import signal
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

from hermes_agent.batch import distributions
from hermes_agent.batch.store import Prompt, RunStore, load_dataset


@dataclass(frozen=True, slots=True)
class BatchOptions:
    dataset: Path
    run_name: str
    workers: int = 4
    batch_size: int = 10
    distribution: str | None = None
    toolsets: tuple[str, ...] = ()
    max_iterations: int | None = None
    ray: str | None = None
    seed: int = 0
    max_retries: int = 2
    out_root: Path = Path("data")
    overrides: dict = field(default_factory=dict)
    hermes_home: str | None = None


def toolsets_for(opts: BatchOptions, prompt: Prompt) -> list[str]:
    """The prompt's toolsets: drawn from the distribution with a Random seeded by (seed, prompt), so the same
    prompt gets the same tools in every run and on resume; else the fixed list; else the default preset."""
    if opts.distribution:
        return distributions.sample(opts.distribution, random.Random(f"{opts.seed}:{prompt.key}"))
    return list(opts.toolsets) or ["terminal", "file"]


def plan(opts: BatchOptions, prompts: list[Prompt], done: set[str]) -> list[dict]:
    return [{"index": p.index, "key": p.key, "text": p.text, "toolsets": toolsets_for(opts, p),
             "max_iterations": opts.max_iterations, "batch_num": p.index // max(1, opts.batch_size),
             "hermes_home": opts.hermes_home, "overrides": opts.overrides} for p in prompts if p.key not in done]


class Progress:
    def __init__(self, total: int, already: int) -> None:
        self.total, self.done, self.failed, self.t0 = total, already, 0, time.monotonic()
        self.already, self.tty = already, sys.stderr.isatty()
        self._last = 0.0

    def tick(self, ok: bool) -> None:
        self.done += ok
        self.failed += not ok
        now = time.monotonic()
        if self.tty or now - self._last > 2 or self.done + self.failed == self.total:
            self._last = now
            ran = self.done - self.already + self.failed
            rate = ran / max(now - self.t0, 1e-6)
            left = self.total - self.done - self.failed
            eta = f"{left / rate:.0f}s" if rate > 0 else "?"
            line = f"[{self.done}/{self.total}] {rate:.2f} prompts/s, ETA {eta}" + (f", {self.failed} failed" if self.failed else "")
            print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the run: `finished` of `total` prompts are on disk (written as each one finished)."""

    def __init__(self, finished: int, total: int) -> None:
        super().__init__(f"{finished}/{total}")
        self.finished, self.total = finished, total


class _CtrlC:
    """While the run goes: the first Ctrl-C asks the loop to stop (it notices within half a second, keeps what
    has finished, then stops the prompts in flight); a second one raises KeyboardInterrupt, which the executor
    takes as "stop the workers now". A run started with Ctrl-C ignored (`cmd &` in a script) keeps it ignored."""

    def __init__(self) -> None:
        self.asked = False
        self._old: object = None

    def __enter__(self) -> _CtrlC:
        try:
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
                self._old = signal.signal(signal.SIGINT, self._on_sigint)
        except ValueError:  # not the main thread: the caller's own handling stays
            pass
        return self

    def _on_sigint(self, _signum: int, _frame: object) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __exit__(self, *_exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)  # type: ignore[arg-type]


def _executor(opts: BatchOptions):
    if opts.ray:
        from hermes_agent.batch.executors import RayExecutor

        return RayExecutor(opts.ray, opts.workers)
    from hermes_agent.batch.executors import LocalExecutor

    return LocalExecutor(opts.workers)


def run_batch(opts: BatchOptions) -> dict:
    """Run (or resume) a batch; returns the statistics written to statistics.json."""
    prompts = load_dataset(opts.dataset)
    if not prompts:
        raise ValueError(f"{opts.dataset}: no prompts (one JSON object with a \"prompt\" field per line)")
    if opts.distribution:
        distributions.table(opts.distribution)  # unknown name: ValueError before any work
    from hermes_agent import paths

    store = RunStore(opts.out_root / opts.run_name, Path(opts.hermes_home) if opts.hermes_home else paths.hermes_home())
    done = store.done()
    tasks = plan(opts, prompts, set(done))
    progress = Progress(len(prompts), len(prompts) - len(tasks))
    with _CtrlC() as ctrl_c:
        try:
            counts = _drive(_executor(opts) if tasks else None, tasks, store, opts.max_retries, progress, ctrl_c)
        except KeyboardInterrupt:  # a second Ctrl-C (the workers are stopped by then)
            ctrl_c.asked = True
    if ctrl_c.asked:
        raise Interrupted(progress.done, len(prompts))
    if progress.tty:
        print(file=sys.stderr)
    stats = _stats(store, prompts, counts, time.monotonic() - progress.t0, opts)
    stats["trajectories"] = store.finish(prompts, stats)
    return stats


def _drive(ex, tasks: list[dict], store: RunStore, retries: int, progress: Progress, ctrl_c: _CtrlC) -> Counter:
    counts: Counter = Counter()
    if ex is None:
        return counts
    queue, attempts, inflight = deque(tasks), Counter[str](), 0
    try:
        while (queue or inflight) and not ctrl_c.asked:
            while queue and inflight < ex.capacity:
                ex.submit(queue.popleft())
                inflight += 1
            for task, result in ex.wait(timeout=0.5):
                inflight -= 1
                if result.get("ok"):
                    _keep(store, task, result, counts, progress)
                elif result.get("retry", True) and attempts[task["key"]] < retries:
                    attempts[task["key"]] += 1
                    counts["retried"] += 1
                    queue.append(task)
                else:
                    store.append("failures.jsonl", {"prompt_index": task["index"], "prompt_key": task["key"],
                                                    "error": result.get("error"), "attempts": attempts[task["key"]] + 1})
                    counts["failed"] += 1
                    progress.tick(False)
        if ctrl_c.asked:  # the prompts in flight are stopped, not waited for; one that finished meanwhile is kept
            ex.abort()
            while inflight and (got := ex.wait(timeout=1.0)):
                inflight -= len(got)
                for task, result in got:
                    if result.get("ok"):
                        _keep(store, task, result, counts, progress)
    except BaseException:  # a second Ctrl-C, or a failure writing
        ex.abort()
        raise
    finally:
        ex.close()
    return counts


def _keep(store: RunStore, task: dict, result: dict, counts: Counter, progress: Progress) -> None:
    store.append(f"batch_{task['batch_num']}.jsonl", result["entry"], str(result.get("untrusted") or ""))
    counts["ok"] += 1
    progress.tick(True)


def _stats(store: RunStore, prompts: list[Prompt], counts: Counter, took: float, opts: BatchOptions) -> dict:
    done = store.done()
    toolsets: Counter = Counter()
    tools: dict[str, Counter] = {}
    for entry in done.values():
        toolsets.update(entry.get("toolsets_used") or [])
        for name, st in (entry.get("tool_stats") or {}).items():
            tools.setdefault(name, Counter()).update(st)
    return {"run_name": opts.run_name, "prompts": len(prompts), "completed": len(done),
            "ran_now": counts["ok"], "failed_now": counts["failed"], "retries": counts["retried"],
            "seconds": round(took, 2), "prompts_per_second": round(counts["ok"] / took, 3) if took > 0 else None,
            "distribution": opts.distribution, "toolsets_used": dict(toolsets),
            "tool_stats": {k: dict(v) for k, v in tools.items()},
            "executor": f"ray:{opts.ray}" if opts.ray else f"local:{opts.workers}"}
