"""`hermes batch run` against the scripted model: every prompt exactly once in trajectories.jsonl, the
sampled toolset mix matching its table, kill -9 then resume repeating nothing, failures recorded after bounded
retries, and the same run on a local Ray cluster started here."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from hermes_agent.batch.distributions import table
from tests.helpers import HERMES, model_config


def _answer(body: dict) -> dict:
    msgs = body["messages"]
    text = next(m["content"] for m in msgs if m["role"] == "user")
    if "poison" in text:
        return {"error": {"status": 500, "message": "model exploded"}}
    if "use-tool" in text and msgs[-1]["role"] == "user" and "terminal" in {t["function"]["name"] for t in body.get("tools") or []}:
        return {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo tool-ran"}}]}
    return {"content": f"answer to {text}", "delay": 0.25 if "slow" in text else 0}


def _dataset(path: Path, n: int, word: str = "") -> Path:
    with open(path, "w") as fh:
        for i in range(n):
            words = [f"task {i}", word, "use-tool" if i % 5 == 0 else ""]
            fh.write(json.dumps({"prompt": " ".join(w for w in words if w)}) + "\n")
    return path


def _batch(home: Path, cwd: Path, *args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    full.update({"HERMES_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0", **(env or {})})
    return subprocess.run([HERMES, "batch", "run", *args], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=timeout)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _complete_lines(path: Path) -> int:
    """Lines of a file another process is appending to: one being written may be read half-way."""
    n = 0
    for line in path.read_text().splitlines():
        try:
            json.loads(line)
        except ValueError:
            continue
        n += 1
    return n


@pytest.fixture
def setup(scripted, hermes_home, tmp_path):
    scripted.default = _answer
    model_config(hermes_home, scripted.url, "  api_max_retries: 0\n")  # continues the agent: block
    return scripted, hermes_home, tmp_path


def test_200_prompts_on_4_workers_each_once_with_the_distributions_mix(setup):
    scripted, home, tmp = setup
    data = _dataset(tmp / "prompts.jsonl", 200)
    res = _batch(home, tmp, "--dataset", str(data), "--run-name", "dev", "--workers", "4", "--batch-size", "50",
                 "--distribution", "development", "--seed", "7")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = _lines(tmp / "data/dev/trajectories.jsonl")
    assert len(rows) == 200 and len({r["prompt_key"] for r in rows}) == 200
    assert [r["prompt_index"] for r in rows] == list(range(200))
    assert sorted(p.name for p in (tmp / "data/dev").glob("batch_*.jsonl")) == [f"batch_{i}.jsonl" for i in range(4)]
    first = rows[0]["conversations"]
    assert [t["from"] for t in first[:2]] == ["system", "human"] and first[1]["value"] == "task 0 use-tool"
    tooled = [r for r in rows if "terminal" in r["toolsets_used"] and r["prompt_index"] % 5 == 0]
    assert tooled and all(r["tool_stats"]["terminal"]["success"] == 1 for r in tooled)
    assert any("tool-ran" in t["value"] for t in tooled[0]["conversations"] if t["from"] == "tool")
    mix = Counter(ts for r in rows for ts in r["toolsets_used"])
    for toolset, pct in table("development").items():
        p = pct / 100
        assert abs(mix[toolset] / 200 - p) <= 4 * math.sqrt(p * (1 - p) / 200) + 0.03, (toolset, mix)
    stats = json.loads((tmp / "data/dev/statistics.json").read_text())
    assert stats["completed"] == 200 and stats["toolsets_used"] == dict(mix)
    again = _batch(home, tmp, "--dataset", str(data), "--run-name", "dev", "--distribution", "development", "--seed", "7")
    assert json.loads(again.stdout)["ran_now"] == 0  # nothing left to do: nothing repeated
    assert [r["toolsets_used"] for r in _lines(tmp / "data/dev/trajectories.jsonl")] == [r["toolsets_used"] for r in rows]


def test_kill_9_halfway_then_resume_repeats_nothing(setup):
    scripted, home, tmp = setup
    data = _dataset(tmp / "prompts.jsonl", 200, "slow")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    proc = subprocess.Popen([HERMES, "batch", "run", "--dataset", str(data), "--run-name", "k", "--workers", "4",
                             "-t", "file"], cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    out = tmp / "data/k"
    deadline = time.time() + 120
    while time.time() < deadline and sum(_complete_lines(p) for p in out.glob("batch_*.jsonl")) < 60:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = time.time()
    time.sleep(1.0)  # let in-flight requests land before we read what was finished
    before = {r["prompt_key"]: r["conversations"][1]["value"] for p in out.glob("batch_*.jsonl") for r in _lines(p)}
    assert 60 <= len(before) < 200
    res = _batch(home, tmp, "--dataset", str(data), "--run-name", "k", "--workers", "4", "-t", "file")
    assert res.returncode == 0, res.stderr
    rows = _lines(out / "trajectories.jsonl")
    assert len(rows) == 200 and len({r["prompt_key"] for r in rows}) == 200
    redone = [r for r in scripted.requests if r["time"] > killed_at + 1.0
              and r["body"]["messages"][1]["content"] in set(before.values())]
    assert redone == []
    assert json.loads(res.stdout)["ran_now"] == 200 - len(before)


def test_a_failing_prompt_is_retried_then_recorded(setup):
    scripted, home, tmp = setup
    data = tmp / "p.jsonl"
    data.write_text("\n".join(json.dumps({"prompt": t}) for t in ["fine one", "poison pill", "fine two"]) + "\n")
    res = _batch(home, tmp, "--dataset", str(data), "--run-name", "f", "--workers", "2", "--max-retries", "2", "-t", "file")
    assert res.returncode == 1
    failures = _lines(tmp / "data/f/failures.jsonl")
    assert len(failures) == 1 and failures[0]["attempts"] == 3 and "model exploded" in failures[0]["error"]
    assert len(_lines(tmp / "data/f/trajectories.jsonl")) == 2
    poison = [r for r in scripted.requests if "poison" in r["body"]["messages"][1]["content"]]
    assert len(poison) == 3
    assert "1 prompt(s) failed; last error: " in res.stderr and "model exploded" in res.stderr
    assert "data/f/failures.jsonl" in res.stderr


def test_a_toolset_typo_fails_each_prompt_once_and_says_why(setup):
    scripted, home, tmp = setup
    data = _dataset(tmp / "p.jsonl", 3)
    res = _batch(home, tmp, "--dataset", str(data), "--run-name", "typo", "--max-retries", "2", "-t", "nosuch")
    assert res.returncode == 1
    assert "3 prompt(s) failed; last error: ToolError: unknown toolset 'nosuch'" in res.stderr
    assert [f["attempts"] for f in _lines(tmp / "data/typo/failures.jsonl")] == [1, 1, 1]


def test_an_empty_dataset_is_an_error_not_a_successful_run(setup):
    _, home, tmp = setup
    (tmp / "empty.jsonl").write_text("\n\n")
    res = _batch(home, tmp, "--dataset", "empty.jsonl", "--run-name", "e")
    assert res.returncode == 2 and res.stderr.strip() == ('hermes batch: empty.jsonl: no prompts (one JSON object '
                                                          'with a "prompt" field per line)')
    assert not (tmp / "data/e").exists()


def test_batch_run_help_explains_every_option():
    res = subprocess.run([HERMES, "batch", "run", "--help"], capture_output=True, text=True, timeout=60)
    for flag, words in (("--workers", "at once"), ("--batch-size", "per batch"), ("--max-retries", "extra attempts"),
                        ("--max-iterations", "turns per prompt")):
        assert flag in res.stdout and words in " ".join(res.stdout.split()), flag


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_needs_ray = pytest.mark.skipif(shutil.which("ray", path=str(Path(HERMES).parent)) is None,
                                reason="ray not installed (batch extra)")
_one_cluster = pytest.mark.xdist_group("ray")  # the module's Ray tests share one local cluster
_ray_time = pytest.mark.timeout(600)  # a Ray head's start and 200 prompts on 2 CPUs: minutes when the suite loads them


class _RayHead:
    """A Ray head started here (2 CPUs, a small object store: the suite runs Chromium and dockerd beside it)."""

    def __init__(self) -> None:
        self.ray = str(Path(HERMES).parent / "ray")
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        self.tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # its socket paths must stay under 107 bytes
        self.address = ""
        self.start()

    def start(self) -> None:
        port = _free_port()
        started = subprocess.run([self.ray, "start", "--head", f"--port={port}", "--num-cpus=2",
                                  "--object-store-memory=100000000", "--disable-usage-stats",
                                  "--include-dashboard=false", f"--temp-dir={self.tmp}"], env=self.env,
                                 capture_output=True, text=True, timeout=180)
        assert started.returncode == 0, started.stderr
        self.address = f"127.0.0.1:{port}"

    def alive(self) -> bool:
        return subprocess.run([self.ray, "status", f"--address={self.address}"], env=self.env, capture_output=True,
                              timeout=120).returncode == 0

    def stop(self) -> None:
        subprocess.run([self.ray, "stop", "--force"], env=self.env, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def ray_cluster():
    head = _RayHead()
    try:
        yield head
    finally:
        head.stop()
        shutil.rmtree(head.tmp, ignore_errors=True)


def _on_ray(head: _RayHead, home: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """`hermes batch run ... --ray` on the head; when the cluster itself died under it (CI, under load: its GCS
    and raylet killed mid-run), the same command on a new head resumes what the run kept, as a user would."""
    res = _batch(home, tmp, *args, "--ray", head.address)
    if res.returncode != 0 and not head.alive():
        head.stop()
        head.start()
        res = _batch(home, tmp, *args, "--ray", head.address)
    return res


@_needs_ray
@_one_cluster
@_ray_time
def test_the_same_run_on_a_local_ray_cluster(setup, ray_cluster):
    _, home, tmp = setup
    data = _dataset(tmp / "prompts.jsonl", 100)
    res = _on_ray(ray_cluster, home, tmp, "--dataset", str(data), "--run-name", "ray", "--workers", "2",
                  "--distribution", "development", "--seed", "7")
    assert res.returncode == 0, res.stdout + res.stderr
    rows = _lines(tmp / "data/ray/trajectories.jsonl")
    assert len(rows) == 100 and len({r["prompt_key"] for r in rows}) == 100
    stats = json.loads((tmp / "data/ray/statistics.json").read_text())
    assert stats["executor"] == f"ray:{ray_cluster.address}"


def _stalls_after(scripted, n: int):
    """The model answers `n` requests at once, then takes a minute over each: prompts are in flight at Ctrl-C."""
    def answer(body: dict) -> dict:
        return {**_answer(body), "delay": 60} if len(scripted.requests) > n else _answer(body)
    return answer


def _as_from_a_terminal(home: Path, tmp: Path, *args: str) -> subprocess.Popen:
    """`hermes batch run` as a shell starts it in a terminal: its own process group (Ctrl-C reaches every
    process of it) and SIGINT at its default even if this test run was started with it ignored (`cmd &`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HERMES_"))}
    env["HERMES_HOME"] = str(home)
    return subprocess.Popen([HERMES, "batch", "run", *args], cwd=tmp, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, process_group=0,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _left_in_group(pgid: int, within: float = 5.0) -> list[str]:
    """Live processes still in the process group after `within` seconds (exited ones not yet reaped aside)."""
    deadline = time.time() + within
    while True:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                state, _ppid, pgrp = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[:3]
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, ValueError):
                continue
            if int(pgrp) == pgid and state != "Z":
                left.append(f"{pid} {cmd[:120]}")
        if not left or time.time() > deadline:
            return left
        time.sleep(0.1)


def _finished(run: Path) -> set[str]:
    return {r["conversations"][1]["value"] for p in run.glob("batch_*.jsonl") for r in _lines(p)}


def _interrupt_mid_run(scripted, home: Path, tmp: Path, presses: int, group: bool = True) -> tuple[subprocess.Popen, str, float]:
    """60 prompts on 2 workers; the model stalls after answering 20, and SIGINT comes once both workers are
    inside a stalled request: to the process group (Ctrl-C in a terminal) or to hermes alone (`kill -INT`).
    Returns the process, its stderr and the seconds it took to exit."""
    scripted.default = _stalls_after(scripted, 20)
    data = _dataset(tmp / "prompts.jsonl", 60)
    proc = _as_from_a_terminal(home, tmp, "--dataset", str(data), "--run-name", "c", "--workers", "2", "-t", "file")
    deadline = time.time() + 120
    while time.time() < deadline and len(scripted.requests) < 22 and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None and len(scripted.requests) == 22, "the run ended or stalled before Ctrl-C"
    started = time.monotonic()
    for _ in range(presses):
        os.killpg(proc.pid, signal.SIGINT) if group else proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
    _, err = proc.communicate(timeout=90)
    return proc, err, time.monotonic() - started


@pytest.mark.parametrize("group", [True, False], ids=["ctrl-c", "kill-int"])
def test_ctrl_c_stops_in_seconds_keeps_what_finished_leaves_nothing_running_and_resumes(setup, group):
    scripted, home, tmp = setup
    proc, err, took = _interrupt_mid_run(scripted, home, tmp, presses=1, group=group)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert took < 10, f"Ctrl-C took {took:.1f}s: the prompts in flight were waited for"
    finished = _finished(tmp / "data/c")
    assert len(finished) == 20  # every prompt the model answered, none of the two it was still answering
    assert err.strip().splitlines()[-1] == ("hermes batch: interrupted; 20/60 prompts finished, kept in data/c "
                                            "(the same command resumes)")
    assert _left_in_group(proc.pid) == []
    scripted.default = _answer
    asked_before = len(scripted.requests)
    res = _batch(home, tmp, "--dataset", str(tmp / "prompts.jsonl"), "--run-name", "c", "--workers", "2", "-t", "file")
    assert res.returncode == 0, res.stderr
    rows = _lines(tmp / "data/c/trajectories.jsonl")
    assert [r["prompt_index"] for r in rows] == list(range(60))
    asked_now = [r["body"]["messages"][1]["content"] for r in scripted.requests[asked_before:]]
    assert len(asked_now) == 40 and not set(asked_now) & finished  # the rest, and only the rest


def test_kill_9_of_hermes_alone_takes_its_workers_with_it(setup):
    """The driver killed outright (OOM killer, kill -9): the workers mid-prompt end too (they get SIGTERM when
    it dies) and clean up after themselves; nothing keeps running against the model."""
    scripted, home, tmp = setup
    scripted.default = _stalls_after(scripted, 20)
    proc = _as_from_a_terminal(home, tmp, "--dataset", str(_dataset(tmp / "prompts.jsonl", 60)), "--run-name", "k",
                               "--workers", "2", "-t", "file")
    deadline = time.time() + 120
    while time.time() < deadline and len(scripted.requests) < 22 and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None and len(scripted.requests) == 22, "the run ended or stalled before kill -9"
    proc.kill()
    proc.communicate(timeout=30)
    assert _left_in_group(proc.pid) == []


def test_a_second_ctrl_c_stops_at_once_with_the_same_line(setup):
    scripted, home, tmp = setup
    proc, err, took = _interrupt_mid_run(scripted, home, tmp, presses=2)
    assert proc.returncode == 130 and "Traceback" not in err and took < 5, (took, err)
    assert err.strip().splitlines()[-1] == (f"hermes batch: interrupted; {len(_finished(tmp / 'data/c'))}/60 prompts "
                                            "finished, kept in data/c (the same command resumes)")
    assert _left_in_group(proc.pid) == []


def _ray_tasks_running(home: Path) -> int:
    """Ray worker processes running one of this test's prompts (Ray titles them `ray::run_prompt`; the run's
    env, HERMES_HOME included, is their runtime env)."""
    n = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if (Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::run_prompt")
                    and f"HERMES_HOME={home}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")):
                n += 1
        except OSError:
            continue
    return n


