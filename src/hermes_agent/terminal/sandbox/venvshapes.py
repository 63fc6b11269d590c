"""Activate scripts of the virtualenv family (uv venv, virtualenv), recognised by their content shape
(runlater.bin_risky): a venv made in the sandbox by `uv venv` or `virtualenv` keeps its bin/activate,
activate.fish, activate_this.py, *.bat ... while a line planted in one of them is still put back.

The shape of a file is its text with the values a tool fills in taken out: the venv's own path (the place
the file is found in: hermes knows it), its prompt (pyvenv.cfg `prompt`; without one the folder's name,
single-quoted, as virtualenv's activate.csh writes it) and `pythonX.Y` (pyvenv.cfg's version). Path and prompt must be plain (letters,
digits, space and `_.@+=:,/-`: nothing a shell, PowerShell, cmd.exe or Python would read as code inside any
quoting); anything else is not recognised. The SHA-256 of the shape must be one of venvshapes.txt, recorded
from the tools themselves (`scripts/venv_shapes.py`, one line per file, tool version and variant). Whatever
else the file says (a planted line, a changed line, another version's template not yet recorded) is not
that shape: put back as before (fail closed; `scripts/venv_shapes.py` records a new version). Stdlib only; the
table is read on first use."""

from __future__ import annotations

import functools
import hashlib
import os
import re

_PLAIN = re.compile(r"[A-Za-z0-9 _.@+=:,/-]{1,400}")
_VERSION = re.compile(r"[0-9]{1,2}\.[0-9]{1,3}")
_VENV, _PROMPT, _PYTHON = b"\x00VENV\x00", b"\x00PROMPT\x00", b"\x00PYTHON\x00"


def _values(venv: str) -> tuple[str, str] | None:
    """pyvenv.cfg's (prompt, "X.Y" python version), "" when absent; None when a value is not plain or the file
    cannot be read."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="strict") as f:
            text = f.read(65536)
    except (OSError, UnicodeDecodeError):
        return None
    cfg = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            cfg[key.strip().lower()] = value.strip()
    prompt = cfg.get("prompt", "")
    if len(prompt) >= 2 and prompt[0] == prompt[-1] and prompt[0] in "'\"":
        prompt = prompt[1:-1]
    version = ".".join(cfg.get("version_info", cfg.get("version", "")).split(".")[:2])
    if (prompt and not _PLAIN.fullmatch(prompt)) or (version and not _VERSION.fullmatch(version)):
        return None
    return prompt, version


def shape_digest(venv: str, data: bytes) -> str | None:
    """The SHA-256 of `data`'s shape as a file of the venv at `venv` (None: its path or prompt is not plain)."""
    values = _values(venv)
    paths = sorted({os.path.abspath(venv), os.path.realpath(venv)}, key=len, reverse=True)
    if values is None or not all(_PLAIN.fullmatch(p) for p in paths):
        return None
    prompt, version = values
    for p in paths:
        data = data.replace(p.encode(), _VENV)
    if version:  # activate_this.py: lib/pythonX.Y/site-packages
        data = data.replace(f"python{version}".encode(), _PYTHON)
    if prompt:  # where it stands as a whole (not inside a longer word of the template: "api" in "capital"), or
        # right after the `"x` of the shell test `[ "x<prompt>" != x ]`
        data = re.sub(rb'(?:(?<![A-Za-z0-9_.-])|(?<="x))' + re.escape(prompt.encode()) + rb"(?![A-Za-z0-9_.-])", _PROMPT,
                      data)
    else:  # no prompt given: virtualenv's activate.csh names the folder, single-quoted
        name = os.path.basename(paths[0])
        if _PLAIN.fullmatch(name):
            data = data.replace(f"'{name}'".encode(), b"'" + _PROMPT + b"'")
    return hashlib.sha256(data).hexdigest()


@functools.cache
def known_shapes() -> dict[str, str]:
    """digest -> what wrote it (`uv 0.13.9 activate.fish`), from venvshapes.txt beside this module."""
    table: dict[str, str] = {}
    try:
        with open(os.path.join(os.path.dirname(__file__), "venvshapes.txt"), encoding="utf-8") as f:
            for line in f:
                digest, _, label = line.strip().partition(" ")
                if len(digest) == 64 and not line.startswith("#"):
                    table[digest] = label
    except OSError:
        pass
    return table


def known_file(venv: str, data: bytes) -> str:
    """What wrote this file of `venv`/bin, when its shape is one the virtualenv family writes ("" otherwise)."""
    digest = shape_digest(venv, data)
    return known_shapes().get(digest, "") if digest else ""
