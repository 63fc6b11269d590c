"""`docker/podman run [opts] IMAGE CMD...` with host folders mounted (-v SRC:DST, --mount src=,dst=): CMD runs
on the host's files, so it is scanned with each DST path replaced by its SRC (`-v ~/proj:/p alpine rm -rf /p`
is `rm -rf ~/proj`). Pure string work."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent.approval.rules.unwrapped import Unwrapped

# docker run/create options that take a value (the next word when not given as --opt=value)
_VALUED = frozenset({
    "-a", "--attach", "-c", "--cpu-shares", "--cidfile", "--cpus", "--cpuset-cpus", "--cpuset-mems", "-e", "--env",
    "--env-file", "--entrypoint", "-h", "--hostname", "--add-host", "--dns", "--dns-option", "--dns-search", "--device",
    "--cap-add", "--cap-drop", "--gpus", "--group-add", "--health-cmd", "--ipc", "-l", "--label", "--label-file",
    "--log-driver", "--log-opt", "-m", "--memory", "--memory-swap", "--mount", "--name", "--network", "--net",
    "--network-alias", "-p", "--publish", "--pid", "--platform", "--pull", "--restart", "--runtime", "--security-opt",
    "--shm-size", "--stop-signal", "--stop-timeout", "--tmpfs", "--ulimit", "-u", "--user", "--userns", "--uts", "-v",
    "--volume", "--volumes-from", "-w", "--workdir", "--ip", "--ip6", "--mac-address", "--annotation", "--arch", "--os",
})


def _mounts(args: list, end: int) -> list[tuple[str, str]]:
    out = []
    end = min(end, len(args))
    for k in range(end):
        a = args[k]
        value = args[k + 1] if a in ("-v", "--volume", "--mount") and k + 1 < end else None
        if a.startswith(("--volume=", "--mount=")) or (a.startswith("-v") and len(a) > 2 and a[2] != "-"):
            value, a = a.split("=", 1)[1] if "=" in a else a[2:], "--mount" if a.startswith("--mount") else "-v"
        if value is None:
            continue
        if a == "--mount":
            kv = dict(p.split("=", 1) for p in value.split(",") if "=" in p)
            src, dst = kv.get("source", kv.get("src", "")), kv.get("destination", kv.get("dst", kv.get("target", "")))
        else:
            src, _, rest = value.partition(":")
            dst = rest.split(":", 1)[0]
        if src.startswith(("/", "~", "$", ".")) and dst.startswith("/"):
            out.append((dst.rstrip("/") or "/", src))
    return out


def container_run(u: Unwrapped) -> None:
    """The command a `docker run` starts, seen on the host through its bind mounts."""
    start = 2 if u.args[:2] == ["container", "run"] else 1
    if u.args[start - 1:start] not in (["run"], ["create"]):
        return
    args, i = u.args[start:], 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _VALUED else 1
    mounts = _mounts(args, i)
    command = args[i + 1:]
    if not mounts or not command:
        return

    def host(word: str) -> str:
        for dst, src in mounts:
            if dst == "/":
                continue
            word = word.replace(dst + "/", src.rstrip("/") + "/")
            if word == dst:
                word = src
        return word

    u.commands.append(([host(a) for a in command], "exec"))
