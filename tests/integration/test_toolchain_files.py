"""Tool configs the user's tools read at start, judged by value (red-team round 11 a38, issue 19): a
`rust-toolchain.toml` whose `path` is a toolchain the command built in the workspace (the user's real `cargo`
would run the planted binary), Maven's `.mvn/jvm.config` / `maven.config` / `extensions.xml`, sbt's
`.jvmopts` / `.sbtopts`, `gradle.properties` jvmargs and java.home, the wrappers' distribution URL, version
files naming a path, `bunfig.toml` preload: put back, one line each. Ordinary edits (a channel `1.79`,
`-Xmx2g`, an `.nvmrc` of `lts/iron`, a Gradle upgrade) stay. Through the real `hermes chat -q`, bwrap and
Landlock, HOME outside /tmp."""

from __future__ import annotations

import os
import subprocess

from tests.helpers import model_config, run_hermes
from tests.integration.test_sandbox_run_later_guard import _chat, _put_back, _terminal, home

__all__ = ["home"]  # fixture

PLANT = r"""
mkdir -p tc/bin .mvn/wrapper gradle/wrapper && printf '#!/bin/sh\necho PLANTED-CARGO "$@"\n' > tc/bin/cargo
cp tc/bin/cargo tc/bin/rustc && chmod +x tc/bin/*
printf '[toolchain]\npath = "%s/tc"\n' "$PWD" > rust-toolchain.toml
echo '-Xmx1g -javaagent:tc/agent.jar' > .mvn/jvm.config
echo '-Dmaven.ext.class.path=tc/ext.jar' > .mvn/maven.config
printf '<extensions><extension><groupId>evil</groupId><artifactId>x</artifactId><version>1</version></extension></extensions>\n' > .mvn/extensions.xml
echo "distributionUrl=file://$PWD/tc/maven.zip" > .mvn/wrapper/maven-wrapper.properties
echo '-XX:OnError=sh tc/x' > .jvmopts; echo '-J-javaagent:tc/agent.jar' > .sbtopts
printf 'org.gradle.jvmargs=-Xmx2g -agentpath:tc/a.so\n' > gradle.properties
printf 'distributionUrl=file\\://%s/tc/gradle.zip\n' "$PWD" > gradle/wrapper/gradle-wrapper.properties
echo "$PWD/tc/bin/python" > .python-version; echo ./tc > .nvmrc; echo "$PWD/tc" > .node-version
printf 'preload = ["./tc/x.ts"]\n' > bunfig.toml
echo PLANTED
"""
NAMES = ("rust-toolchain.toml", ".mvn/jvm.config", ".mvn/maven.config", ".mvn/extensions.xml",
         ".mvn/wrapper/maven-wrapper.properties", ".jvmopts", ".sbtopts", "gradle.properties",
         "gradle/wrapper/gradle-wrapper.properties", ".python-version", ".nvmrc", ".node-version", "bunfig.toml")

ORDINARY = r"""
mkdir -p .mvn gradle/wrapper
printf '[toolchain]\nchannel = "1.79"\ncomponents = ["rustfmt", "clippy"]\n' > rust-toolchain.toml
echo '-Xmx2g -Dfile.encoding=UTF-8 -XX:+UseG1GC' > .mvn/jvm.config; echo '-T 4 --batch-mode' > .mvn/maven.config
echo '-Xss4m' > .jvmopts
printf 'org.gradle.jvmargs=-Xmx2g -Dfile.encoding=UTF-8\norg.gradle.caching=true\nkotlin.code.style=official\n' > gradle.properties
printf 'distributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\ndistributionUrl=https\\://services.gradle.org/distributions/gradle-8.10-bin.zip\n' > gradle/wrapper/gradle-wrapper.properties
echo 3.12 > .python-version; echo lts/iron > .nvmrc; echo 20 > .node-version
printf 'smol = true\n[install]\nexact = true\n' > bunfig.toml
echo ORDINARY
"""


