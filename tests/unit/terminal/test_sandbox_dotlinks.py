"""dotlinks.py and its plan (issue 19): which of HOME's dot-links lead into a writable root, how deep and how
far the walk looks, what it keeps of a link chain, and what spec_from_policy and bwrap make of it (including
the fail-closed plan over the budget and a symlinked ~/.gitconfig). Real files in tmp_path."""

from __future__ import annotations

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox import dotlinks, landlock
from hermes_agent.terminal.sandbox.bwrap import bwrap_argv
from hermes_agent.terminal.sandbox.spec import spec_from_policy


def _layout(tmp_path):
    home = tmp_path / "home"
    ws = home / "dotfiles"
    for rel in ("nvim", "bin", "deep", "other"):
        (ws / rel).mkdir(parents=True)
    for rel in ("vimrc", "gitconfig", "README", "deep/x.lua"):
        (ws / rel).write_text("x\n")
    (home / ".config/a/b/c").mkdir(parents=True)
    (home / ".ssh").mkdir()
    links = {".vimrc": ws / "vimrc", ".gitconfig": ws / "gitconfig", ".config/nvim": ws / "nvim",
             "bin": ws / "bin", "notes": ws / "other", ".config/a/b/c/x.lua": ws / "deep/x.lua",
             ".ssh/config": tmp_path / "elsewhere"}
    for link, target in links.items():
        (home / link).symlink_to(target)
    return home, ws


def _in(ws):
    return lambda p: p == str(ws) or p.startswith(str(ws) + "/")


def test_kept_are_link_targets_in_writable_roots(tmp_path):
    home, ws = _layout(tmp_path)
    kept, complete = dotlinks.kept_paths(str(home), _in(ws), search_path="/usr/bin")
    assert complete
    # ~/notes is not a run-later place (a top-level non-dot link off PATH); ~/.ssh/config leads elsewhere
    assert sorted(kept) == sorted(str(ws / r) for r in ("vimrc", "gitconfig", "nvim", "bin", "deep/x.lua"))
    kept, _ = dotlinks.kept_paths(str(home), _in(ws), search_path=str(home / "notes"))
    assert str(ws / "other") in kept  # a non-dot link that is on PATH


def test_walk_stops_at_its_depth_and_fails_closed_over_budget(tmp_path):
    home, ws = _layout(tmp_path)
    (home / ".config/a/b/c/d/e").mkdir(parents=True)
    (home / ".config/a/b/c/d/e/too-deep.lua").symlink_to(ws / "README")
    kept, complete = dotlinks.kept_paths(str(home), _in(ws), search_path="")
    assert complete and str(ws / "README") not in kept
    kept, complete = dotlinks.kept_paths(str(home), _in(ws), search_path="", budget=5)
    assert not complete


def test_a_linked_hop_inside_the_workspace_is_kept_and_a_loop_is_not(tmp_path):
    home, ws = _layout(tmp_path)
    (ws / "v1").mkdir()
    (ws / "cur").symlink_to("v1")
    (home / ".inputrc").symlink_to(ws / "cur/inputrc")  # missing file behind a link in the workspace
    (home / ".loop").symlink_to(home / ".loop")
    kept, _ = dotlinks.kept_paths(str(home), _in(ws), search_path="")
    assert str(ws / "cur") in kept and str(ws / "v1/inputrc") in kept
    assert dotlinks.resolve_chain(str(home / ".loop")) is None


def test_the_walk_does_not_enter_writable_directories(tmp_path):
    """A workspace inside ~/.config is the sandbox's: links made there are not the user's."""
    home, ws = _layout(tmp_path)
    inner = home / ".config/a"
    (inner / "planted").symlink_to(ws / "README")
    kept, _ = dotlinks.kept_paths(str(home), lambda p: _in(ws)(p) or _in(inner)(p), search_path="")
    assert str(ws / "README") not in kept


