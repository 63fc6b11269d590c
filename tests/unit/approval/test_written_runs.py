"""rt12 a29 (issue 19): a command that runs a file is judged by that file's text, however it runs it, whether the
same command text wrote the file (`printf ... > M9; make -f M9 clean`) or an earlier call of the session did (the
gate reads it from the workspace). One mechanism: workfiles.runs names the file and what part of it runs (recipes
of make/just/task, package.json scripts, scripts and modules), flows feeds the text written into it to the rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent.approval.rules import scan_command
from hermes_agent.approval.rules.recipes import just_recipes, task_commands
from hermes_agent.approval.scriptfiles import file_findings

WRITTEN_THEN_RUN = [
    "printf 'clean:\\n\\t$(RM) -r d9\\n' > M9; make -s -f M9 clean",  # the a29 escape
    "printf 'clean:\\n\\t$(RM) -r d9\\n' > M9 && make --file=M9 clean",
    "printf 'clean:\\n\\t$(RM) -r d9\\n' > sub/M9; make -s -C sub -f M9 clean",
    "cat > M <<'EOF'\nclean:\n\trm -rf d9\nEOF\nmake -f M clean",
    "printf 'all: wipe\\nwipe:\\n\\tgit push -f origin main\\n' > build.mk; make -f build.mk",
    "printf 'clean:\\n    rm -rf d9\\n' > J; just -f J clean",
    "printf 'clean:\\n    rm -rf d9\\n' > J; just --justfile=J clean",
    "printf 'version: 3\\ntasks:\\n  clean:\\n    cmds:\\n      - rm -rf d9\\n' > T.yml; task -t T.yml clean",
    "printf 'tasks:\\n  default:\\n    deps: [wipe]\\n  wipe:\\n    cmds:\\n      - cmd: rm -rf ~/p\\n' > Taskfile.yml; task",
    "printf 'rm -rf d7\\n' | tee x.sh >/dev/null; sh x.sh",
    "printf 'import shutil\\nshutil.rmtree(\"d0\")\\n' > tool.py; python3 -m tool",
    "echo '{\"scripts\":{\"go\":\"rm -rf d1\"}}' > package.json; npm run go",
    # the file's text built in pieces, carried, edited, or fed by stdin
    "echo 'clean:' > M9; echo '\trm -rf d9' >> M9; make -f M9 clean",
    "printf 'clean:\\n\\t' > M9; printf 'rm -rf d9\\n' >> M9; make -f M9 clean",
    "printf 'rm -rf d7\\n' > x.sh; mv x.sh y.sh; sh y.sh",
    "printf 'rm -rf d7\\n' > x.sh; cp x.sh y; bash y",
    "printf 'rm -rf d7\\n' > x.sh; sh < x.sh",
    "printf 'rm -rf d7\\n' > x.sh; cat x.sh | bash",
    "sed -i 's/echo hi/rm -rf d9/' Makefile; make",
    "sed -i 's|pytest -q|git push -f origin main|' justfile && just test",
    "sed -i 's/\"build\": \"tsc\"/\"build\": \"rm -rf d1\"/' package.json && npm run build",
    # written by interpreter code: its strings are what it puts there
    "python3 -c \"open('M9','w').write('clean:\\n\\trm -rf d9\\n')\"; make -s -f M9 clean",
    "node -e \"require('fs').writeFileSync('x.sh','rm -rf d7')\"; sh x.sh",
    "perl -e 'open(F,\">x.sh\"); print F \"rm -rf d7\\n\"'; sh x.sh",
]


@pytest.mark.parametrize("command", WRITTEN_THEN_RUN)
def test_a_file_written_and_run_in_one_command_is_judged_by_its_text(command: str) -> None:
    scan = scan_command(command)
    assert scan.findings, command
    assert scan.dangerous.key in ("recursive_delete", "force_push", "git_force_push", "delete_home"), scan.keys


@pytest.mark.parametrize("command", [
    "printf 'hello:\\n\\techo hi\\n' > M; make -s -f M hello",
    "printf 'clean:\\n\\trm -rf build\\n' > M; make -f M clean",  # build output: not flagged, as inline
    "printf 'test:\\n    pytest -q\\n' > J; just -f J test",
    "printf 'tasks:\\n  lint:\\n    cmds:\\n      - ruff check .\\n' > T.yml; task -t T.yml lint",
    "printf 'clean:\\n\\trm -rf ~/x\\n' > M; make -f M --dry-run clean || true; cat M",
    "printf 'clean:\\n\\trm -rf ~/x\\n' > M; make -sn -f M clean",
    "printf 'clean:\\n    rm -rf ~/x\\n' > J; just -f J --list",
    "echo 'hello:' > M; echo '\techo hi' >> M; make -f M hello",
    "sed -i 's/-O2/-O3/' Makefile && make",
    "sed -i 's/\"version\": \"1.0.0\"/\"version\": \"1.0.1\"/' package.json && npm run build",
    "sed -i 's|http://old.example|https://new.example|g' x.sh; sh x.sh",
    "sed -i 's/version = .*/version = \"1.2\"/' setup.py && python setup.py sdist",
    "printf 'ls -la\\n' > x.sh; sh < x.sh; cat x.sh | sh",
    "python3 -c \"open('x.sh','w').write('echo ok')\"; sh x.sh",
    "python3 -c \"open('notes.txt','w').write('never rm -rf /')\"; cat notes.txt",
])
def test_ordinary_written_recipes_pass(command: str) -> None:
    assert scan_command(command).keys == (), command


def test_only_the_recipes_asked_for_run() -> None:
    text = "set shell := ['bash', '-c']\ndir := '~/p'\n\n# build it\nbuild: lint\n    cargo build\n\nlint:\n" \
           "    cargo clippy\n\nwipe:\n    rm -rf {{dir}}\n"
    assert just_recipes(text, ("build",)) == ["cargo build", "cargo clippy"]
    assert just_recipes(text, ()) == ["cargo build", "cargo clippy"]  # the first recipe is the default
    assert just_recipes(text, ("wipe",)) == ["rm -rf ~/p"]
    assert "rm -rf ~/p" in just_recipes(text, ("nosuch",))  # unknown recipe: every one is read
    yml = "version: '3'\ntasks:\n  default:\n    cmds:\n      - task: build\n  build:\n    deps: [gen]\n" \
          "    cmds:\n      - go build ./...\n      - cmd: echo done\n  gen:\n    cmds:\n      - |\n" \
          "        go generate ./...\n        rm -rf ~/src\n  wipe: rm -rf /srv\n"
    assert task_commands(yml, ("build",)) == ["go build ./...", "echo done", "go generate ./...", "rm -rf ~/src"]
    assert task_commands(yml, ()) == ["go build ./...", "echo done", "go generate ./...", "rm -rf ~/src"]
    assert task_commands(yml, ("wipe",)) == ["rm -rf /srv"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "justfile").write_text("default: test\ntest:\n    pytest -q\nwipe:\n    rm -rf ~/projects\n")
    (tmp_path / "Taskfile.yml").write_text("version: '3'\ntasks:\n  lint:\n    cmds:\n      - ruff check .\n"
                                           "  ship:\n    cmds:\n      - git push --force origin main\n")
    (tmp_path / "M9").write_text("clean:\n\t$(RM) -r d9\n")
    return tmp_path


@pytest.mark.parametrize(("command", "named"), [
    ("just wipe", "justfile"), ("task ship", "Taskfile.yml"), ("task -d . ship", "Taskfile.yml"),
    ("make -s -f M9 clean", "M9"),
])
def test_files_written_earlier_in_the_session_are_read_where_they_lie(work: Path, command: str, named: str) -> None:
    assert scan_command(command).findings == ()
    found = file_findings(command, str(work))
    assert found and all(named in f.description for f in found), found


@pytest.mark.parametrize("command", ["just", "just test", "task lint", "just --list", "task --list-all",
                                     "just --show wipe", "task --summary ship"])
def test_recipes_not_run_are_not_judged(work: Path, command: str) -> None:
    assert file_findings(command, str(work)) == ()


@pytest.mark.parametrize(("command", "named"), [("cp M9 build.mk; make -f build.mk clean", "M9"),
                                                ("mv justfile J && just -f J wipe", "justfile")])
def test_a_copy_runs_what_its_source_holds(work: Path, command: str, named: str) -> None:
    found = file_findings(command, str(work))
    assert found and all(f"(in {named})" in f.description for f in found), found
    (work / "Makefile.in").write_text("all:\n\techo hi\n")
    assert file_findings("cp Makefile.in Makefile && make", str(work)) == ()
