"""A home written by the released Hermes (0.19) — config, .env, memories, a skill and a plugin — used by
ours, then by Hermes again: the plugin loads the same, the allowlist is honoured, memory is shared and
locked with the same lock files, and Hermes's files are unchanged except where the model was asked to
write (memory). Skipped only when the released Hermes is not installed (.ci/install-hermes-ref.sh)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import other_hermes_skip, run_hermes

HERMES_REF_BIN = Path(os.environ.get("HERMES_REF_BIN", "/work/hermes-ref/bin/hermes"))

pytestmark = pytest.mark.skipif(bool(other_hermes_skip(HERMES_REF_BIN)), reason=f"the released Hermes: "
                                f"{other_hermes_skip(HERMES_REF_BIN)}")

PLUGIN = '''
import json
from tools.registry import tool_error


def _greet(args, **kw):
    if not args.get("name"):
        return tool_error("name is required")
    return json.dumps({"greeting": "hello " + args["name"]})


def register(ctx):
    ctx.register_tool(name="greet", toolset="greeter", handler=_greet, emoji="👋",
                      schema={"name": "greet", "description": "Greet someone", "parameters": {
                          "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
'''

SKILL = "---\nname: deploy-notes\ndescription: How we deploy.\n---\n# Deploy\n1. make release\n"

BUILD = '''
import sys
from hermes_cli.config import load_config, save_config, save_env_value
from tools.memory_tool import MemoryStore
from tools.skill_manager_tool import skill_manage
url = sys.argv[1]
config = load_config()
config["model"] = {"default": "scripted-model", "provider": "custom", "base_url": url}
config["command_allowlist"] = ["recursive delete"]
config["terminal"]["auto_source_bashrc"] = False
config["sandbox"] = {"shared_tmp": True}  # ours: the victim below is in the host's /tmp (default: private)
save_config(config)
save_env_value("OPENAI_API_KEY", "test-key")
store = MemoryStore()
store.load_from_disk()
assert store.add("user", "Name: Ada")["success"]
assert store.add("memory", "Repo uses uv")["success"]
print(skill_manage(action="create", name="deploy-notes", content=sys.argv[2]))
'''

READ_MEMORY = '''
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
print(json.dumps({"memory": store.memory_entries, "user": store.user_entries}))
'''


def _hermes_python(home: Path, code: str, *args: str) -> str:
    env = {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    out = subprocess.run([str(HERMES_REF_BIN.with_name("python")), "-c", code, *args], capture_output=True,
                         text=True, env=env, timeout=120, cwd=str(home))
    assert out.returncode == 0, out.stderr
    return out.stdout


def _hermes_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    return subprocess.run([str(HERMES_REF_BIN), *args], capture_output=True, text=True, env=env, timeout=120,
                          input="n\n")


def _files(home: Path) -> dict[str, bytes]:
    """Hermes's files (logs and the session database, shared separately, left out)."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and not str(p.relative_to(home)).startswith(("logs/", "state.db"))
            and "__pycache__" not in p.parts}


def test_a_hermes_home_works_unchanged_both_ways(scripted, hermes_home, tmp_path):
    _hermes_python(hermes_home, BUILD, scripted.url, SKILL)
    plugin = hermes_home / "plugins" / "greeter"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: greeter\nversion: 1.0.0\ndescription: says hi\n")
    (plugin / "__init__.py").write_text(PLUGIN)
    assert _hermes_cli(hermes_home, "plugins", "enable", "greeter").returncode == 0
    (hermes_home / "plugins" / "unlisted").mkdir()
    (hermes_home / "plugins" / "unlisted" / "plugin.yaml").write_text("name: unlisted\n")
    (hermes_home / "plugins" / "unlisted" / "__init__.py").write_text("def register(ctx):\n    raise SystemExit(9)\n")
    before = _files(hermes_home)
    assert b"recursive delete" in before["config.yaml"] and b"- greeter" in before["config.yaml"]

    listing = run_hermes("plugins", "list", home=hermes_home)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert "enabled  tools: greet" in listing.stdout and "Skipped (not in plugins.enabled): unlisted" in listing.stdout

    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    scripted.add({"tool_calls": [
        {"name": "greet", "arguments": {"name": "Ada"}},
        {"name": "terminal", "arguments": {"command": f"rm -r {victim}"}},
        {"name": "memory", "arguments": {"target": "memory", "operations": [{"action": "add", "content": "Deploys on Fridays"}]}},
        {"name": "skill_view", "arguments": {"name": "deploy-notes"}}]},
        {"content": "all done"})
    # cwd outside any repository: a dirty checkout the suite runs from would be kept in checkpoints/ first
    out = run_hermes("chat", "-q", "greet Ada, clean up, remember the deploy day", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    offered = [t["function"]["name"] for t in scripted.requests[0]["body"]["tools"]]
    assert "greet" in offered  # a plugin's tools reach the model by default, as in Hermes
    system = scripted.requests[0]["body"]["messages"][0]["content"]
    assert "Name: Ada" in system and "Repo uses uv" in system  # Hermes's memories in our prompt
    greet, rm, memory, skill = [json.loads(m["content"]) for m in scripted.requests[1]["body"]["messages"]
                                if m["role"] == "tool"]
    assert greet == {"greeting": "hello Ada"}
    assert rm["exit_code"] == 0 and not victim.exists()  # 'recursive delete' in Hermes's allowlist
    assert memory["success"] is True
    assert "make release" in skill["content"]

    after = _files(hermes_home)
    changed = {k for k in before if before[k] != after.get(k)}
    assert changed == {"memories/MEMORY.md"}  # the one write the model was asked for
    added = {k for k in after if k not in before}
    assert "skills/.bundled_manifest" not in added  # Hermes's manifest is Hermes's alone
    assert not [k for k in added if k.endswith("SKILL.md")]  # ours are read where they are packaged
    # .parsed-config.json: our 0600 parse cache of config.yaml (config/loader.py), hidden from the sandbox like it
    assert {k.split("/")[0] for k in added} <= {"skills", "sessions", "cache", "memories", ".parsed-config.json"}

    entries = json.loads(_hermes_python(hermes_home, READ_MEMORY))
    assert entries == {"memory": ["Repo uses uv", "Deploys on Fridays"], "user": ["Name: Ada"]}
    again = _hermes_cli(hermes_home, "plugins", "list", "--plain")
    assert again.returncode == 0 and "greeter" in again.stdout
