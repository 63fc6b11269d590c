"""`hermes auth`: Hermes's credential pools in auth.json, written so the released Hermes reads them, and
used for a provider whose key variable is unset."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.helpers import other_hermes_skip, run_hermes, write_config


def _hermes_ref() -> str | None:
    exe = os.environ.get("HERMES_REF_BIN") or "/work/hermes-ref/bin/hermes"
    if "/" not in exe:
        return shutil.which(exe)
    return exe if Path(exe).is_file() and os.access(exe, os.X_OK) else None


def test_auth_add_list_remove_keep_hermes_format_and_never_echo_the_key(hermes_home):
    out = run_hermes("auth", "add", "openrouter", home=hermes_home, input="sk-or-secret-1\n")
    assert out.returncode == 0 and out.stdout.strip() == 'Added openrouter credential #1: "api-key-1"', out.stderr
    second = run_hermes("auth", "add", "openrouter", "--label", "work", home=hermes_home, input="sk-or-secret-2\n")
    assert second.returncode == 0 and "sk-or-secret" not in second.stdout + second.stderr
    path = hermes_home / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and (hermes_home / "auth.lock").exists()
    store = json.loads(path.read_text())
    assert store["version"] == 1 and store["providers"] == {}
    rows = store["credential_pool"]["openrouter"]
    assert [(r["label"], r["auth_type"], r["source"], r["priority"], r["access_token"]) for r in rows] == [
        ("api-key-1", "api_key", "manual", 0, "sk-or-secret-1"), ("work", "api_key", "manual", 1, "sk-or-secret-2")]
    assert rows[0]["base_url"] == "https://openrouter.ai/api/v1" and len(rows[0]["id"]) == 6
    listing = run_hermes("auth", "list", home=hermes_home)
    assert listing.returncode == 0 and "sk-or" not in listing.stdout
    lines = listing.stdout.splitlines()
    assert lines[0] == "openrouter (2 credentials):"
    assert lines[1].split() == ["#1", "api-key-1", "api_key", "manual", "←"] and lines[2].split() == [
        "#2", "work", "api_key", "manual"]
    status = run_hermes("auth", "status", "openrouter", home=hermes_home)
    assert status.stdout.splitlines()[0] == "openrouter: logged in"
    gone = run_hermes("auth", "remove", "openrouter", "work", home=hermes_home)
    assert gone.returncode == 0 and gone.stdout.strip() == "Removed openrouter credential #2 (work)"
    assert [r["label"] for r in json.loads(path.read_text())["credential_pool"]["openrouter"]] == ["api-key-1"]
    bad = run_hermes("auth", "remove", "openrouter", "7", home=hermes_home)
    assert bad.returncode == 1 and "no credential #7" in bad.stderr
    unknown = run_hermes("auth", "add", "nosuch", home=hermes_home, input="k\n")
    assert unknown.returncode == 2 and "unknown provider: nosuch" in unknown.stderr
    empty = run_hermes("auth", "add", "openai", home=hermes_home, input="\n")
    assert empty.returncode == 2 and "no API key provided" in empty.stderr
    assert run_hermes("auth", "status", "openai", home=hermes_home).stdout.strip() == "openai: logged out"


def test_a_pool_key_is_used_when_the_providers_env_key_is_absent(scripted, hermes_home):
    write_config(hermes_home, f"model:\n  provider: openrouter\n  default: some/model\n  base_url: {scripted.url}\n")
    refused = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert refused.returncode == 2 and "needs an API key" in refused.stderr
    run_hermes("auth", "add", "openrouter", home=hermes_home, input="sk-pool-key\n")
    scripted.add({"content": "pooled"}, {"content": "from env"})
    out = run_hermes("chat", "-q", "hi", home=hermes_home)
    assert out.returncode == 0 and out.stdout.strip() == "pooled", out.stderr
    assert scripted.requests[0]["authorization"] == "Bearer sk-pool-key"
    env = run_hermes("chat", "-q", "hi", home=hermes_home, env={"OPENROUTER_API_KEY": "sk-env-key"})
    assert env.returncode == 0 and scripted.requests[1]["authorization"] == "Bearer sk-env-key"


def test_released_hermes_lists_an_auth_json_we_wrote(hermes_home, tmp_path):
    exe = _hermes_ref()
    if exe is None:
        pytest.skip("the released Hermes is not installed (set HERMES_REF_BIN)")
    if why := other_hermes_skip(exe):
        pytest.skip(f"the released Hermes: {why}")
    assert run_hermes("auth", "add", "openrouter", "--label", "ours", home=hermes_home,
                      input="sk-or-ours\n").returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), HOME=str(tmp_path), NO_COLOR="1")
    out = subprocess.run([exe, "auth", "list"], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "openrouter (1 credentials):" in lines, out.stdout
    row = lines[lines.index("openrouter (1 credentials):") + 1].split()
    assert row[:4] == ["#1", "ours", "api_key", "manual"]
    ours = run_hermes("auth", "list", "openrouter", home=hermes_home)
    assert ours.stdout.splitlines()[1].split()[:4] == ["#1", "ours", "api_key", "manual"]
