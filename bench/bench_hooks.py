"""Benchmark: cost per command of judging what the session's exported variables make a command run
(approval/scriptfiles.file_findings with a saved shell state), for an ordinary state (PATH, PYTHONPATH=src,
EDITOR, VIRTUAL_ENV...) and for one exporting every variable of state._HOOKS to missing files.
Run: PYTHONPATH=src .venv/bin/python bench/bench_hooks.py [--rounds N]"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

ORDINARY = ('declare -x HOME="{home}"\ndeclare -x PATH="{home}/.local/bin:/usr/local/bin:/usr/bin:/bin"\n'
            'declare -x PYTHONPATH="src"\ndeclare -x EDITOR="vim"\ndeclare -x PAGER="less"\n'
            'declare -x VIRTUAL_ENV="{w}/.venv"\ndeclare -x LANG="C.UTF-8"\n')
EVERY = ORDINARY + ''.join(f'declare -x {n}="{{w}}/.x/{n.lower()}"\n' for n in (
    "BASH_ENV", "LD_PRELOAD", "PERL5LIB", "RUBYLIB", "GIT_EXEC_PATH", "PYTHONSTARTUP")) + \
    'declare -x PERL5OPT="-MFoo"\ndeclare -x RUBYOPT="-rfoo"\ndeclare -x JAVA_TOOL_OPTIONS="-Xmx1g"\n'
COMMANDS = ["ls -la", "git status", "python3 -c 'print(1)'", "grep -rn TODO src", "make test", "cat README.md",
            "npm test", "echo done"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    from hermes_agent.approval import scriptfiles

    with tempfile.TemporaryDirectory() as w:
        os.makedirs(os.path.join(w, "src"))
        for name, state in (("ordinary", ORDINARY), ("every variable", EVERY)):
            text = state.format(home=os.path.expanduser("~"), w=w)
            per = []
            for cmd in COMMANDS:
                samples = []
                for i in range(args.rounds):
                    scriptfiles._cache.clear()  # uncached: each command is new to the gate
                    start = time.perf_counter()
                    scriptfiles.file_findings(cmd if i % 2 else cmd + " ", w, text)
                    samples.append(time.perf_counter() - start)
                per.append(statistics.median(samples) * 1e6)
            print(f"{name}: median {statistics.median(per):.0f} us/command, max {max(per):.0f} us")


if __name__ == "__main__":
    main()
