"""search_files with ripgrep, with the pure-Python fallback (rg hidden from PATH), and through the shell
path a non-local backend uses; all must agree."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.settings import Settings
from hermes_agent.terminal.local import LocalBackend
from hermes_agent.tools.context import ToolContext
from hermes_agent.tools.registry import registry

HAS_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAS_RG, reason="ripgrep not installed")


@pytest.fixture
def tree(work):
    (work / "src").mkdir()
    (work / "src/app.py").write_text("import os\n\ndef main():\n    return os.getcwd()  # TODO tidy\n")
    (work / "src/util.py").write_text("# TODO one\n# TODO two\nVALUE = 3\n")
    (work / ".github").mkdir()
    (work / ".github/ci.yml").write_text("run: TODO\n")
    (work / "build.log").write_text("TODO in ignored log\n")
    (work / ".gitignore").write_text("*.log\n/dist/\n")
    for skipped in (".git", "node_modules/pkg", ".venv/lib", "dist"):
        (work / skipped).mkdir(parents=True)
        (work / skipped / "x.py").write_text("TODO hidden\n")
    (work / "img.bin").write_bytes(b"TODO\x00\x01\x02")
    return work


def no_rg_ctx(work, path_dir) -> ToolContext:
    backend = LocalBackend(cwd=str(work))
    return ToolContext(settings=Settings(data=dict(DEFAULT_CONFIG), env={"PATH": str(path_dir)}),
                       backend_factory=lambda _t: backend)


def search(ctx, **args) -> dict:
    return json.loads(registry.dispatch("search_files", args, ctx=ctx))


EXPECTED_TODO = [".github/ci.yml:1:run: TODO", "src/app.py:4:    return os.getcwd()  # TODO tidy",
                 "src/util.py:1:# TODO one", "src/util.py:2:# TODO two"]


@needs_rg
def test_ripgrep_finds_content_and_skips_ignored_and_binary(tree, ctx):
    out = search(ctx, pattern="TODO")
    assert out["engine"] == "rg" and out["total"] == 4
    assert sorted(out["matches"].splitlines()) == EXPECTED_TODO


def test_python_fallback_when_rg_is_not_on_path(tree, tmp_path):
    out = search(no_rg_ctx(tree, tmp_path / "empty-bin"), pattern="TODO")
    assert out["engine"] == "python" and out["total"] == 4
    assert sorted(out["matches"].splitlines()) == EXPECTED_TODO


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_context_glob_modes_and_files_target_agree_across_engines(tree, ctx, engine):
    if engine == "rg" and not HAS_RG:
        pytest.skip("ripgrep not installed")
    extra = {} if engine == "rg" else {"_use_rg": False}
    ctxd = search(ctx, pattern="VALUE", path="src", context=1, **extra)
    assert ctxd["engine"] == engine
    assert ctxd["matches"].splitlines() == ["src/util.py-2-# TODO two", "src/util.py:3:VALUE = 3"]
    only_py = search(ctx, pattern="TODO", file_glob="*.py", output_mode="files_only", **extra)
    assert sorted(only_py["files"]) == ["src/app.py", "src/util.py"]
    counts = search(ctx, pattern="TODO", output_mode="count", **extra)
    assert sorted(counts["counts"]) == [".github/ci.yml: 1", "src/app.py: 1", "src/util.py: 2"]
    assert counts["total_matches"] == 4
    files = search(ctx, pattern="*.py", target="files", **extra)
    assert sorted(files["files"]) == ["src/app.py", "src/util.py"]
    named = search(ctx, pattern="util", target="files", **extra)
    assert named["files"] == ["src/util.py"]


@pytest.mark.parametrize("use_rg", [True, False])
def test_pagination_says_how_to_get_more(work, ctx, use_rg):
    if use_rg and not HAS_RG:
        pytest.skip("ripgrep not installed")
    (work / "many.txt").write_text("".join(f"hit {i}\n" for i in range(1, 121)))
    first = search(ctx, pattern="hit", _use_rg=use_rg)
    assert first["total"] == 120 and first["shown"] == "1-50"
    assert first["note"] == "more results: use offset=50"
    assert first["matches"].splitlines()[0] == "many.txt:1:hit 1"
    last = search(ctx, pattern="hit", offset=100, limit=50, _use_rg=use_rg)
    assert last["shown"] == "101-120" and "note" not in last
    assert last["matches"].splitlines()[-1] == "many.txt:120:hit 120"


def test_invalid_regex_is_searched_as_literal_text(work, ctx):
    (work / "a.py").write_text("call(x\n")
    for use_rg in ([True, False] if HAS_RG else [False]):
        out = search(ctx, pattern="call(", _use_rg=use_rg)
        assert out["matches"] == "a.py:1:call(x" and "not a valid regex" in out["note"]


def test_no_matches_and_bad_paths(work, ctx):
    (work / "a.txt").write_text("abc\n")
    none = search(ctx, pattern="zzz")
    assert none["total"] == 0 and "no matches for 'zzz'" in none["note"] and "matches" not in none
    missing = search(ctx, pattern="x", path="nope")
    assert missing["error"].startswith("File not found")
    assert search(ctx, pattern="")["error"] == "pattern is required"


def test_search_in_a_single_file(work, ctx):
    (work / "one.txt").write_text("a\nb\na\n")
    out = search(ctx, pattern="a", path="one.txt")
    assert out["matches"].splitlines() == ["one.txt:1:a", "one.txt:3:a"]


class ShellOnlyBackend(LocalBackend):
    """The real local shell driven through the non-local code path (as docker/ssh backends are)."""

    kind = "shell-test"


def _bin_without_rg(tmp_path):
    bindir = tmp_path / "bin-no-rg"
    bindir.mkdir()
    for d in ("/usr/local/bin", "/usr/bin", "/bin"):
        if os.path.isdir(d):
            for name in os.listdir(d):
                if name != "rg" and not (bindir / name).exists():
                    (bindir / name).symlink_to(os.path.join(d, name))
    return bindir


@pytest.mark.parametrize("with_rg", [True, False])
def test_non_local_backends_search_through_their_shell(tree, tmp_path, with_rg):
    if with_rg and not HAS_RG:
        pytest.skip("ripgrep not installed")
    env = dict(os.environ)
    if not with_rg:
        env["PATH"] = str(_bin_without_rg(tmp_path))
    backend = ShellOnlyBackend(cwd=str(tree), env=env)
    ctx = ToolContext(settings=Settings(data=dict(DEFAULT_CONFIG)), backend_factory=lambda _t: backend)
    out = search(ctx, pattern="TODO", path="src", context=1)
    assert out["engine"] == ("rg" if with_rg else "grep")
    assert sorted(out["matches"].splitlines()) == [  # grep -r walks in directory order
        "--", "src/app.py-3-def main():", "src/app.py:4:    return os.getcwd()  # TODO tidy",
        "src/util.py-3-VALUE = 3", "src/util.py:1:# TODO one", "src/util.py:2:# TODO two"]
    files = search(ctx, pattern="*.py", target="files", path="src")
    assert sorted(files["files"]) == ["src/app.py", "src/util.py"]
