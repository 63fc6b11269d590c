"""rt12 a29 (issue 19), through the real `hermes chat -q` without --yolo and nobody to ask: a command that writes a
file and runs it in the same call (`printf 'clean:...' > M9; make -s -f M9 clean`), or runs a file an earlier
call of the session wrote (`just wipe` after write_file justfile), is judged by the part of the file that runs.
The directory it would delete is still there, the verdict says why; an ordinary recipe written and run works."""

from __future__ import annotations

import json

import pytest

from hermes_agent.terminal.sandbox.bwrap import bwrap_problem
from hermes_agent.terminal.sandbox.launcher import landlock_problem
from tests.helpers import model_config, run_hermes
from tests.integration.test_exported_hooks import _call

pytestmark = pytest.mark.skipif(bwrap_problem() is not None and landlock_problem() is not None,
                                reason="no OS sandbox")


def _results(scripted) -> list[str]:  # noqa: ANN001
    msgs = scripted.requests[-1]["body"]["messages"]
    return [m["content"] for m in msgs if m["role"] == "tool"]


def _work(tmp_path):  # noqa: ANN001, ANN202
    work = tmp_path / "work"
    for d in ("d9", "d10", "d11"):
        (work / d).mkdir(parents=True)
        (work / d / "f0").write_text("important\n")
    return work


def test_files_written_and_run_are_judged_by_their_recipes(scripted, hermes_home, tmp_path):
    work = _work(tmp_path)
    model_config(hermes_home, scripted.url)
    scripted.add(
        _call("printf 'clean:\\n\\t$(RM) -r d9\\n' > M9; make -s -f M9 clean"),
        _call("printf 'rm -rf d10\\n' | tee x.sh >/dev/null; sh x.sh"),
        {"tool_calls": [{"name": "write_file", "arguments": {"path": str(work / "justfile"),
                                                             "content": "hello:\n    echo hi\nwipe:\n    rm -rf d11\n"}}]},
        _call("just wipe"),
        _call("printf 'hello:\\n\\techo made-$$((6*7))\\n' > M; make -s -f M hello"),
        {"content": "done"},
    )
    out = run_hermes("chat", "-q", "tidy up", home=hermes_home, cwd=str(work), input="", timeout=180)
    assert out.returncode == 0, out.stderr
    results = _results(scripted)
    terminal = [r for r in results if '"output"' in r or '"blocked"' in r]
    assert len(terminal) == 4, results
    for verdict in terminal[:3]:
        assert '"blocked": true' in verdict and "recursive delete" in verdict, verdict
    assert "(in justfile)" in terminal[2], terminal[2]
    assert all((work / d / "f0").read_text() == "important\n" for d in ("d9", "d10", "d11"))
    ordinary = json.loads(terminal[3])
    assert "made-42" in ordinary["output"] and not ordinary.get("blocked"), ordinary


@pytest.mark.parametrize("where", ["work", "tmp"])
def test_a_file_an_earlier_call_wrote_is_read_where_the_confined_side_wrote_it(scripted, hermes_home, tmp_path, where):
    work = _work(tmp_path)
    path = "M9" if where == "work" else "/tmp/M9"
    model_config(hermes_home, scripted.url)
    scripted.add(_call(f"printf 'clean:\\n\\t$(RM) -r {work}/d9\\n' > {path}; echo written"),
                 _call(f"make -s -f {path} clean"), {"content": "done"})
    out = run_hermes("chat", "-q", "tidy up", home=hermes_home, cwd=str(work), input="", timeout=180)
    assert out.returncode == 0, out.stderr
    first, second = _results(scripted)
    assert "written" in first, first
    assert '"blocked": true' in second and "recursive delete" in second, second
    assert (work / "d9" / "f0").read_text() == "important\n"
