"""Tool configs judged by value, for the run-later guard (guardtools.TABLE): files the user's tools read at
start (rustup's `rust-toolchain.toml`, Maven's `.mvn/jvm.config`, sbt's `.jvmopts`, Gradle's
`gradle.properties`, the version files pyenv/uv/nvm/fnm read, bun's `bunfig.toml`, the build wrappers'
properties). A name list is always one short, so the rule is the class (red-team round 11 a38): a value that
names a path into a place the sandbox can write (the workspace, a temp dir: `[toolchain] path = "$PWD/tc"`,
`org.gradle.java.home=./jdk`, a `.python-version` of `./tc/bin/python`) or a flag that makes an interpreter
load code (`-javaagent:`, `-agentpath:`, `-XX:OnError=`, node's `--require`, `@argfile`) is run-later.
Ordinary edits stay: a channel `1.79`, `-Xmx2g`, an `.nvmrc` of `20`.

Parsers here return the `Flat` mapping guardtools judges ("key" -> value as text); the conditions
`pathin` (a path into a writable place) and `flags` (a flag that loads code, or a flag's value that is such a
path) are evaluated by `judge`. Stdlib only."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

Flat = dict[str, str]

# JVM, node, ruby and python options that load code or run a program (prefix of the flag, lower-case)
_LOADS = ("-javaagent", "-agentpath", "-agentlib", "-xbootclasspath", "-xx:onerror", "-xx:onoutofmemoryerror",
          "-xx:vmoptionsfile", "-xx:flags", "-djava.system.class.loader", "-djava.ext.dirs",
          "-djava.security.manager", "-djava.security.policy", "-dmaven.ext.class.path", "-cp", "-classpath",
          "--class-path", "--module-path", "--upgrade-module-path", "--patch-module", "-xrun", "-xdebug",
          "--require", "-r", "--import", "--loader", "--experimental-loader", "--env-file",
          "--inspect", "--preload", "--init-script", "-jvm-debug", "-sbt-jar", "-sbt-boot",
          "-sbt-launch-dir", "-sbt-launch-repo", "-java-home", "-ivy", "-sbt-dir", "-rubyopt")


def _split(text: str) -> list[str]:
    """Shell-like words of a flags value (quotes kept out); one that does not split is read by whitespace."""
    import shlex

    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def loads(token: str) -> bool:
    """A flag that makes the JVM (sbt's `-J` passes it on), node or an interpreter load code or start a
    program: `-javaagent:x.jar`, `-XX:OnError=sh`, `--require ./x`, an `@argfile` of more flags."""
    t = token.strip().lower()
    if t.startswith("-j-"):  # sbt hands `-J<flag>` to the JVM
        t = t[2:]
    if t.startswith("@"):
        return True
    if not t.startswith("-"):
        return False
    return any(t == f or (t.startswith(f) and (len(f) > 3 or t[len(f)] in "=:")) for f in _LOADS)


def path_in(text: str, writable: Callable[[str], bool]) -> bool:
    """A value that is, or leads into, a place the sandbox can write: an absolute path there (as written and
    where it leads now), a relative path (`./x`, `tc/bin`, `../x`, `~/x`: read from the project or HOME), a
    variable the tool expands, or a `file:` URL to one. A bare word (`20`, `stable`, `UTF-8`) is a name."""
    value = text.strip().strip("'\"")
    if value.lower().startswith("file:"):
        value = re.sub(r"^file:(//)?", "", value, flags=re.IGNORECASE) or "/"
    if not value or "://" in value or value.startswith("-"):
        return False
    if "${" in value or value.startswith(("$", "~", "./", "../", ".\\")) or value in (".", ".."):
        return True
    if value.startswith("/"):
        return writable(os.path.normpath(value)) or writable(os.path.realpath(value))
    return "/" in value or "\\" in value


def flags_risky(text: str, writable: Callable[[str], bool]) -> bool:
    """A JVM/interpreter flags value with a flag that loads code, or a path into a writable place as a flag's
    value (`-Dmaven.repo.local=./repo`, `-java-home ./jdk`) or on its own."""
    for token in _split(text):
        if loads(token):
            return True
        value = token.split("=", 1)[1] if token.startswith("-") and "=" in token else token
        if value is not token and loads(value):  # bazel's --host_jvm_args=-javaagent:x, --jvmopt=...
            return True
        if path_in(value, writable):
            return True
    return False


CONDITIONS = ("pathin", "flags", "version")


def judge(cond: str, value: str, writable: Callable[[str], bool]) -> bool:
    """Is `value` dangerous under one of the CONDITIONS of this module."""
    if cond == "pathin":
        return path_in(value, writable)
    if cond == "flags":
        return flags_risky(value, writable)
    if cond == "version":  # nvm's `lts/iron`, `lts/*` are names
        return not re.fullmatch(r"lts/[\w*.-]+", value.strip(), re.IGNORECASE) and path_in(value, writable)
    return False


def flag_file(data: str) -> Flat:
    """`.mvn/jvm.config`, `.mvn/maven.config`, `.jvmopts`, `.sbtopts`: flags, any number a line, `#` comments.
    Each flag is its own key (its value the flag itself), so an added flag is a changed key."""
    out: Flat = {}
    for token in _split(data):
        out[token.lower()] = token
    return out


def properties(data: str) -> Flat:
    """Java properties (`gradle.properties`, the wrappers' `*.properties`): `key=value`, `key: value` or
    `key value`, `#`/`!` comments, a trailing backslash continues the line."""
    out: Flat = {}
    logical: list[str] = []
    pending = ""
    for raw in data.splitlines():
        if not pending and (not raw.strip() or raw.lstrip()[:1] in "#!"):
            continue
        line, pending = pending + raw.lstrip(), ""
        if re.search(r"(?<!\\)(\\\\)*\\$", line):
            pending = line[:-1]
            continue
        logical.append(line.strip())
    if pending:
        logical.append(pending.strip())
    for line in logical:
        m = re.match(r"((?:[^=:\s\\]|\\.)+)\s*[=:\s]?\s*(.*)", line)
        key, value = (m.group(1), m.group(2)) if m else (line, "")
        out[re.sub(r"\\(.)", r"\1", key).lower()] = re.sub(r"\\(.)", r"\1", value.strip())
    return out


def version_file(data: str) -> Flat:
    """`.python-version`, `.nvmrc`, `.node-version`, `.ruby-version`, `.java-version`...: one version (or path,
    for uv and some node managers) a line, `#` comments."""
    out: Flat = {}
    for n, raw in enumerate(data.splitlines()):
        text = raw.split("#", 1)[0].strip()
        if text:
            out[f"version.{n}"] = text
    return out


def rust_toolchain(data: str) -> Flat:
    """rustup's `rust-toolchain(.toml)`: TOML `[toolchain]`, or the legacy single line naming the channel."""
    from hermes_agent.terminal.sandbox.guardtools import _toml

    try:
        return _toml(data)
    except ValueError:
        lines = [line.strip() for line in data.splitlines() if line.strip()]
        if len(lines) == 1 and "=" not in lines[0] and "[" not in lines[0]:
            return {"toolchain.channel": lines[0]}
        raise


def json_file(data: str) -> Flat:
    """A JSON file (.NET's `global.json`): nested keys dotted, lower-case."""
    import json

    from hermes_agent.terminal.sandbox.guardtools import _flatten

    doc = json.loads(data or "{}")
    if not isinstance(doc, dict):
        raise ValueError("not an object")
    out: Flat = {}
    _flatten(doc, "", out)
    return out


def extensions_xml(data: str) -> Flat:
    """Maven's `.mvn/extensions.xml`: every `<extension>` (groupId:artifactId -> version) is code mvn loads
    at its start. A DTD or entity is refused (it does not parse: every key counts)."""
    import xml.etree.ElementTree as ET

    if "<!doctype" in data.lower() or "<!entity" in data.lower():
        raise ValueError("a DTD in extensions.xml")
    root = ET.fromstring(data)
    out: Flat = {}
    for ext in root.iter():
        if ext.tag.rsplit("}", 1)[-1] != "extension":
            continue
        fields = {c.tag.rsplit("}", 1)[-1].lower(): (c.text or "").strip() for c in ext}
        out["extension." + fields.get("groupid", "") + ":" + fields.get("artifactid", "")] = \
            fields.get("version", "") + " " + fields.get("classifier", "")
    return out


# rules (guardtools' shape: "key pattern=condition"); every value of these files is judged by path_in
JVM = ("*=flags",)
VERSION = ("*=version",)
GRADLE = ("org.gradle.jvmargs=flags", "*jvmargs=flags", "*jvm.args=flags", "*=pathin")
WRAPPER = ("distributionurl=pathin", "wrapperurl=pathin", "*jar*=pathin")
RUST = ("toolchain.path=writable", "toolchain.*=pathin", "*=pathin")
BUN = ("preload*", "*.preload*", "plugins*", "*.plugins*", "run.shell", "run.bun", "install.registry",
        "install.scopes.*", "install.cache.dir=pathin", "*=pathin")
EXTENSIONS = ("extension.*",)
BAZEL = ("*=flags",)  # `.bazelrc`: `startup --host_jvm_args=...`, `build --run_under=./x`, `import %workspace%/x`
DOTNET = ("sdk.paths", "sdk.paths.*", "*=pathin")  # global.json: `"paths": [".dotnet"]` runs an SDK from there
