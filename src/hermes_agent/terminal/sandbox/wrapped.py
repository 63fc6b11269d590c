"""One program (an MCP stdio server, the browser, a search tool) run inside the sandbox of a spec: the argv that
starts it under bwrap or Landlock, behind netwrap.py when it gets a network namespace of its own. Split from
launcher.py, whose long-lived launcher serves the terminal's commands."""

from __future__ import annotations

import json
import os
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

PLAN_ENV = "HERMES_SANDBOX_PLAN"
# bwrap's options (the names of hidden paths) go to bwrap through `--args FD`, as the terminal launcher's: a
# stub, started by whoever starts the program (the MCP SDK, Playwright, a search), takes them from its
# environment (PLAN_ENV: readable only with ptrace rights over it, which confined code never has) and becomes
# bwrap reading them from a descriptor. bash: the options NUL-separated by `printf %b` into a pipe (4 ms);
# python (no bash, or a plan too big for one variable unpacked): an anonymous file (a python start, 15-70 ms).
_BASH_STUB = 'exec 4< <(printf %b "$' + PLAN_ENV + '"); unset ' + PLAN_ENV + '; exec "$0" --args 4 "$@"'
_ARGS_STUB = (
    "import json,os,sys\n"
    "p=os.environ.pop('" + PLAN_ENV + "','')\n"
    "if p.startswith('z:'):\n import base64,zlib; p=zlib.decompress(base64.b64decode(p[2:])).decode()\n"
    "f=os.memfd_create('hermes-bwrap-args',0)\n"
    "os.write(f,b''.join(os.fsencode(a)+b'\\0' for a in json.loads(p)));os.lseek(f,0,0)\n"
    "os.execvp(sys.argv[1],[sys.argv[1],'--args',str(f),*sys.argv[2:]])\n")


def sandbox_launch(spec: SandboxSpec | None, argv: list[str], cwd: str | None = None,
                   pidns: bool = True, unix_filter: bool = False) -> tuple[list[str], dict[str, str]]:
    """(the command line that runs `argv` inside the sandbox of `spec`, variables to add to its environment);
    `argv` unchanged when the spec is off or nothing works here. `cwd`: where it starts inside bwrap (Landlock keeps
    the caller's cwd). The sandbox's plan (bwrap's options, Landlock's rules: the names of hidden paths) travels in
    the variable, never on a command line (`ps` and /proc/<pid>/cmdline show it to every process of the host).
    `pidns`: under Landlock, a pid namespace and /proc of the program's own (as bwrap always gives; an MCP server,
    the browser); False for a search program, which runs no code of anyone's and starts once per search.
    `unix_filter`: under Landlock, the commands' filter of unix sockets too (seccomp.py `unix`: Landlock cannot
    stop a connect() by path to ssh-agent, docker.sock, a tmux or D-Bus socket): an MCP server; not the browser,
    which Chromium's own sockets break. Under bwrap those sockets are out of sight already."""
    if spec is None:
        return list(argv), {}
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
        plan = {PLAN_ENV: pack_config(prefix[1:-1])}  # between "bwrap" and its final "--"
        cmd = [prefix[0], "--", *boot, *argv]
        if own_net:  # behind the wrapper that starts slirp4netns (netwrap.py); it passes the options by fd
            return netwrap.wrapped("bwrap", cmd, _BOOT, CONFINED_TAG), plan
        escaped = "".join(a.replace("\\", "\\\\") + "\\0000" for a in prefix[1:-1])  # printf %b: NUL after each
        if len(escaped) < 120_000 and os.path.isfile("/bin/bash"):
            return ["/bin/bash", "-c", _BASH_STUB, *cmd], {PLAN_ENV: escaped}
        return [sys.executable, "-I", "-S", "-c", _ARGS_STUB, *cmd], plan
    if mechanism == "landlock":
        _not_dumpable()
        cmd = [sys.executable, "-I", "-S", "-c", _BOOT + "exec_main; exec_main()", CONFINED_TAG, "env", *argv]
        plan = {PLAN_ENV: pack_config({**landlock_config(spec, own_net), "pidns": pidns, "unix_filter": unix_filter})}
        return (netwrap.wrapped("landlock", cmd, _BOOT, CONFINED_TAG) if own_net else cmd), plan
    return list(argv), {}


def own_network(spec: SandboxSpec, mechanism: str | None) -> bool:
    """Does a sandbox of `spec` get a network namespace of its own (slirp4netns) here? bwrap: whenever slirp4netns
    is installed; Landlock: where the launcher can make one (as root, or in user namespaces of its own).
    Otherwise it keeps the host's network (doctor says so)."""
    if not spec.network or netns.forwarder() is None:
        return False
    return mechanism == "bwrap" or (mechanism == "landlock" and landlock_netns_works())

