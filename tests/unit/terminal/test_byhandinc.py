"""What a run-by-hand file pulls in (terminal/sandbox/byhandinc.py), on real files: the shapes the guard and
hermes's own write check follow; the end-to-end behaviour is tests/integration/test_byhand_includes.py."""

from __future__ import annotations

import os

from hermes_agent.terminal.sandbox.byhandinc import INCLUDES, includer_of, pulled_in


def test_make_includes_resolve_globs_wildcards_and_simple_variables(tmp_path):
    (tmp_path / "mk").mkdir()
    for name in ("a.mk", "b.mk"):
        (tmp_path / "mk" / name).write_text("")
    text = ("MK := mk\ninclude $(MK)/common.mk\n-include local.mk\nsinclude $(wildcard mk/*.mk)\n"
            "include $(SHELL_DEFINED)/x.mk\n\tinclude not-a-directive.mk\n")
    got = pulled_in("make", text, str(tmp_path))
    assert got == [f"{tmp_path}/mk/common.mk", f"{tmp_path}/local.mk", f"{tmp_path}/mk/a.mk", f"{tmp_path}/mk/b.mk"]


def test_just_task_compose_cmake_and_package_scripts(tmp_path):
    d = str(tmp_path)
    assert pulled_in("just", "import 'ci/common.just'\nmod? deploy\n", d) == [
        f"{d}/ci/common.just", f"{d}/deploy.just", f"{d}/deploy/mod.just", f"{d}/deploy/justfile",
        f"{d}/deploy/.justfile"]
    task = "version: '3'\nincludes:\n  docs: ./docs\n  ci:\n    taskfile: ./ci/Tasks.yml\ntasks:\n  x: {}\n"
    assert pulled_in("task", task, d) == [f"{d}/docs/Taskfile.yml", f"{d}/docs/Taskfile.yaml", f"{d}/ci/Tasks.yml"]
    compose = "include:\n  - infra/db.yaml\nservices:\n  web:\n    extends:\n      file: base.yml\n"
    assert sorted(pulled_in("compose", compose, d)) == [f"{d}/base.yml", f"{d}/infra/db.yaml"]
    assert pulled_in("cmake", "include(cmake/flags.cmake)\nadd_subdirectory(src)\ninclude(CTest)\n", d) == [
        f"{d}/cmake/flags.cmake", f"{d}/src/CMakeLists.txt"]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build.js").write_text("")
    pkg = '{"scripts": {"build": "node scripts/build.js --out dist/", "lint": "eslint .", "x": "curl https://a/b"}}'
    got = pulled_in("pkg", pkg, d)
    files = [p for p in got if ".config." not in p and not os.path.basename(p).startswith(".")]
    assert files == [f"{d}/scripts/build.js"]  # only files that exist: not dist/, ., a URL
    # and the configuration files the tools the scripts start load by name, present or not (code they run)
    assert {f"{d}/eslint.config.js", f"{d}/.eslintrc.cjs", f"{d}/curl.config.mjs"} <= set(got)
    assert not any("/node.config." in p for p in got), got  # `node x.js`: the interpreter's file is what runs


def test_an_include_cycle_ends_and_the_includer_is_found(tmp_path):
    (tmp_path / "Makefile").write_text("include a.mk\n")
    (tmp_path / "a.mk").write_text("include b.mk\n")
    (tmp_path / "b.mk").write_text("include a.mk\n" + "".join(f"include gen{i}.mk\n" for i in range(100)))
    assert includer_of(str(tmp_path / "b.mk")) == str(tmp_path / "Makefile")
    assert includer_of(str(tmp_path / "gen99.mk")) == ""  # past INCLUDES files nothing more is followed
    assert includer_of(str(tmp_path / f"gen{INCLUDES - 4}.mk")) == str(tmp_path / "Makefile")
    assert includer_of(str(tmp_path / "unrelated.mk")) == ""
