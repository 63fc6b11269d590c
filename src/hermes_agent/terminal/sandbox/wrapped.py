"""One program (an MCP stdio server, the browser, a search tool) run inside the sandbox of a spec: the argv that
starts it under bwrap or Landlock, behind netwrap.py when it gets a network namespace of its own. Split from
launcher.py, whose long-lived launcher serves the terminal's commands."""

from __future__ import annotations

import json
import sys

from hermes_agent.terminal.sandbox import netns
from hermes_agent.terminal.sandbox.bwrap import bwrap_argv
from hermes_agent.terminal.sandbox.launcher import (
    _BOOT,
    BWRAP_SECCOMP,
    CONFINED_TAG,
    _not_dumpable,
    choose_mechanism,
    landlock_config,
    landlock_netns_works,
    pack_config,
)
from hermes_agent.terminal.sandbox.spec import SandboxSpec


def sandbox_command(spec: SandboxSpec | None, argv: list[str], cwd: str | None = None) -> list[str]:
    """`argv` run inside the sandbox of `spec` (unchanged when the spec is off or nothing works here);
    `cwd`: where it starts inside bwrap (Landlock keeps the caller's cwd)."""
    if spec is None:
        return list(argv)
    from hermes_agent.terminal.sandbox import netwrap

    mechanism, _ = choose_mechanism(spec)
    own_net = own_network(spec, mechanism)
    if mechanism == "bwrap":
        prefix = bwrap_argv(spec, own_net=own_net)
        if cwd and "--chdir" in prefix:
            prefix[prefix.index("--chdir") + 1] = cwd
        boot = [sys.executable, "-I", "-S", "-c", _BOOT + "exec_main; exec_main()", CONFINED_TAG,
                json.dumps({"landlock": None, "seccomp": BWRAP_SECCOMP,
                            "listen": list(spec.loopback_ports) if own_net else []})]
        if own_net:  # behind the wrapper that starts slirp4netns (netwrap.py): before the final "--"
            return netwrap.wrapped("bwrap", len(prefix) - 1, [*prefix, *boot, *argv], _BOOT, CONFINED_TAG)
        return [*prefix, *boot, *argv]
    if mechanism == "landlock":
        _not_dumpable()
        cmd = [sys.executable, "-I", "-S", "-c", _BOOT + "exec_main; exec_main()", CONFINED_TAG,
               pack_config({**landlock_config(spec, own_net), "pidns": False}), *argv]
        return netwrap.wrapped("landlock", 0, cmd, _BOOT, CONFINED_TAG) if own_net else cmd
    return list(argv)


def own_network(spec: SandboxSpec, mechanism: str | None) -> bool:
    """Does a sandbox of `spec` get a network namespace of its own (slirp4netns) here? bwrap: whenever slirp4netns
    is installed; Landlock: where the launcher can make one (as root, or in user namespaces of its own).
    Otherwise it keeps the host's network (doctor says so)."""
    if not spec.network or netns.forwarder() is None:
        return False
    return mechanism == "bwrap" or (mechanism == "landlock" and landlock_netns_works())
