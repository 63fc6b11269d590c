"""Chromium runs inside the OS sandbox: Playwright launches a small wrapper (written by hermes under
$HERMES_HOME/cache/browser, where no sandbox can write) that execs the real browser through
`sandbox_launch` with writes limited to its private home (~/.cache/hermes/browser-<profile>) and the
profile directory Playwright made for this launch, secrets hidden, and the environment by allowlist.
A renderer or a page that gets code running in the browser process still cannot write HOME or read
$HERMES_HOME/.env. With sandbox.mode off the browser runs as before; with no sandbox available here it
is refused (one clear error)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import fields, replace

from hermes_agent import paths

_ENV_KEEP = ("PATH", "LANG", "LANGUAGE", "TZ", "FONTCONFIG_PATH")


def confined_executable(executable: str, policy: object, sandbox: Mapping,
                        hermes_home: str) -> tuple[str, str, tuple[int, ...] | None]:
    """(what Playwright should launch, error, the host loopback ports it reaches: None when it shares the host's
    network). The executable itself when the sandbox is off."""
    from hermes_agent.terminal.sandbox.launcher import choose_mechanism
    from hermes_agent.terminal.sandbox.spec import spec_from_policy
    from hermes_agent.terminal.sandbox.wrapped import own_network
    from hermes_agent.tools.mcp.confine import make_private

    mode = str(sandbox.get("mode") or "workspace-write")
    if policy is None or mode == "off" or not executable:
        return executable, "", None
    home = os.path.realpath(str(policy.home))  # type: ignore[attr-defined]
    profile = hashlib.sha1(os.path.realpath(hermes_home).encode()).hexdigest()[:6]
    private = os.path.join(home, ".cache", "hermes", f"browser-{profile}")
    problem = make_private(os.path.join(private, "tmp"))
    if problem:
        return "", f"the browser was not started: {problem}", None
    narrowed = replace(policy, writable=(private,), workspace=())  # type: ignore[type-var]
    spec = spec_from_policy(narrowed, network=True, mechanism=str(sandbox.get("mechanism") or "auto"), mode=mode,
                            loopback_ports=sandbox.get("loopback_ports") or ())  # its own network namespace
    spec = spec.with_writable(private)  # also in read-only mode: the browser needs its own home
    mechanism, why = choose_mechanism(spec)
    if mechanism is None:
        return "", (f"the browser was not started: no OS sandbox works here ({why}); install bubblewrap, or set "
                    "sandbox.mode: off to run it (and local commands) unconfined"), None
    env = {k: v for k, v in paths.user_environ().items() if k in _ENV_KEEP or k.startswith("LC_")}
    env.update(HOME=private, XDG_CONFIG_HOME=os.path.join(private, "config"),
               XDG_CACHE_HOME=os.path.join(private, "cache"), TMPDIR=os.path.join(private, "tmp"))
    spec_data = {f.name: getattr(spec, f.name) for f in fields(spec) if f.compare}  # data, not its callables
    config = {"spec": spec_data, "executable": executable, "env": env,
              "tmp": os.path.realpath(tempfile.gettempdir())}
    ports = spec.loopback_ports if own_network(spec, mechanism) else None
    return _write_wrapper(config, os.path.join(os.path.realpath(hermes_home), "cache", "browser")), "", ports


def _write_wrapper(config: dict, directory: str) -> str:
    body = (f"#!{sys.executable} -I\nimport json, sys\nsys.path.insert(0, {paths.SRC_ROOT!r})\n"
            "from hermes_agent.tools.builtin._browser_confine import exec_confined\n"
            f"exec_confined(json.loads({json.dumps(json.dumps(config))}), sys.argv[1:])\n")
    path = os.path.join(directory, "chromium-" + hashlib.sha1(body.encode()).hexdigest()[:12])
    if os.path.isfile(path) and not os.path.islink(path):
        return path
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)
    os.chmod(tmp, 0o700)
    os.replace(tmp, path)
    return path


def _profile_dir(args: list[str], tmp: str) -> str | None:
    """Playwright's --user-data-dir for this launch, when it is a plain new directory in the temp dir."""
    for arg in args:
        if arg.startswith("--user-data-dir="):
            path = arg.split("=", 1)[1]
            parent = os.path.realpath(os.path.dirname(path))
            st = os.lstat(path)
            if parent == tmp and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                return path
            raise SystemExit(f"hermes browser wrapper: refusing profile directory {path}")
    return None


def exec_confined(config: dict, args: list[str]) -> None:
    """The wrapper's body (runs unconfined, started by Playwright): exec the browser inside its sandbox."""
    from hermes_agent.terminal.sandbox.spec import SandboxSpec
    from hermes_agent.terminal.sandbox.wrapped import sandbox_launch

    raw = config["spec"]
    spec = SandboxSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    profile = _profile_dir(args, config["tmp"])
    if profile:
        spec = spec.with_writable(profile)
    argv, plan = sandbox_launch(spec, [config["executable"], *args])
    binary = shutil.which(argv[0], path=config["env"].get("PATH")) or argv[0]
    os.execve(binary, argv, {**config["env"], **plan})
