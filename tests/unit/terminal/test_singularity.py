"""The singularity backend. Apptainer is not installable on these machines, so an `apptainer`
stand-in script on PATH checks the argv shape (exec [--bind B] IMAGE shell -c body) and runs the
command on the host; the backend code under test is the real one."""

from __future__ import annotations

import os

import pytest

from hermes_agent.errors import HermesError
from hermes_agent.terminal.manager import BackendPool

from .conftest import make_settings

_SHIM = """#!/bin/sh
echo "$1 $2 $3 $4 $5 $6 $7" | sed 's/ *$//' >> "{log}"
[ "$1" = exec ] || {{ echo "shim: expected exec" >&2; exit 99; }}
shift
while [ "$1" = --bind ]; do shift 2; done
[ -d "$1" ] || {{ echo "shim: image $1 missing" >&2; exit 98; }}
shift
exec "$@"
"""


@pytest.fixture
def shim(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "apptainer.log"
    script = bindir / "apptainer"
    script.write_text(_SHIM.format(log=log))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    # the shim stands for an installed apptainer: earlier sandboxes of this test process marked /tmp (where
    # tmp_path lies) as a place commands write, whose programs hermes never runs (paths.trusted_which)
    from hermes_agent import paths

    monkeypatch.setattr(paths, "_UNTRUSTED", set())
    monkeypatch.setattr(paths, "_RESOLVED", {})
    return log


def test_commands_run_through_apptainer_exec_with_state(shim, tmp_path, work):
    image = tmp_path / "image.sandbox"
    image.mkdir()
    settings = make_settings(tmp_path, work, terminal={"backend": "singularity", "singularity_image": str(image),
                                                       "singularity_binds": ["/srv:/srv"]})
    pool = BackendPool(settings)
    try:
        b = pool.get("s")
        assert b.kind == "singularity"
        b.execute(f"cd {tmp_path} && export IN_IMAGE=yes")
        res = b.execute("pwd; echo $IN_IMAGE")
        assert res.output.split() == [str(tmp_path), "yes"]
        timed = b.execute("sleep 30", timeout=0.5)
        assert timed.timed_out and timed.exit_code == 124
    finally:
        pool.close_all()
    calls = shim.read_text().splitlines()
    assert calls[0] == f"exec {image} sh -c command -v bash"
    assert calls[1:] and all(c == f"exec --bind /srv:/srv {image} bash --norc -c" for c in calls[1:])


def test_missing_apptainer_is_a_clear_error(tmp_path, work, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    settings = make_settings(tmp_path, work, terminal={"backend": "singularity", "singularity_image": "x.sif"})
    with pytest.raises(HermesError, match="neither `apptainer` nor `singularity` is installed"):
        BackendPool(settings).get("s")
