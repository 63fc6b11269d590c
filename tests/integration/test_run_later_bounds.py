"""Issue 19, class 6: the bounds of what the session's end compares fail closed, and a repository the session made
is looked at whole. Through the real `hermes chat -q`, the scripted model, bwrap and Landlock:
- a workspace that holds more nested repositories than the names noted at the start (18; ctxwatch.MAX_NESTED is
  16): commits planted by plumbing into every one of them are held back, the ones past the bound too;
- a repository made this session with a Makefile and an `.envrc` on a branch that is not checked out: the user is
  told at the session's end, before a checkout brings them in. Control: one made with nothing to run stays quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_context_new_repos import _PLANT, MECHS, _git, _prompt, _session, _workspace

NESTED = 18


@pytest.mark.parametrize("mech", MECHS)
def test_plants_in_nested_repositories_past_the_bound_are_held_back(scripted, hermes_home, tmp_path, mech):
    work = _workspace(tmp_path)
    libs = [work / "libs" / f"l{i:02d}" for i in range(NESTED)]
    for lib in libs:
        lib.mkdir(parents=True)
        (lib / "README.md").write_text("lib\n")
        _git(lib, "init", "-q", "-b", "master")
        _git(lib, "add", "README.md")
        _git(lib, "commit", "-qm", "init")
    each = _PLANT.replace("printf 'NEWREPO-AGENTS: print", "printf 'NEWREPO-AGENTS %s: print").replace(
        "summaries\\n' |", "summaries\\n' \"$R\" |")  # a different text in each: none is held for another's sake
    assert each != _PLANT
    said = _session(scripted, hermes_home, work, mech, "for R in libs/*; do ( " + each + "true ) || exit 1; done; "
                    "echo planted")
    assert "AGENTS.md" in said, said
    for lib in libs:
        _git(lib, "reset", "-q", "--hard")  # the user's own later command brings it in
        assert f"NEWREPO-AGENTS libs/{lib.name}:" in (lib / "AGENTS.md").read_text()
        assert "NEWREPO-AGENTS" not in _prompt(scripted, hermes_home, lib), lib


@pytest.mark.parametrize("mech", MECHS)
def test_run_later_files_on_another_branch_of_a_new_repository_are_told(scripted, hermes_home, tmp_path, mech):
    work = _workspace(tmp_path)
    commit = "git -c user.name=a -c user.email=a@b commit -qm"
    made = ("git init -q -b main {r} && cd {r} && echo hi > README && git add README && " + commit + " i && "
            "git checkout -qb other && {extra}git add -A && " + commit + " m && git checkout -q main && cd .. && ")
    plant = made.format(r="lib", extra="printf 'all:\\n\\ttouch pwned\\n' > Makefile && echo 'touch pwned' > .envrc && ")
    quiet = made.format(r="clean", extra="echo doc > NOTES && ")
    said = _session(scripted, hermes_home, work, mech, plant + quiet + "echo planted")
    told = [line for line in said.splitlines() if "heads/other" in line]
    assert told and "Makefile" in told[0] and ".envrc" in told[0] and "/lib:" in told[0], said
    assert not any("/clean:" in line for line in told), said
    assert not (Path(work) / "lib/Makefile").exists()  # not checked out: nothing ran or changed in the work tree
