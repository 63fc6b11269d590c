"""Record the shapes of the files `uv venv` and `virtualenv` write in a venv's bin/ (terminal/sandbox/venvshapes.py):
each tool given makes venvs in a fresh temp folder (default prompt, one that needs quoting, one that does
not; uv also --relocatable), and
one line per file is printed: `<sha256 of its shape> <tool> <version> <file> [variant]`. Append new lines to
src/hermes_agent/terminal/sandbox/venvshapes.txt when a new version of a tool writes a new template. Run by hand:
  python scripts/venv_shapes.py --uv /path/to/uv --virtualenv "/path/to/python -m virtualenv" """

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hermes_agent.terminal.sandbox.venvshapes import shape_digest  # noqa: E402


def _version(cmd: list[str]) -> str:
    out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, check=True).stdout.split()
    return next((w for w in out if w[:1].isdigit()), "?")


def _lines(tool: str, cmd: list[str], version_cmd: list[str], variants: dict[str, list[str]]) -> list[str]:
    version, out = _version(version_cmd), []
    with tempfile.TemporaryDirectory() as tmp:
        for variant, extra in variants.items():
            venv = os.path.join(tmp, f"v-{variant}")
            subprocess.run([*cmd, *extra, venv], capture_output=True, check=True,
                           env={**os.environ, "VIRTUALENV_NO_DOWNLOAD": "1"})
            for f in sorted(Path(venv, "bin").iterdir()):
                if f.is_symlink() or not f.is_file():
                    continue
                digest = shape_digest(venv, f.read_bytes())
                out.append(f"{digest} {tool} {version} {f.name} {variant}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uv", action="append", default=[], help="a uv binary")
    ap.add_argument("--virtualenv", action="append", default=[], help="a virtualenv command line")
    a = ap.parse_args()
    lines: list[str] = []
    for uv in a.uv:
        lines += _lines("uv", [uv, "venv", "-q"], [uv],
                        {"default": [], "prompt": ["--prompt", "my project"], "word-prompt": ["--prompt", "tool"],
                         "relocatable": ["--relocatable"]})
    for ve in a.virtualenv:
        lines += _lines("virtualenv", shlex.split(ve) + ["-q", "--no-seed"], shlex.split(ve),
                        {"default": [], "prompt": ["--prompt", "my project"], "word-prompt": ["--prompt", "tool"]})
    print("\n".join(dict.fromkeys(lines)))


if __name__ == "__main__":
    main()