def test_tool_configs_naming_a_planted_program_are_put_back(scripted, home, mechanism):
    proj = home / "proj"
    said = _put_back(scripted, home, mechanism, PLANT, NAMES)
    assert "toolchain.path" in said and "org.gradle.jvmargs" in said, said
    cargo = "/root/.cargo/bin/cargo"
    if os.access(cargo, os.X_OK) and os.path.isdir("/root/.rustup"):  # the user's real cargo, unconfined
        out = subprocess.run([cargo, "--version"], cwd=proj, capture_output=True, text=True, timeout=60,
                             env={"PATH": "/root/.cargo/bin:/usr/bin:/bin", "HOME": "/root",
                                  "RUSTUP_HOME": "/root/.rustup", "CARGO_HOME": "/root/.cargo"})
        assert "PLANTED-CARGO" not in out.stdout, out.stdout


def test_ordinary_tool_config_edits_stay(scripted, home, mechanism):
    proj = home / "proj"
    results = _chat(scripted, home, [_terminal(ORDINARY)], mechanism)
    assert "ORDINARY" in results[0], results[0]
    assert "the sandbox" not in results[0], results[0]
    assert (proj / "rust-toolchain.toml").read_text().startswith('[toolchain]\nchannel = "1.79"')
    assert (proj / ".nvmrc").read_text() == "lts/iron\n" and (proj / ".python-version").read_text() == "3.12\n"
    assert "-Xmx2g" in (proj / "gradle.properties").read_text()
    assert "gradle-8.10" in (proj / "gradle/wrapper/gradle-wrapper.properties").read_text()
    assert (proj / ".mvn/maven.config").read_text() == "-T 4 --batch-mode\n"


def test_a_key_added_to_an_existing_gradle_properties_is_put_back(scripted, home, mechanism):
    proj = home / "proj"
    before = "org.gradle.jvmargs=-Xmx2g\n"
    (proj / "gradle.properties").write_text(before)
    (proj / ".python-version").write_text("3.11\n")
    results = _chat(scripted, home, [
        _terminal("mkdir -p jdk/bin && printf 'org.gradle.java.home=%s/jdk\\n' \"$PWD\" >> gradle.properties;"
                  " echo 3.12 > .python-version; echo CHANGED"),
    ], mechanism)
    assert "CHANGED" in results[0], results[0]
    assert (proj / "gradle.properties").read_text() == before, results[0]
    assert "org.gradle.java.home" in results[0] and "Gradle" in results[0], results[0]
    assert (proj / ".python-version").read_text() == "3.12\n", "an ordinary version bump was put back"


def test_hermes_own_writes_of_such_configs_in_a_tainted_turn_are_refused(scripted, home):
    """write_file runs unconfined: after fetched content, a toolchain path or a JVM agent is refused in `-q`
    (nobody to ask) as the confined side's write is put back; an `.nvmrc` of `20` goes through."""
    proj = home / "proj"
    model_config(home / ".hermes", scripted.url)
    write = [{"tool_calls": [{"name": "write_file", "arguments": {"path": p, "content": t}}]} for p, t in (
        ("rust-toolchain.toml", f'[toolchain]\npath = "{proj}/tc"\n'),
        (".mvn/jvm.config", "-javaagent:tc/agent.jar\n"),
        (".nvmrc", "20\n"))]
    scripted.add(_terminal("curl -s --max-time 2 http://127.0.0.1:9/ || true"), *write, {"content": "done"})
    out = run_hermes("chat", "-q", "go", home=home / ".hermes", cwd=str(proj), timeout=180, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    results = [m["content"] for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"][1:]
    assert len(results) == 3, results
    for result in results[:2]:
        assert "BLOCKED" in result and "runs later" in result, result
    assert not (proj / "rust-toolchain.toml").exists() and not (proj / ".mvn/jvm.config").exists()
    assert (proj / ".nvmrc").read_text() == "20\n", results[2]
