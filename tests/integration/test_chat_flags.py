"""Hermes's chat flags through the real CLI: -s, --image, --ignore-user-config, --ignore-rules, --safe-mode,
--checkpoints, -w/--worktree and -c NAME."""

from __future__ import annotations

import base64
import sqlite3
import subprocess

from tests.helpers import model_config, run_hermes, write_config

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def _skill(home, name: str, body: str) -> None:
    d = home / "skills" / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: test skill {name}\n---\n{body}\n")


def _system(scripted, i: int = 0) -> str:
    return scripted.requests[i]["body"]["messages"][0]["content"]


def test_skills_flag_preloads_each_skill_and_refuses_unknown_ones(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    _skill(hermes_home, "alpha-skill", "Always answer in haiku.")
    _skill(hermes_home, "beta-skill", "Cite the file you read.")
    scripted.add({"content": "ok"}, {"content": "ok"})
    out = run_hermes("chat", "-q", "hi", "-s", "alpha-skill", "--skills", "beta-skill", home=hermes_home)
    assert out.returncode == 0, out.stderr
    prompt = _system(scripted)
    assert "Always answer in haiku." in prompt and "Cite the file you read." in prompt
    assert '"alpha-skill" skill preloaded' in prompt and str(hermes_home / "skills" / "beta-skill") in prompt
    both = run_hermes("chat", "-q", "hi", "-s", "alpha-skill,beta-skill", home=hermes_home)
    assert both.returncode == 0 and "Cite the file you read." in _system(scripted, 1)
    bad = run_hermes("chat", "-q", "hi", "-s", "no-such-skill", home=hermes_home)
    assert bad.returncode == 2 and bad.stderr.strip() == "hermes: unknown skill: no-such-skill (see: hermes skills list)"
    assert len(scripted.requests) == 2


def test_image_is_sent_as_an_image_url_part_stored_as_hermes_does_and_resent_on_continue(scripted, hermes_home,
                                                                                          tmp_path):
    model_config(hermes_home, scripted.url)
    (tmp_path / "shot.png").write_bytes(PNG)
    scripted.add({"content": "a red dot"}, {"content": "still a red dot"})
    out = run_hermes("chat", "-q", "what is this?", "--image", str(tmp_path / "shot.png"), home=hermes_home)
    assert out.returncode == 0 and out.stdout.strip() == "a red dot", out.stderr
    content = scripted.requests[0]["body"]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": f"what is this?\n\n[Image attached at: {tmp_path / 'shot.png'}]"}
    assert content[1] == {"type": "image_url",
                          "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}
    with sqlite3.connect(hermes_home / "state.db") as db:
        stored = db.execute("SELECT content FROM messages WHERE role = 'user'").fetchone()[0]
    assert stored.startswith("\x00json:[") and '"image_url"' in stored
    again = run_hermes("chat", "-c", "-q", "and now?", home=hermes_home)
    assert again.returncode == 0, again.stderr
    assert scripted.requests[1]["body"]["messages"][1]["content"] == content
    shown = run_hermes("sessions", "show", out.stderr.split("session ")[1].split()[0], home=hermes_home)
    assert "what is this?" in shown.stdout and "base64" not in shown.stdout
    missing = run_hermes("chat", "-q", "x", "--image", str(tmp_path / "nope.png"), home=hermes_home)
    assert missing.returncode == 2 and "image file not found" in missing.stderr
    (tmp_path / "notes.png").write_text("not an image at all")
    fake = run_hermes("chat", "-q", "x", "--image", str(tmp_path / "notes.png"), home=hermes_home)
    assert fake.returncode == 2 and fake.stderr.strip() == (f"hermes: not an image: {tmp_path / 'notes.png'} (its "
                                                            "bytes are not PNG, JPEG, GIF, WebP or BMP)")
    assert len(scripted.requests) == 2  # nothing sent


def test_ignore_user_config_reads_env_but_not_config_yaml(scripted, hermes_home):
    write_config(hermes_home, "model:\n  provider: custom\n  default: model-from-config\n"
                              "  base_url: http://127.0.0.1:9/v1\n  api_key: x\n")
    (hermes_home / ".env").write_text(f"OPENAI_BASE_URL={scripted.url}\nOPENAI_API_KEY=env-key\n"
                                      "HERMES_INFERENCE_MODEL=model-from-env\n")
    scripted.add({"content": "from env"})
    out = run_hermes("chat", "-q", "hi", "--ignore-user-config", home=hermes_home)
    assert out.returncode == 0 and out.stdout.strip() == "from env", out.stderr
    assert scripted.requests[0]["body"]["model"] == "model-from-env"


def test_ignore_rules_and_safe_mode_leave_out_context_files_and_memory(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    (tmp_path / "AGENTS.md").write_text("Project rule: run make check.\n")
    (hermes_home / "memories").mkdir(exist_ok=True)
    (hermes_home / "memories" / "MEMORY.md").write_text("User prefers tabs.\n")
    scripted.add({"content": "ok"}, {"content": "ok"}, {"content": "ok"})
    assert run_hermes("chat", "-q", "hi", home=hermes_home, cwd=str(tmp_path)).returncode == 0
    assert "make check" in _system(scripted) and "prefers tabs" in _system(scripted)
    out = run_hermes("chat", "-q", "hi", "--ignore-rules", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "make check" not in _system(scripted, 1) and "prefers tabs" not in _system(scripted, 1)
    (hermes_home / ".env").write_text(f"OPENAI_BASE_URL={scripted.url}\nOPENAI_API_KEY=k\nHERMES_INFERENCE_MODEL=env-m\n")
    safe = run_hermes("--safe-mode", "chat", "-q", "hi", home=hermes_home, cwd=str(tmp_path))
    assert safe.returncode == 0, safe.stderr
    assert "make check" not in _system(scripted, 2) and scripted.requests[2]["body"]["model"] == "env-m"


def test_checkpoints_flag_enables_checkpoints_for_one_run(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    (tmp_path / "app.py").write_text("print('v1')\n")
    scripted.add({"tool_calls": [{"name": "patch", "arguments": {"path": "app.py", "old_string": "v1",
                                                                 "new_string": "v2"}}]}, {"content": "patched"})
    out = run_hermes("chat", "-q", "bump", "--checkpoints", home=hermes_home, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    listing = run_hermes("checkpoints", "list", str(tmp_path), home=hermes_home)
    assert listing.returncode == 0 and "patch" in listing.stdout, listing.stdout + listing.stderr


def _git(*args: str, cwd) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_worktree_runs_in_a_new_worktree_and_keeps_it_only_when_changed(scripted, hermes_home, tmp_path):
    model_config(hermes_home, scripted.url)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README").write_text("hello\n")
    _git("add", "README", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init", cwd=repo)
    scripted.add({"content": "looked"},
                 {"tool_calls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}]},
                 {"content": "wrote"})
    out = run_hermes("-w", "chat", "-q", "where am I?", home=hermes_home, cwd=str(repo))
    assert out.returncode == 0, out.stderr
    created = next(ln for ln in out.stderr.splitlines() if ln.startswith("✓ Worktree created: "))
    path = created.split(": ", 1)[1]
    assert path.startswith(str(repo / ".worktrees" / "hermes-")) and f"Working directory: {path}." in _system(scripted)
    assert "isolated git worktree" in _system(scripted) and ".worktrees/" in (repo / ".gitignore").read_text()
    assert "worktree removed (nothing changed)" in out.stderr and "hermes/" not in _git("branch", cwd=repo)
    kept = run_hermes("chat", "-q", "write", "--worktree", home=hermes_home, cwd=str(repo))
    assert kept.returncode == 0 and "worktree kept (it has changes)" in kept.stderr, kept.stderr
    assert "hermes/hermes-" in _git("branch", cwd=repo) and not (repo / "new.txt").exists()
    kept_path = next(ln for ln in kept.stderr.splitlines() if ln.startswith("✓ Worktree created: ")).split(": ", 1)[1]
    assert (repo / kept_path / "new.txt").read_text() == "x\n"
    outside = run_hermes("-w", "chat", "-q", "hi", home=hermes_home, cwd=str(tmp_path))
    assert outside.returncode == 1 and "--worktree needs a git repository" in outside.stderr


def test_continue_by_name_resumes_the_newest_session_with_that_title(scripted, hermes_home):
    model_config(hermes_home, scripted.url)
    scripted.add({"content": "one"}, {"content": "two"}, {"content": "three"})
    assert run_hermes("chat", "-q", "alpha project plan", home=hermes_home).returncode == 0
    assert run_hermes("chat", "-q", "something else", home=hermes_home).returncode == 0
    out = run_hermes("chat", "-c", "alpha project plan", "-q", "go on", home=hermes_home)
    assert out.returncode == 0, out.stderr
    sent = [m["content"] for m in scripted.requests[2]["body"]["messages"][1:]]
    assert sent == ["alpha project plan", "one", "go on"]
    scripted.add({"content": "four"})
    latest = run_hermes("-c", "chat", "-q", "latest?", home=hermes_home)  # a bare -c before the subcommand
    assert latest.returncode == 0, latest.stderr
    assert [m["content"] for m in scripted.requests[3]["body"]["messages"][1:4]] == sent
    bad = run_hermes("chat", "-c", "no such title", "-q", "x", home=hermes_home)
    assert bad.returncode == 1 and "no session found matching 'no such title'" in bad.stderr