@_needs_ray
@_one_cluster
@_ray_time
def test_ctrl_c_on_ray_cancels_the_running_tasks_keeps_what_finished_and_resumes(setup, ray_cluster):
    scripted, home, tmp = setup
    scripted.default = _stalls_after(scripted, 20)
    data = _dataset(tmp / "prompts.jsonl", 60)
    args = ("--dataset", str(data), "--run-name", "r", "--workers", "2", "--ray", ray_cluster.address, "-t", "file")
    proc = _as_from_a_terminal(home, tmp, *args)
    deadline = time.time() + 180
    while time.time() < deadline and len(scripted.requests) < 22 and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None and len(scripted.requests) == 22, "the run ended or stalled before Ctrl-C"
    assert _ray_tasks_running(home) == 2  # both inside the stalled request
    started = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 130 and "Traceback" not in err and time.monotonic() - started < 10, err
    assert err.strip().splitlines()[-1] == ("hermes batch: interrupted; 20/60 prompts finished, kept in data/r "
                                            "(the same command resumes)")
    assert _left_in_group(proc.pid) == []
    deadline = time.time() + 10  # the cancelled tasks are not running on the cluster any more
    while time.time() < deadline and _ray_tasks_running(home):
        time.sleep(0.2)
    assert _ray_tasks_running(home) == 0
    scripted.default = _answer
    res = _batch(home, tmp, *args)
    assert res.returncode == 0, res.stderr
    assert [r["prompt_index"] for r in _lines(tmp / "data/r/trajectories.jsonl")] == list(range(60))
