"""Issue 19, rt14 b28: the copies of secrets hermes itself makes. `hermes backup` zips the Hermes home (.env,
auth.json, state.db); by default it now lands in <HERMES_HOME>/backups/, hidden from confined work like the keys
themselves, not in HOME (Hermes 0.19's ~/hermes-backup-<ts>.zip). A zip Hermes 0.19 left in HOME is hidden by what
it is when HOME is the workspace. Through the real CLI, HOME outside /tmp, the scripted model."""

from __future__ import annotations

import json
import zipfile

from tests.helpers import model_config, run_hermes

KEY = "sk-backup-secret-4711"


def test_backups_stay_where_confined_work_cannot_read_them(scripted, outside_dir):
    home = outside_dir / "home"
    hh = home / ".hermes"
    hh.mkdir(parents=True)
    model_config(hh, scripted.url, "")
    (hh / ".env").write_text(f"OPENROUTER_API_KEY={KEY}\n")
    env = {"HOME": str(home)}
    made = run_hermes("backup", home=hh, env=env, cwd=str(home))
    assert made.returncode == 0, made.stderr
    backups = list((hh / "backups").glob("hermes-backup-*.zip"))
    assert len(backups) == 1 and str(backups[0]) in made.stdout, made.stdout
    assert not list(home.glob("hermes-backup-*.zip")) and "holds your keys" not in made.stdout
    with zipfile.ZipFile(backups[0]) as zf:
        assert KEY in zf.read(".env").decode()  # a real backup: it holds the keys
    old = home / "hermes-backup-2026-01-02-030405.zip"  # what Hermes 0.19 left in HOME
    with zipfile.ZipFile(old, "w") as zf:
        zf.writestr(".env", f"OPENROUTER_API_KEY={KEY}\n")
    with zipfile.ZipFile(home / "photos.zip", "w") as zf:  # control: the user's own zip in HOME
        zf.writestr("a.txt", "holiday-pictures\n")
    read = ("ls ~; for z in ~/hermes-backup-*.zip ~/.hermes/backups/*.zip ~/photos.zip; do python3 -c \"import "
            "zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); [print(n, z.read(n)) for n in z.namelist()]\" \"$z\"; done")
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": read}}]},
                 {"tool_calls": [{"name": "read_file", "arguments": {"path": str(old)}}]},
                 {"tool_calls": [{"name": "search_files", "arguments": {"pattern": "hermes-backup", "target": "files",
                                                                         "path": str(home)}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "look at my backups", "--yolo", home=hh, env=env, cwd=str(home), timeout=180)
    assert out.returncode == 0, out.stderr
    sent = json.dumps([r["body"] for r in scripted.requests])
    assert KEY not in sent and KEY not in out.stdout
    assert "holiday-pictures" in sent  # ordinary files in HOME are still the model's to read
