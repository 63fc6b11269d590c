"""The path policy resolves its ~250 roots with the resolved parents shared between them (approval/policy.py
`_realpath`, issue 24: start-up): every answer must be the one os.path.realpath gives, on a real tree with
directory links, relative and chained links, a link up the tree, a dangling link and missing tails."""

from __future__ import annotations

import os

from hermes_agent.approval.policy import PathPolicy, _realpath


def test_shared_parent_resolution_answers_as_realpath_does(tmp_path):
    real = tmp_path / "real"
    (real / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    os.symlink(real, tmp_path / "home" / ".local")  # absolute link to a directory
    os.symlink("../real/sub", tmp_path / "home" / "rel")  # relative link
    os.symlink(tmp_path / "home" / "rel", tmp_path / "home" / "chain")  # a link to a link
    os.symlink("..", real / "sub" / "up")  # a link up the tree
    os.symlink(tmp_path / "missing", tmp_path / "home" / "dangling")
    names = [".local", ".local/sub", ".local/sub/deep/x", "rel/deep", "chain/deep", "chain/up/sub/up",
             "dangling", "dangling/x", "nothere/a/b", ".local/../real", "./rel", "rel//deep", ""]
    memo: dict[str, str] = {}
    for name in names:
        path = str(tmp_path / "home" / name) if name else str(tmp_path / "home")
        assert _realpath(path, memo) == os.path.realpath(path), name
    assert _realpath("/", memo) == "/"


def test_a_policy_lists_the_same_roots_as_with_plain_realpath(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    os.symlink(tmp_path, home / ".cargo")
    policy = PathPolicy.build(workspace=[str(tmp_path / "ws")], hermes_home=str(home / ".hermes"), home=str(home))
    import hermes_agent.approval.policy as mod

    monkeypatch.setattr(mod, "_realpath", lambda path, memo: os.path.realpath(path))
    plain = PathPolicy.build(workspace=[str(tmp_path / "ws")], hermes_home=str(home / ".hermes"), home=str(home))
    assert policy == plain
    assert os.path.join(str(tmp_path), "bin") in policy.readable  # ~/.cargo/bin through the link
