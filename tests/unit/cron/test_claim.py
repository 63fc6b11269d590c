"""The claim is exclusive across processes: eight processes claiming one due job at the same instant get
it exactly once (without the fcntl lock several read the file before any of them writes)."""

from __future__ import annotations

import subprocess
import sys
import time

from hermes_agent.cron.jobs import JobStore, new_job, utcnow

CLAIM = """
import sys, time
from pathlib import Path
from hermes_agent.cron.jobs import JobStore, utcnow
start = float(sys.argv[2])
while time.time() < start:
    pass
print(len(JobStore(Path(sys.argv[1])).claim_due(utcnow())))
"""


def test_eight_processes_claim_a_due_job_once(tmp_path):
    store = JobStore(tmp_path / "cron")
    job = store.add(new_job("p", "every 1h", utcnow()))
    store.trigger(job["id"])
    start = time.time() + 1.5
    procs = [subprocess.Popen([sys.executable, "-c", CLAIM, str(store.dir), str(start)], stdout=subprocess.PIPE,
                              text=True) for _ in range(8)]
    claimed = [int(p.communicate(timeout=60)[0]) for p in procs]
    assert sum(claimed) == 1, claimed
    assert store.get(job["id"])["next_run_at"] > utcnow().isoformat()
