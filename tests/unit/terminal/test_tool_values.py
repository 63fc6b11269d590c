"""Tool configs judged by value (toolvalues.py, red-team round 11 a38) on the shapes the tools really read,
and the names the user's Pythons import (pyshadow.py, a21) found from real files: an interpreter link on
PATH, a pipx-style console script whose shebang leads to its venv."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hermes_agent.terminal.sandbox import guardtools, pyshadow


def _ws(path: str) -> bool:
    return path == "/ws" or path.startswith("/ws/")


@pytest.mark.parametrize(("rel", "data", "key"), [
    ("rust-toolchain.toml", b'[toolchain]\npath = "/ws/tc"\n', "toolchain.path"),
    ("rust-toolchain.toml", b'[toolchain]\npath = "tc"\n', "toolchain.path"),
    ("rust-toolchain", b"./tc\n", "toolchain.channel"),
    (".mvn/jvm.config", b"-Xmx1g -javaagent:tc/agent.jar\n", "-javaagent"),
    (".mvn/jvm.config", b"-XX:OnError='sh x'\n", "-xx:onerror"),
    (".mvn/maven.config", b"-Dmaven.repo.local=/ws/repo\n", "-dmaven.repo.local"),
    (".mvn/extensions.xml", b"<extensions><extension><groupId>g</groupId><artifactId>a</artifactId>"
                            b"<version>1</version></extension></extensions>", "extension.g:a"),
    (".sbtopts", b"-J-agentpath:/ws/a.so\n", "-j-agentpath"),
    ("gradle.properties", b"org.gradle.jvmargs=-Xmx2g -javaagent\\:x.jar\n", "org.gradle.jvmargs"),
    ("gradle.properties", b"org.gradle.java.home=./jdk\n", "org.gradle.java.home"),
    ("gradle/wrapper/gradle-wrapper.properties", b"distributionUrl=file\\:///ws/g.zip\n", "distributionurl"),
    (".python-version", b"/ws/tc/bin/python\n", "version.0"),
    (".nvmrc", b"~/planted\n", "version.0"),
    ("bunfig.toml", b'preload = ["./x.ts"]\n', "preload"),
    (".bazelrc", b"startup --host_jvm_args=-javaagent:x.jar\n", "--host_jvm_args"),
    (".bazelrc", b"build --run_under=./x\n", "--run_under"),
    ("global.json", b'{"sdk": {"paths": [".dotnet", "$host$"]}}', "sdk.paths"),
])
def test_a_value_naming_a_planted_program_is_dangerous(rel, data, key):
    why = guardtools.risky(rel, None, data, _ws, "/ws")
    assert key in why, why


@pytest.mark.parametrize(("rel", "data"), [
    ("rust-toolchain.toml", b'[toolchain]\nchannel = "1.79"\ncomponents = ["rustfmt"]\n'),
    ("rust-toolchain", b"nightly-2024-05-01\n"),
    (".mvn/jvm.config", b"-Xmx2g -Dfile.encoding=UTF-8 -XX:+UseG1GC\n"),
    (".mvn/maven.config", b"-T 4 --batch-mode -rf :module\n"),
    (".jvmopts", b"-Xss4m\n-Dsbt.color=true\n"),
    ("gradle.properties", b"org.gradle.jvmargs=-Xmx2g\norg.gradle.java.home=/usr/lib/jvm/java-17\n"),
    ("gradle/wrapper/gradle-wrapper.properties",
     b"distributionPath=wrapper/dists\ndistributionUrl=https\\://services.gradle.org/distributions/g-8.10-bin.zip\n"),
    (".python-version", b"3.12\npypy3.10\n"), (".nvmrc", b"lts/iron\n"), (".node-version", b"20.11.0\n"),
    ("bunfig.toml", b"smol = true\n"),
    (".bazelrc", b"build --jobs=4 --config=ci\ntest --test_output=errors\n"),
    ("global.json", b'{"sdk": {"version": "8.0.100", "rollForward": "latestFeature"}}'),
])
def test_ordinary_values_stay(rel, data):
    assert guardtools.risky(rel, None, data, _ws, "/ws") == ""


def test_an_added_flag_is_judged_an_unchanged_one_is_not():
    old = b"-javaagent:/opt/corp/agent.jar\n"  # the user's own, outside the workspace: allowed before
    assert guardtools.risky(".mvn/jvm.config", old, old + b"-Xmx2g\n", _ws) == ""
    assert "does not parse" in guardtools.risky(".mvn/extensions.xml", None, b"<!DOCTYPE x [<!ENTITY a 'b'>]><x/>", _ws)


def test_the_users_pythons_are_found_by_path_and_shebang(tmp_path: Path, monkeypatch):
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for prefix, name in ((tmp_path / "tools", "zzuserlib"), (tmp_path / "pipx/venvs/t", "zzpipxlib")):
        (prefix / "bin").mkdir(parents=True)
        (prefix / "bin/python").symlink_to(os.path.realpath(sys.executable))
        (prefix / "lib" / ver / "site-packages" / name).mkdir(parents=True)
    local = tmp_path / "local"
    local.mkdir()
    (local / "pytest").write_text(f"#!{tmp_path}/pipx/venvs/t/bin/python\n")
    os.mkfifo(local / "pip")  # a FIFO named like a tool: never opened for reading (would block)
    monkeypatch.setenv("PATH", f"{tmp_path}/tools/bin:{local}")
    monkeypatch.setenv("HOME", str(tmp_path))
    names = pyshadow.importable()
    assert {"zzuserlib", "zzpipxlib", "json", "requests", "_pytest"} <= names
    monkeypatch.setenv("PATH", str(local))
    assert "zzuserlib" not in pyshadow.importable()
