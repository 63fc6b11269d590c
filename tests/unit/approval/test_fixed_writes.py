"""rt14b c02, the cases only the workspace tells: a redirect (or shred) over an EXISTING project file holding
text, of content the command does not write itself and that cannot be the file's, is asked through the gate's
workspace reader (approval/scriptfiles.file_findings): another file's lines the target does not hold, a decoder's
output, a committed blob of another path, jq output over a source file, shred that keeps the file. The
ordinary cousins stay: a new file, a log, a rerun of the same filter, the command's own text (`cat > f <<EOF`,
`echo x > f`), a program's output (`python3 gen.py > f`), shred -u (a removal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent.approval.scriptfiles import file_findings

FILES = {"src/app.py": "x = 1\n# uncommitted work\n", "README.md": "# proj\nImportant text.\n",
         "names.txt": "b\na\nc\n", "sorted.txt": "a\nb\nc\n", "blob.b64": "aGkK\n", "data.json": "{\"a\": 1}\n"}
ASKED = ["cat README.md > src/app.py", "jq -n '{}' > src/app.py", "shred -n1 src/app.py", "sort names.txt > src/app.py",
         "git cat-file blob HEAD:README.md > src/app.py", "base64 -d blob.b64 > src/app.py", "tac README.md >| src/app.py",
         "grep -v zzz README.md > src/app.py", "cut -d ' ' -f1 README.md > src/app.py", "yq -n '.a = 1' > README.md",
         "git show HEAD:README.md > src/app.py", "shred --iterations=1 README.md"]
STAYS = ["sort names.txt > sorted.txt", "cat README.md > new.txt", "cat > src/app.py <<'EOF'\nx = 2\nEOF",
         "echo 'x = 3' > src/app.py", "make > build.log", "python3 gen.py > src/app.py", "shred -u src/app.py",
         "jq -n '{}' > data.json", "base64 README.md > readme.b64", "grep -v zz names.txt > sorted.txt",
         "cat README.md >> src/app.py", "cat src/app.py README.md > both.txt"]


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize("command", ASKED)
def test_fixed_content_over_an_existing_file_is_asked(ws: Path, command: str) -> None:
    keys = [f.key for f in file_findings(command, str(ws))]
    assert "clobber_file" in keys, (command, keys)


@pytest.mark.parametrize("command", STAYS)
def test_ordinary_writes_are_not_asked(ws: Path, command: str) -> None:
    assert not [f for f in file_findings(command, str(ws)) if f.key == "clobber_file"], command
