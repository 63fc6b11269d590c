"""Issue 19 item 5, secrets by default-deny, red-team round 15 d04/d05: what is readable by allowlist must not
carry a credential in free text. d04: a token in a ~/.gitconfig alias (or any allowlisted key's value) was kept in
the sandbox's "credential-free" copy. d05: tool folders readable whole (~/.pyenv, ~/.nvm, ~/.volta,
~/.local/share/uv, ~/.sdkman/candidates...) hold the tools' own settings with tokens (uv's credential store, npm's
global npmrc, a prefix's pip.conf, maven's settings.xml), and so do others (conda's .condarc under pyenv, npm's
built-in npmrc, a pipx or pipenv venv's pip.conf, composer's auth.json, a Go module's .env). Through `hermes chat
-q` and the scripted model, bubblewrap and Landlock, root and uid 65534, HOME outside /tmp. Controls: the harmless
aliases and settings, programs in the tool folders, system python's ssl, node and npm."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.integration.test_sandbox_secrets import UNPRIV, _calls, mechanism, world  # noqa: F401  (fixtures)

GITCONFIG = (
    "[user]\n\tname = GITCONFIG-VISIBLE\n\temail = u@example.com\n"
    "[alias]\n\tst = status\n\tlg = log --oneline --author=someone\n"
    "\tdispatch = !curl -s -H \\\"Authorization: token ghp_TOOLSEC1aaaaaaaa\\\" https://api.github.com/x\n"
    "\tpub = \"!f() { npm publish --//registry.npmjs.org/:_authToken=npm_TOOLSEC2bbbb; }; f\"\n"
    "\tmirror = push https://ci:TOOLSEC3@git.example.com/x.git\n"
    "\tfind = log --grep=TOOLSEC4Zq8Kd93hfLa0Pz7Qw2Xc5Vb\n"
    "[log]\n\tdate = iso\n"
    "[gc]\n\tnote = glpat-TOOLSEC5xxxxxxxx\n"
    "[interactive]\n\tdifffilter = delta --password TOOLSEC6\n"
)
TOOL_FILES = {
    ".local/share/uv/credentials/credentials.toml": 'password = "TOOLSEC-UV"',
    ".nvm/versions/node/v20.11.0/etc/npmrc": "//registry.npmjs.org/:_authToken=TOOLSEC-NVM",
    ".nvm/versions/node/v20.11.0/lib/node_modules/npm/npmrc": "//npm.corp/:_authToken=TOOLSEC-NPMBUILTIN",
    ".pyenv/versions/3.11.9/pip.conf": "[global]\nindex-url = https://ci:TOOLSEC-PYENV@pypi.corp/simple",
    ".pyenv/versions/miniconda3-latest/.condarc": "channels:\n  - https://conda.corp/t/TOOLSEC-CONDA/main",
    ".sdkman/candidates/maven/current/conf/settings.xml": "<password>TOOLSEC-MAVEN</password>",
    ".volta/tools/image/node/20.11.0/etc/npmrc": "//npm.pkg.github.com/:_authToken=TOOLSEC-VOLTA",
    ".local/share/pipx/venvs/httpie/pip.conf": "[global]\nindex-url = https://u:TOOLSEC-PIPX@pypi.corp/simple",
    ".local/share/virtualenvs/app-Ab12Cd/pip.conf": "[global]\nindex-url = https://u:TOOLSEC-PIPENV@x/simple",
    ".cache/composer/auth.json": '{"http-basic": {"repo.corp": {"password": "TOOLSEC-COMPOSER"}}}',
    "go/pkg/mod/github.com/corp/lib@v1.2.0/.env": "API_KEY=TOOLSEC-GOMOD",
}
PROGRAMS = {".pyenv/versions/3.11.9/bin/pytool": "PYENV-TOOL-OK", ".nvm/versions/node/v20.11.0/bin/nodetool":
            "NVM-TOOL-OK", ".local/share/uv/tools/ruff/bin/ruff": "UV-TOOL-OK"}


@pytest.fixture
def home_root():
    """HOME outside /tmp and every writable root (the red team's layout)."""
    base = "/root" if os.access("/root", os.W_OK) else os.path.expanduser("~")
    path = Path(tempfile.mkdtemp(prefix="sbxt-home-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _put(world, files: dict[str, str], mode: int = 0o644) -> None:  # noqa: F811
    for rel, text in files.items():
        p = world.home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text + "\n")
        p.chmod(mode)
    if world.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(world.home)], check=True)