def _spec(home, ws, mechanism="bwrap"):
    policy = PathPolicy.build(workspace=[str(ws)], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": False})
    return spec_from_policy(policy, mechanism=mechanism)


def test_plan_binds_targets_read_only_and_landlock_carves_them(tmp_path):
    home, ws = _layout(tmp_path)
    spec = _spec(home, ws)
    for rel in ("vimrc", "nvim", "deep/x.lua"):
        assert spec.denies_write(str(ws / rel)), rel
    assert not spec.denies_write(str(ws / "README")) and not spec.denies_write(str(ws / "newfile"))
    assert str(ws / "deep") in spec.pinned  # the directory on the way cannot be renamed away
    argv = bwrap_argv(spec)
    assert any(argv[i:i + 3] == ["--ro-bind", str(ws / "vimrc"), str(ws / "vimrc")] for i in range(len(argv)))
    rules = landlock.plan(spec.writable, spec.secrets, 3, spec.sealed)
    writes = {p for p, r in rules if r & (landlock.WRITE_FILE | landlock.MAKE_REG)}
    assert not any(p == str(ws) or p.startswith((str(ws / "vimrc"), str(ws / "nvim"))) for p in writes)
    assert str(ws / "README") in writes and str(ws / "other") in writes
    assert "link into what the sandbox could write" in spec.note


def test_symlinked_gitconfig_copy_goes_over_its_target(tmp_path):
    home, ws = _layout(tmp_path)
    (ws / "gitconfig").write_text("[user]\n\tname = Me\n[credential]\n\thelper = store\n")
    spec = _spec(home, ws)
    orig, copy = spec.git_globals[0]
    assert orig == str(ws / "gitconfig") and "name = Me" in open(copy).read() and "helper" not in open(copy).read()
    argv = bwrap_argv(spec)
    assert argv.index(str(ws / "gitconfig"), argv.index(copy))
    at = argv.index(str(home / ".gitconfig"))  # HOME is a tmpfs: the name is made again as the link it is
    assert argv[at - 2:at] == ["--symlink", str(ws / "gitconfig")] and argv.count(str(home / ".gitconfig")) == 1


def test_missing_target_keeps_its_directory_and_rebinds_the_rest(tmp_path):
    home, ws = _layout(tmp_path)
    (home / ".tmux.conf").symlink_to(ws / "tmux.conf")
    spec = _spec(home, ws)
    assert spec.denies_write(str(ws / "tmux.conf")) and spec.denies_write(str(ws / "newtop"))
    assert not spec.denies_write(str(ws / "README")) and not spec.denies_write(str(ws / "other/new"))


def test_over_budget_keeps_every_writable_root_read_only(tmp_path, monkeypatch):
    home, ws = _layout(tmp_path)
    monkeypatch.setattr(dotlinks.kept_paths, "__defaults__", (None, 3))
    spec = _spec(home, ws)
    assert spec.denies_write(str(ws / "README")) and "too many entries" in spec.note


def test_hooks_path_of_a_symlinked_global_config_stays_read_only(tmp_path):
    home, ws = _layout(tmp_path)
    (ws / "hooks").mkdir()
    (ws / "gitconfig").write_text(f"[core]\n\thooksPath = {ws / 'hooks'}\n")
    proj = home / "proj"
    proj.mkdir()
    spec = _spec(home, ws)
    assert spec.denies_write(str(ws / "hooks/pre-commit"))


def test_a_link_into_a_shared_tmp_does_not_take_tmp_away_under_landlock(tmp_path):
    home, ws = _layout(tmp_path)
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as pulse:
        (home / ".config/pulse").mkdir()
        (home / ".config/pulse/abc-runtime").symlink_to(pulse)
        policy = PathPolicy.build(workspace=[str(ws)], hermes_home=str(home / ".hermes"), home=str(home),
                                  config={"shared_tmp": True})
        spec = spec_from_policy(policy)
        assert spec.denies_write(pulse + "/x")  # bwrap: re-bound read-only
        assert not spec.denies_write("/tmp/new-file") and pulse not in spec.sealed
