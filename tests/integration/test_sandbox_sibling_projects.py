"""Issue 19 class 5 below HOME's top level (red-team round 6 a07): a session whose workspace is ~/proj cannot
read the user's *other* projects' secrets — ~/projects/app/.env, the token in that repository's .git/config,
its credentials.json and terraform state — through a command or the file tools, nor a dot-file deeper in a
plain folder, nor a plain file (HOME is default-deny). Controls: a workspace inside a bigger repository (git works, the
repository's README is readable), and `sandbox.readable_paths` granting the other project. Through
`hermes chat -q` and the scripted model, bubblewrap and Landlock, root and uid 65534, HOME in and out of /tmp."""

from __future__ import annotations

import subprocess

from tests.integration.test_sandbox_secrets import UNPRIV, _calls, home_root, mechanism, world  # noqa: F401  (fixtures)

SIBLING = {".env": "STRIPE=SIBLING-ENV-1", "credentials.json": '{"private_key": "SIBLING-GCP-2"}',
           "terraform.tfstate": '{"password": "SIBLING-TF-3"}', "src/main.py": "print('SIBLING-CODE-OK')"}


def _plant(w) -> None:
    app = w.home / "projects/app"
    for rel, text in SIBLING.items():
        (app / rel).parent.mkdir(parents=True, exist_ok=True)
        (app / rel).write_text(text + "\n")
    (w.home / "notes/deeper").mkdir(parents=True)
    (w.home / "notes/todo.txt").write_text("NOTES-OK\n")
    (w.home / "notes/deeper/.env").write_text("NOTESDOT-SECRET-5\n")
    if w.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(w.home)], check=True)
    w.git("init", "-q", cwd=app)
    w.git("remote", "add", "origin", "https://x:SIBLING-TOKEN-4@example.invalid/a/b", cwd=app)
    assert (app / ".git/config").is_file()


READ_ALL = ("cat ~/projects/app/.env ~/projects/app/credentials.json ~/projects/app/terraform.tfstate "
            "~/projects/app/.git/config ~/projects/app/src/main.py ~/notes/deeper/.env ~/notes/todo.txt 2>&1; "
            "grep -rh SIBLING ~/projects 2>&1 | head -5")
LEAKS = ("SIBLING-ENV-1", "SIBLING-GCP-2", "SIBLING-TF-3", "SIBLING-TOKEN-4", "NOTESDOT-SECRET-5", "NOTES-OK")


def test_other_projects_and_deep_dot_files_stay_private(world):  # noqa: F811
    _plant(world)
    world.scripted.add(*_calls(("terminal", {"command": READ_ALL}),
                               ("read_file", {"path": "~/projects/app/.env"}),
                               ("read_file", {"path": "~/projects/app/terraform.tfstate"}),
                               ("search_files", {"pattern": "SIBLING", "path": "~/projects"})))
    out = world.hermes("chat", "-q", "look at my other project")
    seen = world.model_saw() + out.stdout + out.stderr
    assert not [s for s in LEAKS if s in seen], f"another project's secrets reached the model: {world.tool_results()}"
    # plain files elsewhere in HOME are private too since HOME is default-deny (rt7 a17)
    assert "readable only in the workspace" in seen and "sandbox.readable_paths" in seen, "read_file says why and how"
    assert "Traceback" not in out.stderr


def test_a_granted_project_is_readable_and_a_workspace_inside_a_repository_works(world):  # noqa: F811
    _plant(world)
    mono = world.home / "mono"
    (mono / "svc").mkdir(parents=True)
    (mono / "README").write_text("MONO-README-OK\n")
    (mono / "svc/app.py").write_text("x = 1\n")
    world.config(world.home / ".hermes", "  readable_paths: ['~/projects/app']\n")
    if world.user == "user":
        subprocess.run(["chown", "-R", f"{UNPRIV}:{UNPRIV}", str(world.home)], check=True)
    world.git("init", "-q", cwd=mono)
    world.git("add", "-A", cwd=mono)
    world.git("commit", "-qm", "init", cwd=mono)
    world.scripted.add(*_calls(("terminal", {"command": "cat ~/projects/app/src/main.py ../README; git log --oneline "
                                                        "| wc -l; echo y >> app.py && git status --short"})))
    out = world.hermes("chat", "-q", "compare", cwd=mono / "svc")
    seen = world.model_saw()
    assert "SIBLING-CODE-OK" in seen, world.tool_results()
    assert "MONO-README-OK" in seen and "M app.py" in seen, world.tool_results()
    assert "Traceback" not in out.stderr
