"""The pure parts of the sandbox: spec from the path policy, bwrap argv, Landlock rule plan, the
"blocked by the sandbox" note and the environment scrub. Real files in tmp_path, no mocks."""

from __future__ import annotations

import os

from hermes_agent.approval.policy import PathPolicy
from hermes_agent.terminal.sandbox import landlock
from hermes_agent.terminal.sandbox.bwrap import bwrap_argv
from hermes_agent.terminal.sandbox.spec import (
    SandboxSpec,
    blocked_by_sandbox,
    secret_env_names,
    spec_from_policy,
)


def _tree(tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("k")
    (home / ".netrc").write_text("machine x")
    (home / ".bashrc").write_text("# rc")
    (home / "notes").mkdir()
    work = home / "proj"
    (work / ".git" / "hooks").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]")
    policy = PathPolicy.build(workspace=[str(work)], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": False})
    return home, work, policy


def test_spec_takes_existing_paths_and_carves_workspace_git_files(tmp_path):
    home, work, policy = _tree(tmp_path)
    spec = spec_from_policy(policy, network="off")
    assert spec.writable == (str(work),) and spec.network is False
    assert spec.hides(str(home / ".ssh/id_rsa")) and spec.hides(str(home / ".netrc")) and spec.hides(str(home / "notes"))
    assert spec.home_closed == str(home) and not [s for s in spec.secrets if s.startswith(str(home))]  # no mount each
    assert str(home / ".gnupg") not in spec.secrets  # missing paths are not mounted
    assert set(spec.readonly) == {str(work / ".git" / n) for n in ("hooks", "info", "config")}  # info/ made
    assert spec.denies_write(str(home / ".bashrc")) and not spec.denies_write(str(work / "a.py"))
    assert spec.denies_write(str(work / ".git" / "hooks" / "pre-commit"))
    ro = spec_from_policy(policy, mode="read-only")
    assert ro.writable == () and ro.readonly == ()


def test_home_workspace_keeps_rc_files_read_only(tmp_path):
    home, _, _ = _tree(tmp_path)
    policy = PathPolicy.build(workspace=[str(home)], hermes_home=str(home / ".hermes"), home=str(home),
                              config={"shared_tmp": False})
    spec = spec_from_policy(policy)
    assert str(home / ".bashrc") in spec.readonly and spec.denies_write(str(home / ".bashrc"))


def test_bwrap_argv_orders_mounts_root_binds_carveouts_secrets(tmp_path):
    home, work, policy = _tree(tmp_path)
    argv = bwrap_argv(spec_from_policy(policy, network=False).with_writable(str(tmp_path / "state")))
    assert os.path.basename(argv[0]) == "bwrap" and argv[1:8] == ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    joined = " ".join(argv)
    assert f"--bind {work} {work}" in joined
    assert f"--ro-bind {work}/.git/hooks {work}/.git/hooks" in joined
    assert f"--tmpfs {home} " in joined and f"--remount-ro {home} " in joined  # HOME: empty but for what is bound
    assert f"{home}/.ssh" not in joined and f"{home}/.netrc" not in joined  # not there to hide
    assert joined.index(f"--tmpfs {home} ") < joined.index(f"--bind {work}") < joined.index(f"--ro-bind {work}/.git")
    assert joined.index(f"--ro-bind {work}/.git") < joined.index(f"--remount-ro {home} ")
    assert "--unshare-net" in argv and argv[-1] == "--" and "--cap-drop" in argv
    assert str(tmp_path / "state") not in joined  # missing state dir: not bound


def test_landlock_plan_reads_everything_but_secrets(tmp_path):
    home, work, policy = _tree(tmp_path)
    spec = spec_from_policy(policy)
    unseen, reveal = spec.read_view()
    rules = dict(landlock.plan(spec.writable, spec.secrets, abi=7, unseen=unseen, reveal=reveal))
    full = landlock.all_fs(7)
    assert str(home / ".ssh") not in rules and str(home / ".netrc") not in rules
    assert str(home) not in rules and str(home / "notes") not in rules  # HOME: not even listable
    assert rules[str(home.parent)] == landlock.READ_DIR
    assert str(home / ".bashrc") not in rules  # rc files hold exported tokens: hidden
    assert rules[str(work)] == full
    for path in rules:  # nothing granted contains a secret
        assert not any(s == path or s.startswith(path + "/") for s in spec.secrets) or rules[path] == landlock.READ_DIR


def test_landlock_plan_never_grants_through_a_symlink(tmp_path):
    home, work, policy = _tree(tmp_path)
    os.symlink(home, tmp_path / "link-to-home")
    spec = spec_from_policy(policy)
    assert str(tmp_path / "link-to-home") not in dict(landlock.plan(spec.writable, spec.secrets, abi=7))


def test_blocked_note_only_for_paths_the_sandbox_refuses(tmp_path):
    home, work, policy = _tree(tmp_path)
    spec = spec_from_policy(policy)
    assert blocked_by_sandbox(spec, f"bash: {home}/.bashrc: Read-only file system", str(work), str(home))
    assert blocked_by_sandbox(spec, "cat: ~/.ssh/id_rsa: No such file or directory", str(work), str(home))
    assert blocked_by_sandbox(spec, "rm: cannot remove 'x': Permission denied", str(home), str(home))
    assert not blocked_by_sandbox(spec, "cat: missing.txt: No such file or directory", str(work), str(home))
    assert not blocked_by_sandbox(spec, "bash: ./run.sh: Permission denied", str(work), str(home))
    assert not blocked_by_sandbox(SandboxSpec(writable=(str(work),)), "all good", str(work), str(home))


def test_secret_env_names_from_dotenv_and_config_keys():
    config = {"model": {"api_key": "sk-config-123456"}, "auxiliary": {"vision": {"api_key": "short"}},
              "display": {"personality": "sk-config-123456-not-a-key-name"}}
    environ = {"MY_LLM": "sk-config-123456", "PATH": "/bin", "OTHER": "short"}
    names = secret_env_names({"TELEGRAM_BOT_TOKEN": "x", "WEIRD_NAME": "y"}, config, environ)
    assert names == ("MY_LLM", "TELEGRAM_BOT_TOKEN", "WEIRD_NAME")


def test_blocked_note_ignores_program_names_before_the_message(tmp_path):
    home, work, policy = _tree(tmp_path)
    spec = spec_from_policy(policy)
    assert not blocked_by_sandbox(spec, "cat: notes: Is a directory", str(home), str(home))
    assert blocked_by_sandbox(spec, "bash: line 6: out.txt: Permission denied", str(home), str(home))
