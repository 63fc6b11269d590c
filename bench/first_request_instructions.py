"""Instructions `hermes chat -q hi` executes up to its first model request (valgrind cachegrind: deterministic, the
load does not move it), beside bare `python -c pass`. Work hermes starts with hermes_agent.background is held (off
the path, as in startup_counts.py). The home is seeded by two plain runs first: use one home per source tree (two
trees alternating in one home rebuild each other's skills index cache, ~+560 M).

Usage: python bench/first_request_instructions.py [--src DIR ...] [--home DIR]   (DIR: a tree holding src/; default:
this checkout; without --home a fresh one whose model is http://127.0.0.1:9/v1; every run in one empty folder)"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CWD = tempfile.mkdtemp(prefix="hermes-instr-cwd-")  # the working directory of every run
CHILD = """
import os, sys
def hook(event, args):
    if event == "socket.getaddrinfo" or (event == "socket.connect" and isinstance(args[1], tuple)):
        os._exit(0)
sys.addaudithook(hook)
import threading
import hermes_agent.background as bg
bg.start = lambda work: threading.Event()
from hermes_agent.cli.main import main
main(["chat", "-q", "hi", "-Q"])
"""


def instructions(code: str, src: Path | None, home: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HERMES_HOME=home, **({"PYTHONPATH": str(src / "src")} if src else {}))
    proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          cwd=CWD)  # (an empty folder: no context file, no big listing)
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if not found:
        raise SystemExit(f"no count from valgrind:\n{proc.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def seeded_home(src: Path, home: str | None) -> str:
    if home is None:
        home = tempfile.mkdtemp(prefix="hermes-instr-")
        Path(home, "config.yaml").write_text("model:\n  provider: custom\n  default: m\n  base_url: "
                                             "http://127.0.0.1:9/v1\n  api_key: k\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(HERMES_HOME=home, PYTHONPATH=str(src / "src"))
    for _ in range(2):  # bundled skills, config.yaml's JSON copy, bytecode, the dataclass cache
        subprocess.run([sys.executable, str(ROOT / "bench" / "startup_counts.py"), "chat"], env=env, cwd=CWD,
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    return home


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--src", action="append", type=Path, help="a source tree (repeat to compare)")
    parser.add_argument("--home", help="HERMES_HOME (one --src only)")
    args = parser.parse_args()
    trees = args.src or [ROOT]
    bare = instructions("pass", None, tempfile.gettempdir())
    print(f"python -c pass: {bare / 1e6:.1f} M instructions")
    for src in trees:
        home = seeded_home(src.resolve(), args.home if len(trees) == 1 else None)
        got = instructions(CHILD, src.resolve(), home)
        print(f"{src}: {got / 1e6:.1f} M instructions to the first request ({(got - bare) / 1e6:.1f} M past bare "
              f"python)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
