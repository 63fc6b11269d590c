"""rt15 d10 (and its class) through the real `hermes chat -q`: the git object guard's read budget turned against
the user. One command writes ~2,100 small files named like loose objects (sparse zlib streams that must be read
whole: 550 MB to read, a few MB on disk) and makes the guard look at every object of the repository (each
`objects/??` moved away and back, or `objects/` itself). The old guard read the smallest first, ran out of
budget before the user's own bigger objects and deleted them: a committed `data.bin` version was gone, its
only copy among 500 MB of quarantine. Now: what the user had and nothing wrote is not read nor touched; what the
budget does not reach is renamed aside, not deleted; the quarantine takes at most 64 MB from one check; a
forgery of the user's own object is still read whole and put back."""

from __future__ import annotations

import os
import subprocess

from tests.integration.test_git_object_store import IN_PLACE, MAKEFILE, _commit_makefiles, _git
from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home  # noqa: F401

# 2,100 stored-block zlib streams of 256 KB over holes, each under a random object name
PADS = "python3 - <<'EOF' && " + r"""
import os, secrets
for i in range(2100):
    h = secrets.token_hex(20)
    os.makedirs(f'.git/objects/{h[:2]}', exist_ok=True)
    with open(f'.git/objects/{h[:2]}/{h[2:]}', 'wb') as f:
        f.write(b'\x78\x01')
        for b in range(4):
            f.seek(2 + b * 65540); f.write(b'\x01' if b == 3 else b'\x00'); f.write(b'\xff\xff\x00\x00')
        f.truncate(2 + 4 * 65540)
EOF
"""
MOVE_FANOUTS = "for d in .git/objects/??; do mv $d $d.x && mv $d.x $d; done && echo PLANTED"
MOVE_OBJECTS = "mv .git/objects .git/o && mv .git/o .git/objects && "


def _data_versions(home_dir, proj) -> list[str]:  # noqa: ANN001
    """Two committed versions of a 300 KB file (bigger than each pad): the ids of both blobs."""
    ids = []
    for _ in range(2):
        (proj / "data.bin").write_bytes(os.urandom(300_000))
        _git(home_dir, proj, "add", "data.bin")
        _git(home_dir, proj, "commit", "-qm", "data")
        ids.append(_git(home_dir, proj, "rev-parse", "HEAD:data.bin").stdout.strip())
    return ids


def _quarantine_bytes(home_dir) -> int:  # noqa: ANN001
    du = subprocess.run(["du", "-sb", str(home_dir / ".hermes" / "quarantine")], capture_output=True, text=True)
    return int(du.stdout.split()[0]) if du.returncode == 0 else 0


def _left_aside(proj) -> int:  # noqa: ANN001
    objects = proj / ".git" / "objects"
    return sum(1 for d in objects.glob("??") for f in d.iterdir() if f.name.endswith(".unverified"))


def test_the_users_objects_outlive_a_budget_spent_on_pads(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    ids = _data_versions(home, proj)
    results = _chat(scripted, home, [_terminal(PADS + MOVE_FANOUTS)], mechanism)
    assert "PLANTED" in results[0], results[0]
    for oid in ids:  # both versions of the user's file: still in the repository, untouched
        assert _git(home, proj, "cat-file", "-e", oid).returncode == 0
    assert "hermes could not check" in results[0] and "renamed <id>.unverified" in results[0], results[0][-2000:]
    assert "more loose objects removed or put back the same way" in results[0], results[0][-2000:]
    assert "data.bin" not in results[0], results[0][-2000:]
    assert _left_aside(proj) > 0  # set aside, not deleted
    assert _quarantine_bytes(home) < 100 << 20
    assert len(results[0]) < 20_000  # the model is not handed thousands of lines
    shown = subprocess.run(["git", "-C", str(proj), "log", "-p", "--format=%h", "--", "data.bin"],
                           capture_output=True, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert shown.returncode == 0 and b"Binary files" in shown.stdout, shown.stderr


def test_a_forgery_of_the_users_object_is_read_whole_past_the_budget(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    _commit_makefiles(home, proj)
    ids = _data_versions(home, proj)
    freshen = "git hash-object -w a.txt >/dev/null && "  # git rewrites the time of an object it has: no alarm
    results = _chat(scripted, home, [_terminal(PADS + MOVE_OBJECTS + freshen + IN_PLACE)], mechanism)
    assert "PLANTED" in results[0], results[0]
    assert "its content is not the git object it names" in results[0], results[0][-2000:]
    assert f"put back from {proj / 'b.mk'}" in results[0], results[0][-2000:]
    assert "hermes could not check" in results[0], results[0][-2000:]
    a_txt = _git(home, proj, "rev-parse", "HEAD:a.txt").stdout.strip()
    assert a_txt[2:] not in results[0], results[0][-2000:]
    for oid in [*ids, a_txt]:
        assert _git(home, proj, "cat-file", "-e", oid).returncode == 0
    assert _git(home, proj, "cat-file", "-p", "HEAD:b.mk").stdout.endswith(MAKEFILE)
    _git(home, proj, "checkout", "--", "b.mk")
    subprocess.run(["make", "-s", "-C", str(proj), "-f", "b.mk", "test"], capture_output=True)
    assert not (proj / "PWNED").exists()
