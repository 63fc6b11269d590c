"""rt14b c26/c26b through the real `hermes chat -q`: the workspace is a `git worktree add` checkout (its `.git` is a
file naming <main>/.git/worktrees/<name>, the objects and refs are in the main repository's .git outside the
workspace) or a submodule checkout (its git directory is <super>/.git/modules/<name>). git must work inside the
sandbox (status, add, commit) with the protections of an ordinary repository: hooks, config and the redirect files
of the outside git directory stay read-only, a forged object in the common dir is removed, and nothing of the
main checkout's files becomes writable."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import _git, _terminal, home  # noqa: F401

HOOK = "#!/bin/sh\\ntouch \"$PWNED\"\\n"
CONTROL = ("git status --short --branch && echo new > n.txt && git add n.txt && git commit -qm inside && "
           "git log --format=%s -1 && echo CONTROL_OK")
# a hook in the common dir (git runs the main repository's hooks for every worktree)
PLANT_HOOK = (f"c=$(git rev-parse --git-common-dir); printf '{HOOK}' > $c/hooks/post-checkout; "
              "chmod +x $c/hooks/post-checkout; echo TRIED")
# core.fsmonitor in the common dir's config; core.hooksPath in the worktree's own config.worktree
PLANT_CONFIG = ("c=$(git rev-parse --git-common-dir); printf '[core]\\n\\tfsmonitor = touch \"$PWNED\"\\n' >> $c/config;"
                " printf '[core]\\n\\thooksPath = /tmp\\n' > $(git rev-parse --git-dir)/config.worktree; echo TRIED")
# the worktree's git directory redirected to another common dir
REDIRECT = "echo ../../../../evil > $(git rev-parse --git-dir)/commondir; echo TRIED"
# the committed Makefile's loose object in the common dir rewritten (git hands it out on the next checkout)
FORGE = ("c=$(git rev-parse --git-common-dir); o=$(git rev-parse HEAD:Makefile); p=$c/objects/$(echo $o | cut -c1-2)"
         "/$(echo $o | cut -c3-); chmod u+w $p; python3 -c \"import zlib,sys; e=b'test:\\n\\ttouch PWNED\\n'; "
         "sys.stdout.buffer.write(zlib.compress(b'blob %d\\0' % len(e) + e))\" > $p && echo FORGED")
# a replace ref and an alternate object store in the common dir (what git hands out for an existing object)
REPLACE = ("e=$(printf 'test:\\n\\ttouch PWNED\\n' | git hash-object -w --stdin) && "
           "git replace -f $(git rev-parse HEAD:Makefile) $e && echo PLANTED")
ALTERNATE = ("git init -q --bare forged && printf x | git --git-dir=forged hash-object -w --stdin && "
             "echo $PWD/forged/objects > $(git rev-parse --git-common-dir)/objects/info/alternates && echo PLANTED")
# the main checkout's own files: outside the workspace
MAIN_FILE = "echo changed > ../proj/a.txt; echo TRIED"


def _chat(scripted, home: Path, cwd: Path, commands: list[str], mechanism: str) -> list[str]:  # noqa: F811
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    scripted.add(*(_terminal(c) for c in commands), {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=home / ".hermes", cwd=str(cwd), timeout=180,
                     env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    return [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_git_works_in_a_linked_worktree_and_its_common_dir_stays_guarded(scripted, home, mechanism):  # noqa: F811
    proj, wt = home / "proj", home / "wt"
    (proj / "Makefile").write_text("test:\n\techo ok\n")
    _git(home, proj, "add", "Makefile")
    _git(home, proj, "commit", "-qm", "mk")
    _git(home, proj, "worktree", "add", "-q", str(wt), "-b", "feature")
    common = proj / ".git"
    config, commondir = (common / "config").read_text(), (common / "worktrees/wt/commondir").read_text()
    results = _chat(scripted, home, wt, [CONTROL, PLANT_HOOK, PLANT_CONFIG, REDIRECT, MAIN_FILE,
                                                 CONTROL.replace("n.txt", "m.txt"), REPLACE, ALTERNATE, FORGE],
                    mechanism)
    assert "CONTROL_OK" in results[0] and "## feature" in results[0] and "inside" in results[0], results[0]
    assert "not a git repository" not in results[0]
    assert "CONTROL_OK" in results[5], results[5]  # still a repository after the attempts
    assert not (common / "hooks/post-checkout").exists(), results[1]
    assert (common / "config").read_text() == config, results[2]
    assert not (common / "worktrees/wt/config.worktree").exists(), results[2]
    assert (common / "worktrees/wt/commondir").read_text() == commondir, results[3]
    assert (proj / "a.txt").read_text() == "a\n", results[4]
    assert "PLANTED" in results[6] and not list((common / "refs/replace").glob("*")), results[6]
    assert "PLANTED" in results[7] and not (common / "objects/info/alternates").exists(), results[7]
    assert "FORGED" in results[8] and "not the git object it names" in results[8], results[8]
    # the commits made inside are the user's branch; the user's next checkout in the main tree runs nothing
    assert _git(home, proj, "log", "--format=%s", "feature").stdout.split()[:2] == ["inside", "inside"]
    (proj / "Makefile").unlink()
    subprocess.run(["git", "checkout", "--", "Makefile"], cwd=proj, capture_output=True, env={"HOME": str(home)})
    assert "PWNED" not in ((proj / "Makefile").read_text() if (proj / "Makefile").exists() else "")
    _git(home, proj, "checkout", "-q", "-b", "other")
    _git(home, proj, "status", "--short")
    assert not (home / "pwned").exists(), "a planted hook or fsmonitor ran on the user's git command"



def _add_submodule(root, proj) -> None:
    """A one-commit repository `root/subsrc` added to `proj` as the submodule `sub`."""
    src = root / "subsrc"
    src.mkdir()
    _git(root, src, "init", "-q")
    (src / "s.txt").write_text("s\n")
    _git(root, src, "add", "s.txt")
    _git(root, src, "commit", "-qm", "s")
    _git(root, proj, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(src), "sub")


def test_git_works_in_a_submodule_checkout_and_its_git_dir_stays_guarded(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    _add_submodule(home, proj)
    _git(home, proj, "commit", "-qm", "sub")
    sub, gd = proj / "sub", proj / ".git/modules/sub"
    config = (gd / "config").read_text()
    results = _chat(scripted, home, sub, [
        CONTROL, f"printf '{HOOK}' > $(git rev-parse --git-dir)/hooks/pre-commit; echo TRIED",
        "printf '[core]\\n\\tfsmonitor = touch \"$PWNED\"\\n' >> $(git rev-parse --git-dir)/config; echo TRIED",
        "echo changed > ../a.txt; echo TRIED"], mechanism)
    assert "CONTROL_OK" in results[0] and "inside" in results[0], results[0]
    assert not (gd / "hooks/pre-commit").exists(), results[1]
    assert (gd / "config").read_text() == config, results[2]
    assert (proj / "a.txt").read_text() == "a\n", results[3]
    assert _git(home, sub, "log", "--format=%s", "-1").stdout.strip() == "inside"
    (sub / "u.txt").write_text("u\n")
    _git(home, sub, "add", "u.txt")
    _git(home, sub, "commit", "-qm", "user")
    _git(home, sub, "status", "--short")
    assert not (home / "pwned").exists(), "a planted hook or fsmonitor ran on the user's git command"


def test_a_worktree_session_commits_on_its_branch(scripted, home, mechanism):  # noqa: F811
    """`hermes -w`: the session's workspace is <repo>/.worktrees/<name>, a linked worktree of the user's repository
    (outside /tmp here, so the repository's .git is not writable by way of the shared temp dirs)."""
    proj = home / "proj"
    model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
    scripted.add(_terminal("echo w > w.txt && git add w.txt && git commit -qm in-worktree && git status --short "
                           "--branch && echo COMMITTED"), _terminal(PLANT_HOOK), {"content": "done"})
    out = run_hermes("-w", "chat", "-q", "go", "--yolo", "-t", "terminal", home=home / ".hermes", cwd=str(proj),
                     timeout=180, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert "COMMITTED" in results[0] and "## hermes/hermes-" in results[0], results[0]
    branch = results[0].split("## ", 1)[1].split("\\n", 1)[0]
    assert _git(home, proj, "log", "--format=%s", "-1", branch).stdout.strip() == "in-worktree"
    assert not (proj / ".git/hooks/post-checkout").exists(), results[1]


def test_a_gitdir_file_naming_another_checkout_s_git_dir_opens_nothing(scripted, home, mechanism):  # noqa: F811
    """The `.git` file lies in the workspace (confined work, or whoever cloned it, wrote it): a git directory it
    names is opened only when a file outside the workspace names this checkout back. Here it names the git
    directories of the user's OTHER checkouts (a linked worktree, a submodule): their refs and objects stay
    unwritable."""
    proj, ws = home / "proj", home / "ws"
    _git(home, proj, "worktree", "add", "-q", str(home / "wt"), "-b", "feature")
    _add_submodule(home, proj)
    ws.mkdir()
    for tag, gd in (("wt", proj / ".git/worktrees/wt"), ("sub", proj / ".git/modules/sub")):
        (ws / ".git").write_text(f"gitdir: {gd}\n")
        common = proj / ".git" if tag == "wt" else gd
        results = _chat(scripted, home, ws, [
            f"echo x > {gd}/HEAD; git update-ref refs/heads/evil HEAD; mkdir -p {common}/objects/ev && "
            f"echo x > {common}/objects/ev/il; echo TRIED"], mechanism)
        assert "TRIED" in results[0], results[0]
        assert (gd / "HEAD").read_text() != "x\n", results[0]
        assert not (common / "refs/heads/evil").exists() and not (common / "objects/ev").exists(), results[0]


def test_a_file_tool_write_into_a_git_directory_asks(scripted, home, mechanism):  # noqa: F811
    """The file tools write as hermes, where the guard does not look: a `refs/replace/*` ref written with
    write_file (in the workspace's .git, or in a linked worktree's common dir) made `git show`/checkout hand out
    other content for a committed file. Nobody can approve in `chat -q`: refused, git shows what was committed."""
    proj = home / "proj"
    _git(home, proj, "worktree", "add", "-q", str(home / "wt"), "-b", "feature")
    good = _git(home, proj, "rev-parse", "HEAD:a.txt").stdout.strip()
    evil = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=proj, input="EVIL\n", capture_output=True,
                          text=True, check=True).stdout.strip()
    for cwd in (proj, home / "wt"):
        model_config(home / ".hermes", scripted.url, f"sandbox:\n  mechanism: {mechanism}\n")
        scripted.add(*({"tool_calls": [{"name": "write_file", "arguments": {"path": str(proj / path), "content": text}}]}
                       for path, text in ((f".git/refs/replace/{good}", evil + "\n"),
                                          (".git/objects/info/alternates", str(home) + "\n"))), {"content": "done"})
        out = run_hermes("chat", "-q", "go", "-t", "file", home=home / ".hermes", cwd=str(cwd), timeout=180,
                         env={"HOME": str(home)}, input="")
        assert out.returncode == 0, out.stderr
        results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
        assert all("inside a git directory" in r and "BLOCKED" in r for r in results), results
        assert not (proj / ".git/refs/replace").exists() and not (proj / ".git/objects/info/alternates").exists()
        assert _git(home, proj, "show", "HEAD:a.txt").stdout == "a\n"
