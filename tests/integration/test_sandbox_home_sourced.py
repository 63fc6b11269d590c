"""Workspace = HOME (issue 19, a21): what the user's ~/.bashrc sources (`. ~/dotfiles/aliases.sh`) and the
directory it puts on PATH (`~/scripts`) are ordinary non-dot entries of HOME; written from inside they would
run in the user's next `bash -i`. Through `hermes chat -q --yolo` and the scripted model, under bubblewrap
and Landlock: both stay read-only, the user's next shell runs nothing planted, an ordinary ~/notes file and
a sibling in ~/dotfiles stay writable."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.integration.test_sandbox_secrets import World, _calls, _mechanisms


@pytest.fixture(params=_mechanisms())
def world(request, tmp_path, scripted):
    if os.geteuid() != 0:
        pytest.skip("the World fixture runs hermes as root here")
    w = World(tmp_path, scripted, request.param, "root")
    w.ready = True
    return w


def test_sourced_file_and_rc_path_dir_stay_read_only(world):
    home = world.home
    (home / ".bashrc").write_text(". ~/dotfiles/aliases.sh\nexport PATH=$HOME/scripts:$PATH\n")
    (home / "dotfiles").mkdir()
    (home / "dotfiles/aliases.sh").write_text("alias ll='ls -l'\n")
    (home / "dotfiles/README").write_text("mine\n")
    (home / "scripts").mkdir()
    mark = home.parent / "PLANTED"
    plant = (f"echo 'touch {mark}.alias' >> dotfiles/aliases.sh; "
             f"printf '#!/bin/sh\\ntouch {mark}.ls\\n/bin/ls \"$@\"\\n' > scripts/ls; chmod +x scripts/ls; "
             "echo kept > notes/file.txt; echo more >> dotfiles/README; echo PLANT-DONE")
    world.scripted.add(*_calls(("terminal", {"command": plant})))
    out = world.hermes("chat", "--yolo", "-q", "tidy my home", cwd=home)
    assert "PLANT-DONE" in world.model_saw(), out.stderr[-2000:]
    subprocess.run(["env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin", "bash", "-i", "-c", "ls >/dev/null"],
                   cwd=home, capture_output=True, timeout=60, check=False)
    ran = sorted(p.name for p in home.parent.glob("PLANTED*"))
    assert not ran, f"a file planted from inside ran in the user's next shell: {ran}"
    assert (home / "dotfiles/aliases.sh").read_text() == "alias ll='ls -l'\n"
    assert not (home / "scripts/ls").exists()
    assert (home / "notes/file.txt").read_text() == "kept\n", "ordinary files in HOME must stay writable"
    assert (home / "dotfiles/README").read_text() == "mine\nmore\n", "a sibling of a sourced file stays writable"
