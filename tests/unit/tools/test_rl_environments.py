"""RL environments: user environments under $HERMES_HOME/rl/environments, Atropos BaseEnv classes found by
reading (not importing) a directory, and the three scorers."""

from __future__ import annotations

import json

import pytest

from hermes_agent.tools.builtin import _rlrollout as ro


def test_user_environment_listed_and_loaded(hermes_home):
    base = hermes_home / "rl" / "environments" / "capitals"
    base.mkdir(parents=True)
    (base / "environment.json").write_text(json.dumps({"description": "Capitals", "scorer": "exact"}))
    (base / "prompts.jsonl").write_text(json.dumps({"prompt": "Capital of France?", "answer": "Paris"}) + "\n")
    broken = hermes_home / "rl" / "environments" / "broken"
    broken.mkdir()
    (broken / "environment.json").write_text(json.dumps({"scorer": "vibes"}))
    envs = {e["name"]: e for e in ro.list_environments()}
    assert envs["capitals"]["prompts"] == 1 and envs["capitals"]["scorer"] == "exact"
    assert "scorer must be one of contains, exact, regex" in envs["broken"]["error"]
    assert envs["arithmetic"]["path"] == "(built in)"
    assert ro.load_environment("capitals")["rows"][0]["answer"] == "Paris"
    with pytest.raises(ValueError, match="no environment 'nope'"):
        ro.load_environment("nope")
    with pytest.raises(ValueError, match="invalid environment name"):
        ro.load_environment("../etc")


def test_atropos_environments_read_without_import(tmp_path):
    (tmp_path / "gsm8k_env.py").write_text(
        "import does_not_exist\nfrom atroposlib.envs.base import BaseEnv\n"
        "class GSM8kEnv(BaseEnv):\n    '''Grade-school math with a numeric verifier.'''\n")
    (tmp_path / "helpers.py").write_text("class Util:\n    pass\n")
    (tmp_path / "bad.py").write_text("def (:\n")
    found = ro.atropos_environments(str(tmp_path))
    assert found == [{"name": "gsm8k_env", "kind": "atropos", "class": "GSM8kEnv", "path": str(tmp_path / "gsm8k_env.py"),
                      "description": "Grade-school math with a numeric verifier."}]
    assert ro.atropos_environments("") == [] and ro.atropos_environments(str(tmp_path / "missing")) == []


@pytest.mark.parametrize("scorer,answer,reply,expected", [
    ("contains", "42", "The answer is 42.", 1.0), ("contains", "42", "forty-two", 0.0),
    ("exact", "Paris", "  Paris\n", 1.0), ("exact", "Paris", "Paris, France", 0.0),
    ("regex", r"^\d+$", "128", 1.0), ("regex", r"^\d+$", "about 128", 0.0)])
def test_scorers(scorer, answer, reply, expected):
    assert ro.score(scorer, answer, reply) == expected


def test_final_reply_is_the_last_assistant_turn():
    entry = {"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "q"},
                               {"from": "gpt", "value": "calling a tool"}, {"from": "tool", "value": "{}"},
                               {"from": "gpt", "value": "final"}]}
    assert ro.final_reply(entry) == "final" and ro.final_reply({}) == ""
