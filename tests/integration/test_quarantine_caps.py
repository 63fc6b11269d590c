"""rt14b c18 through the real `hermes chat -q`: a confined command makes sparse 200 MB files where the guard
puts things back (a `.envrc`, VS Code tasks and settings): no disk on its side. The put-backs keep a copy each;
those copies keep the holes (the quarantine holds a few blocks, not 600 MB) and the line's `cp -p` still gives
back the whole file."""

from __future__ import annotations

import os
import shlex
import subprocess

from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home  # noqa: F401

SPARSE = ("mkdir -p .vscode && for f in .envrc .vscode/tasks.json .vscode/settings.json; do "
          "truncate -s 200M $f; done && echo PLANTED")


def _on_disk(root) -> int:  # noqa: ANN001
    return sum(os.lstat(os.path.join(d, n)).st_blocks * 512 for d, _, names in os.walk(root) for n in names)


def test_sparse_files_put_back_do_not_fill_the_quarantine(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    results = _chat(scripted, home, [_terminal(SPARSE)], mechanism)
    assert "PLANTED" in results[0], results[0]
    for name in (".envrc", ".vscode/tasks.json", ".vscode/settings.json"):
        assert f"the sandbox removed {proj / name}" in results[0], results[0]
        assert not (proj / name).exists(), name
    quarantine = home / ".hermes" / "quarantine"
    assert _on_disk(quarantine) < 8 << 20, _on_disk(quarantine)
    line = next(ln for ln in results[0].split("]") if f"removed {proj / '.envrc'}" in ln)
    restore = line.split("to restore it: ", 1)[1]
    subprocess.run(shlex.split(restore), check=True)  # what the user pastes: the file is whole again
    assert (proj / ".envrc").stat().st_size == 200 << 20
