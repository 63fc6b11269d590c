"""The value and name rules behind rt15 d04/d05 (the end-to-end tests are in
tests/integration/test_sandbox_tool_secrets.py): what is kept must stay usable, what carries a secret must go."""

from __future__ import annotations

import os

from hermes_agent.approval.toolsecrets import hidden_in_trees, secret_below
from hermes_agent.terminal.sandbox.gitconf import credential_free, filter_config


def test_git_values_with_a_secret_shape_are_dropped_the_ordinary_ones_kept():
    kept = ["st = status", "lg = log --graph --pretty=format:'%h %s' --abbrev-commit", "who = shortlog -sn --author",
            "co = checkout", "amend = commit --amend --no-edit", "up = pull --rebase --autostash"]
    dropped = ["sh = !echo hi", 'q = "!f() { git log; }; f"', "ci = push https://u:p4ss@host/x.git",
               "t = log --grep=Zq8Kd93hfLa0Pz7Qw2Xc5Vb1", "g = fetch --header='Authorization: Bearer x'",
               "n = notes add -m ghp_abcdefgh1234", "p = config --get password", "k = log --grep=glpat-abcdefgh"]
    text = "[alias]\n" + "".join(f"\t{line}\n" for line in kept + dropped) + "[gc]\n\tx = AKIAABCDEFGHIJKLMNOP\n"
    out, names = filter_config(text, credential_free)
    assert all(line in out for line in kept), out
    assert names == [f"alias.{d.split()[0]}" for d in dropped] + ["gc.x"]


def test_tool_folder_settings_by_name_not_the_libraries(tmp_path):
    tree = tmp_path / ".pyenv"
    files = ["versions/3.11.9/pip.conf", "versions/3.11.9/etc/npmrc", "versions/conda/.condarc",
             "versions/3.11.9/credentials/store.toml", "versions/3.11.9/lib/node_modules/npm/npmrc"]
    code = ["versions/3.11.9/lib/python3.11/token.py", "versions/3.11.9/lib/python3.11/secrets.py",
            "versions/3.11.9/lib/python3.11/site-packages/google/auth/credentials.py",
            "versions/3.11.9/lib/python3.11/site-packages/certifi/cacert.pem", "versions/3.11.9/bin/python3",
            "versions/3.11.9/lib/node_modules/left-pad/.npmrc"]
    for rel in files + code:
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("x")
    hidden = {os.path.relpath(p, tree) for p in hidden_in_trees([str(tree)])}
    assert hidden == {*files[:3], "versions/3.11.9/credentials", files[4]}
    for rel in files:  # the file tools refuse the same entries
        assert secret_below(str(tree / rel), [str(tree)]) == str(tree), rel
    for rel in code:
        assert secret_below(str(tree / rel), [str(tree)]) is None, rel
    assert hidden_in_trees([str(tree)], grants=[str(tree / files[0])]) and \
        str(tree / files[0]) not in hidden_in_trees([str(tree)], grants=[str(tree / files[0])])
