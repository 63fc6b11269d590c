"""Code the command does not show (issue 19 item 11, rules/unseen.py), end to end through `hermes chat -q`: a
script's output piped to a shell is held for approval (nobody to ask: refused, and nothing ran), while a shell fed
text the command itself shows runs as usual."""

from __future__ import annotations

import json

from tests.helpers import model_config, run_hermes


def _result(scripted, k: int) -> dict:
    return json.loads(scripted.requests[k]["body"]["messages"][-1]["content"])


def test_a_generators_output_run_by_a_shell_is_held_and_shown_text_runs(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    (tmp_path / "gen.sh").write_text("echo 'touch pwned'\n")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sh gen.sh | bash"}}]},
                 {"tool_calls": [{"name": "terminal", "arguments": {"command": "printf 'echo shown-%s\\n' ok | bash"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "run the generator", home=hermes_home, input="", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    held = _result(scripted, 1)
    assert "approval" in json.dumps(held).lower() and "does not show" in json.dumps(held), held
    assert not (tmp_path / "pwned").exists()
    assert "shown-ok" in _result(scripted, 2)["output"]
