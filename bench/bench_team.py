"""Team mode benchmark: what the gateway's team lookups add to each message.

Per message the runner asks `Team.knows` (may this person talk?) and `Team.person` (their role), each a dict
access plus one stat of HERMES_HOME/team/people.json (re-read only when it changed). Measured here against
a team of N people in config and N more given roles by /role, and after people.json changes (the re-read).

Usage: .venv/bin/python bench/bench_team.py [--people 50] [--n 20000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--people", type=int, default=50)
    ap.add_argument("--n", type=int, default=20000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["HERMES_HOME"] = str(home)
        people = "".join(f"    'telegram:{1000 + i}': member\n" for i in range(args.people))
        (home / "config.yaml").write_text(f"team:\n  people:\n    'telegram:1': owner\n{people}", encoding="utf-8")
        from hermes_agent.config.loader import load_settings
        from hermes_agent.config.team import Team

        team = Team(load_settings())
        for i in range(args.people):
            team.assign(f"telegram:{5000 + i}", "guest", by="telegram:1", name=f"p{i}")
        users = [str(5000 + i % args.people) for i in range(args.n)]
        team.person("telegram", "1")
        t0 = time.perf_counter()
        for uid in users:
            team.knows("telegram", uid)
            team.person("telegram", uid, "x")
        per_msg = (time.perf_counter() - t0) / args.n * 1e6
        t0 = time.perf_counter()
        for i in range(200):
            team.assign("telegram:9999", "member" if i % 2 else "guest", by="telegram:1")
            team.person("telegram", "9999")
        change = (time.perf_counter() - t0) / 200 * 1e6
        gateway_on = _runner_per_message(load_settings(), args.n)
        (home / "config.yaml").write_text("{}\n", encoding="utf-8")
        gateway_off = _runner_per_message(load_settings(), args.n)
    print(f"team of {2 * args.people + 1}: lookups per message (knows + person) {per_msg:.1f} us; "
          f"a /role change plus the next lookup (write + re-read people.json) {change:.0f} us")
    print(f"gateway runner per message (access check twice + role of who spoke) for a person with a role: "
          f"team mode {gateway_on:.1f} us; without a team (allowlist + pairing files) {gateway_off:.1f} us "
          f"(team mode asks the team before the pairing files)")


def _runner_per_message(settings, n: int) -> float:  # type: ignore[no-untyped-def]
    """GatewayRunner's own path for one paired guest's message: `_allowed` (in `handle`, again in `_handle`)
    and `person`, as run_gateway builds it (no network: the adapter is only named)."""
    from hermes_agent.gateway.base import Inbound
    from hermes_agent.gateway.runner import GatewayRunner

    class Named:
        name = "telegram"

    runner = GatewayRunner(settings, [Named()])  # type: ignore[list-item]
    event = Inbound("telegram", 1, "5001", "5001", "p1", "hi")
    runner._allowed(event)
    t0 = time.perf_counter()
    for _ in range(n):
        runner._allowed(event)
        runner._allowed(event)
        runner.person(event)
    return (time.perf_counter() - t0) / n * 1e6


if __name__ == "__main__":
    main()
