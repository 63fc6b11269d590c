"""Issue 19: a hard link in the workspace to a private file (`$HERMES_HOME/.env` of this or another profile,
`~/.ssh/id_rsa`), made by the user or an earlier tool, is refused by the file tools with a clear message;
pnpm's node_modules, hard-linked from its store, stays readable. Through the real `hermes chat -q` with the
scripted model, HOME outside /tmp."""

from __future__ import annotations

import json
import os

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import home

__all__ = ["home"]  # fixture


def _read(path: str) -> dict:
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}


def test_hard_links_to_private_files_are_refused_and_package_store_links_are_read(scripted, home):
    proj, hermes = home / "proj", home / ".hermes"
    secrets = {
        "env.txt": (hermes / ".env", "OPENAI_API_KEY=sk-secret-main-0001\n"),
        "work-env.txt": (hermes / "profiles/work/.env", "GITHUB_PAT=ghp_secret_work_0002\n"),
        "key.txt": (home / ".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret-key-0003\n"),
        "creds.txt": (home / ".aws/credentials", "[default]\naws_secret_access_key=secret-aws-0004\n"),
    }
    for name, (target, text) in secrets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(0o600)
        os.link(target, proj / name)
    store = home / ".local/share/pnpm/store/v3/files/ab"
    store.mkdir(parents=True)
    (store / "cdef-index.js").write_text("module.exports = 'pnpm-store-content';\n")
    pkg = proj / "node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad"
    pkg.mkdir(parents=True)
    os.link(store / "cdef-index.js", pkg / "index.js")
    (proj / "twice.txt").write_text("the user's own file, linked twice\n")
    os.link(proj / "twice.txt", proj / "twice-again.txt")
    (proj / "notes.md").write_text("a secret-free note\n")
    model_config(hermes, scripted.url)
    reads = [*secrets, str(pkg.relative_to(proj) / "index.js"), "twice-again.txt"]
    search = {"tool_calls": [{"name": "search_files", "arguments": {"pattern": "secret", "path": "."}}]}
    scripted.add(*(_read(p) for p in reads), search, {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes, cwd=str(proj), timeout=180, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    results = [json.loads(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == len(reads) + 1, results
    found = results.pop()
    assert "error" not in found and "notes.md" in json.dumps(found), found  # the search ran and found the note
    text = json.dumps(results)
    for marker in ("sk-secret-main", "ghp_secret_work", "secret-key-0003", "secret-aws-0004"):
        assert marker not in text, f"a private file was read through a hard link: {marker}"
    for result, (name, (target, _)) in zip(results, secrets.items(), strict=False):
        assert "hard link" in result.get("error", ""), (name, result)
        assert str(target) in result["error"], result
    assert "pnpm-store-content" in json.dumps(results[-2]), results[-2]
    assert "linked twice" in json.dumps(results[-1]), results[-1]