MARKS = [f"TOOLSEC{i}" for i in range(1, 7)] + [t.split("TOOLSEC-")[1].split("@")[0].split('"')[0].split("/")[0].split(
    "<")[0] for t in TOOL_FILES.values()]


def _leaks(world, out: subprocess.CompletedProcess) -> list[str]:  # noqa: F811
    seen = world.model_saw() + out.stdout + out.stderr
    return [m for m in MARKS if (m if m.startswith("TOOLSEC") else f"TOOLSEC-{m}") in seen]


def test_tokens_in_git_config_values_stay_out_of_the_copy(world):  # noqa: F811
    """Shell aliases and any kept key whose value has a secret shape are left out of the copy commands and the
    file tools see; the harmless aliases and settings stay, and `hermes doctor` says what was left out."""
    _put(world, {".gitconfig": GITCONFIG})
    world.scripted.add(*_calls(
        ("terminal", {"command": "cat ~/.gitconfig; git config --global --list; git st | head -1"}),
        ("read_file", {"path": "~/.gitconfig"}),
        ("search_files", {"pattern": "TOOLSEC", "path": "~"}),
    ))
    out = world.hermes("chat", "-q", "look at my git settings")
    assert _leaks(world, out) == [], world.tool_results()
    seen = world.model_saw()
    assert "GITCONFIG-VISIBLE" in seen and "alias.st=status" in seen and "alias.lg=log --oneline --author" in seen
    assert "On branch" in seen, "the harmless alias `git st` must still work"
    doctor = world.hermes("doctor")
    assert "alias.dispatch" in doctor.stdout and "gc.note" in doctor.stdout, doctor.stdout[-3000:]
    assert "sandbox.readable_paths" in doctor.stdout and "TOOLSEC" not in doctor.stdout


def test_settings_files_inside_tool_folders_stay_hidden(world):  # noqa: F811
    """Credential-shaped files inside every readable tool folder: unreadable by commands (cat, grep -r, find)
    and by the file tools, which say how to allow one; the tools' programs keep working."""
    _put(world, TOOL_FILES, 0o600)
    _put(world, {rel: f"#!/bin/sh\necho {word}" for rel, word in PROGRAMS.items()}, 0o755)
    paths = " ".join(f"~/{rel}" for rel in TOOL_FILES)
    world.scripted.add(*_calls(
        ("terminal", {"command": f"cat {paths} 2>&1; grep -rh TOOLSEC ~/.pyenv ~/.nvm ~/.volta ~/.local ~/.sdkman "
                                 "~/.cache ~/go 2>/dev/null | head"}),
        *(("read_file", {"path": f"~/{rel}"}) for rel in list(TOOL_FILES)[:4]),
        ("terminal", {"command": " ; ".join(f"~/{rel}" for rel in PROGRAMS) + "; python3 -c 'import ssl; print("
                                 "\"SSL-OK\")'; node -e 'console.log(\"NODE-OK\")'; npm --version"}),
    ))
    out = world.hermes("chat", "-q", "look at my tools")
    assert _leaks(world, out) == [], world.tool_results()
    seen = world.model_saw()
    for word in (*PROGRAMS.values(), "SSL-OK"):
        assert word in seen, f"{word} missing: {world.tool_results()}"
    if shutil.which("node"):
        assert "NODE-OK" in seen, world.tool_results()
    assert "a tool's settings or credentials" in seen and "sandbox.readable_paths" in seen
    doctor = world.hermes("doctor")
    assert f"tool folders: {len(TOOL_FILES)} settings or credential files" in doctor.stdout, doctor.stdout[-3000:]


def test_readable_paths_grants_one_tool_settings_file(world):  # noqa: F811
    """The way back: sandbox.readable_paths names the file (or ~/.gitconfig: git reads the original); the
    others stay hidden."""
    _put(world, {**TOOL_FILES, ".gitconfig": GITCONFIG}, 0o600)
    world.config(world.home / ".hermes", "  readable_paths: ['~/.pyenv/versions/3.11.9/pip.conf', '~/.gitconfig']\n")
    world.scripted.add(*_calls(("terminal", {"command": "cat ~/.pyenv/versions/3.11.9/pip.conf "
                                                        "~/.nvm/versions/node/v20.11.0/etc/npmrc 2>&1; "
                                                        "git config --global alias.mirror"})))
    out = world.hermes("chat", "-q", "show my pip config")
    assert _leaks(world, out) == ["TOOLSEC3", "PYENV"], world.tool_results()
