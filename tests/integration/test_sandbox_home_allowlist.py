"""Issue 19, readable paths are an allowlist in HOME too (red-team round 7 a17, a25, a26): with the workspace
~/proj, nothing else of HOME is readable but the toolchain locations, git's settings and the user's
`sandbox.readable_paths` — not a download of AWS keys, a keys folder, an old project without .git, a password
database (a17); not a secret reached by another name, a stow link's target or a hard link (a26); not a file
the user makes in HOME while the session runs (a25). Controls: a `pip install --user` package and its script,
tools in ~/.nvm, ~/.cargo/bin and ~/bin (PATH), git with a symlinked ~/.gitconfig. Through `hermes chat -q` and
the scripted model, bubblewrap and Landlock, root and uid 65534, HOME outside /tmp."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.integration.test_sandbox_secrets import UNPRIV, _calls, mechanism, world  # noqa: F401  (fixtures)

PLAIN = {"Downloads/credentials.csv": "Access key ID,Secret\nAKIA,PLAIN-CSV-1\n",
         "keys/deploy.pem": "-----BEGIN RSA PRIVATE KEY-----\nPLAIN-PEM-2\n",
         "oldproj/terraform.tfstate": '{"password": "PLAIN-TFSTATE-3"}',
         "Documents/passwords.kdbx": "PLAIN-KDBX-4",
         "backup/home-2025/.ssh/id_ed25519": "PLAIN-BACKUP-5"}
PLAIN_MARKERS = ("PLAIN-CSV-1", "PLAIN-PEM-2", "PLAIN-TFSTATE-3", "PLAIN-KDBX-4", "PLAIN-BACKUP-5")
LINKED = ("LINK-SSH-6", "LINK-AWS-7", "LINK-NETRC-8", "LINK-HARD-9", "LINK-WS-10")


@pytest.fixture
def home_root():
    """HOME outside /tmp and every writable root (the red team's layout)."""
    base = "/root" if os.access("/root", os.W_OK) else os.path.expanduser("~")
    path = Path(tempfile.mkdtemp(prefix="sbxa-home-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _own(w) -> None:
    if w.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(w.home)], check=True)


def _plant(world) -> None:  # noqa: F811
    h = world.home
    for rel, text in PLAIN.items():
        (h / rel).parent.mkdir(parents=True, exist_ok=True)
        (h / rel).write_text(text + "\n")
    (h / "keys/deploy.pem").chmod(0o600)
    for d in ("dotfiles/ssh", "dotfiles/aws", "backup"):
        (h / d).mkdir(parents=True, exist_ok=True)
    (h / "dotfiles/ssh/id_ed25519").write_text("LINK-SSH-6\n")
    (h / ".ssh").mkdir(exist_ok=True)
    os.symlink(h / "dotfiles/ssh/id_ed25519", h / ".ssh/id_ed25519")
    (h / "dotfiles/aws/credentials").write_text("LINK-AWS-7\n")
    (h / ".aws").mkdir(exist_ok=True)
    os.symlink("../dotfiles/aws/credentials", h / ".aws/credentials")
    (h / "dotfiles/netrc").write_text("machine x password LINK-NETRC-8\n")
    (h / ".netrc").unlink(missing_ok=True)
    os.symlink("dotfiles/netrc", h / ".netrc")
    (h / ".git-credentials").write_text("https://u:LINK-HARD-9@example.invalid\n")
    os.link(h / ".git-credentials", h / "backup/git-credentials")
    (h / "keys/token").write_text("LINK-WS-10\n")
    os.symlink(h / "keys/token", world.ws / "token-link")  # a link in the workspace to a private file
    _own(world)


READ_PLAIN = ("cat ~/Downloads/credentials.csv ~/keys/deploy.pem ~/oldproj/terraform.tfstate ~/Documents/passwords.kdbx "
              "~/backup/home-2025/.ssh/id_ed25519 ~/dotfiles/ssh/id_ed25519 ~/dotfiles/aws/credentials ~/dotfiles/netrc "
              "~/backup/git-credentials token-link 2>&1; ls ~ 2>&1; grep -rh 'PLAIN\\|LINK' ~ 2>/dev/null | head -5")


def test_plain_folders_links_and_hard_links_in_home_stay_private(world):  # noqa: F811
    _plant(world)
    world.scripted.add(*_calls(("terminal", {"command": READ_PLAIN}),
                               *(("read_file", {"path": f"~/{rel}"}) for rel in PLAIN),
                               ("read_file", {"path": "~/dotfiles/aws/credentials"}),
                               ("read_file", {"path": "~/backup/git-credentials"}),
                               ("read_file", {"path": "token-link"}),
                               ("read_file", {"path": "README.md"}),
                               ("search_files", {"pattern": "LINK", "path": "~"})))
    out = world.hermes("chat", "-q", "look around my home")
    seen = world.model_saw() + out.stdout + out.stderr
    leaked = [s for s in (*PLAIN_MARKERS, *LINKED) if s in seen]
    assert not leaked, f"HOME's private files reached the model: {leaked}\n{world.tool_results()}"
    assert "project" in world.tool_results(), "the workspace stays readable"
    assert "readable only in the workspace" in seen and "sandbox.readable_paths" in seen, "read_file says why and how"
    assert "Traceback" not in out.stderr


def test_files_made_in_home_during_the_session_stay_unseen(world):  # noqa: F811
    """a25: `gh auth login` and a fresh clone while the session runs; the next command and a background one
    started before cannot read them (bwrap: HOME is a tmpfs; Landlock: no rule for HOME)."""
    h = world.home

    def user_logs_in() -> None:
        time.sleep(4)
        (h / ".config/gh").mkdir(parents=True, exist_ok=True)
        (h / ".config/gh/hosts.yml").write_text("github.com:\n    oauth_token: MID-GH-1\n")
        (h / "work/newproj").mkdir(parents=True)
        (h / "work/newproj/secrets.yml").write_text("db_password: MID-PROJ-2\n")
        _own(world)

    read = "cat ~/.config/gh/hosts.yml ~/work/newproj/secrets.yml 2>&1"
    world.scripted.add({"tool_calls": [{"id": "bg", "name": "terminal", "arguments": {
                           "command": f"sleep 8; {read} > bg.txt", "background": True}}]},
                       {"delay": 7, "tool_calls": [{"id": "late", "name": "terminal",
                                                    "arguments": {"command": f"{read}; sleep 6; cat bg.txt"}}]},
                       {"content": "done"})
    thread = threading.Thread(target=user_logs_in)
    thread.start()
    out = world.hermes("chat", "-q", "wait and look")
    thread.join()
    seen = world.model_saw()
    assert (h / "work/newproj/secrets.yml").is_file()
    assert "MID-GH-1" not in seen and "MID-PROJ-2" not in seen, world.tool_results()
    assert "secrets.yml" in world.tool_results(), "the late command ran"
    assert "Traceback" not in out.stderr


def _tools(world) -> str:  # noqa: F811
    """A pip --user install (package and console script as pip lays them out), node in ~/.nvm, a cargo tool, a
    script in ~/bin, a stow-style ~/.gitconfig link; returns the PATH to run hermes with."""
    h = world.home
    site = h / ".local/lib/python3.11/site-packages/userpkg"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("VALUE = 'USERSITE-OK'\n")
    scripts = {".local/bin/usertool": "echo USERBIN-OK", ".nvm/versions/node/v20.0.0/bin/nodetool": "echo NVM-OK",
               ".cargo/bin/cargotool": "echo CARGO-OK", "bin/mine": "echo HOMEBIN-OK"}
    for rel, body in scripts.items():
        (h / rel).parent.mkdir(parents=True, exist_ok=True)
        (h / rel).write_text(f"#!/bin/sh\n{body}\n")
        (h / rel).chmod(0o755)
    (h / "dotfiles").mkdir(exist_ok=True)
    (h / ".gitconfig").unlink()
    (h / "dotfiles/gitconfig").write_text("[user]\n\tname = STOWED-GITCFG\n\temail = u@example.com\n")
    os.symlink("dotfiles/gitconfig", h / ".gitconfig")
    _own(world)
    dirs = [h / ".local/bin", h / ".nvm/versions/node/v20.0.0/bin", h / ".cargo/bin", h / "bin"]
    return os.pathsep.join([*map(str, dirs), os.environ.get("PATH", "")])


def test_toolchains_in_home_and_git_keep_working(world, monkeypatch):  # noqa: F811
    path = _tools(world)
    monkeypatch.setenv("PATH", path)
    world.scripted.add(*_calls(("terminal", {
        "command": "usertool; nodetool; cargotool; mine; /usr/bin/python3 -c 'import userpkg; print(userpkg.VALUE)'; "
                   "git config user.name; echo x >> README.md && git commit -qam t && git log --oneline | wc -l"})))
    out = world.hermes("chat", "-q", "use my tools")
    seen = world.tool_results()
    for ok in ("USERBIN-OK", "NVM-OK", "CARGO-OK", "HOMEBIN-OK", "USERSITE-OK", "STOWED-GITCFG"):
        assert ok in seen, (ok, seen, out.stderr[-800:])
    assert "STOWED-GITCFG\\n2\\n" in seen, seen  # the commit made, with the stowed config's identity
    assert "Traceback" not in out.stderr
