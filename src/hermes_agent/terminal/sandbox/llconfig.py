"""The Landlock launcher's configuration for a sandbox spec: the Landlock rules (landlock.plan), the seccomp
rules that cover what Landlock does not, and the bind mounts made where the launcher has a mount namespace."""

from __future__ import annotations

import os

from hermes_agent.terminal.sandbox import landlock, netns
from hermes_agent.terminal.sandbox.spec import SandboxSpec


def landlock_config(spec: SandboxSpec, netns_ok: bool = False) -> dict:
    abi = landlock.abi_version()
    # No ipc namespace, no mount namespace, net rules for TCP only: seccomp covers the rest (seccomp.py).
    rules = {"keyring": True, "ipc": True, "unix": not spec.sockets, "net_off": not spec.network,
             "tcp_free": abi < 4, "metadata": True, "notify": True}
    unseen, reveal = spec.read_view()
    plan = landlock.plan(spec.writable, spec.secrets, abi, spec.sealed, unseen, reveal)
    # pidns: a pid namespace and /proc of the session's own where the launcher may make them (root, or a normal user
    # in a user namespace of its own); MCP servers and the browser too (sandbox_launch), not a search program
    # netns: where the launcher may make one (root), its own network namespace behind slirp4netns (netns.py)
    resolv = netns.resolv_conf_override() if netns_ok and spec.network else None
    cfg = {"landlock": plan, "network": spec.network, "seccomp": rules, "pidns": True, "binds": _binds(spec),
           "netns": netns_ok and spec.network, "listen": list(spec.loopback_ports) if netns_ok else [],
           "resolv": resolv.decode() if resolv else ""}
    if spec.dot_sealed:  # where every bind is made (root), they keep the dot-link targets read-only as bwrap
        # does, and the credential-free global git config is bound over its original (a link's target in the
        # workspace): the workspace then keeps file creation at its top (rt5: ~/dotfiles as the workspace)
        from hermes_agent.terminal.sandbox.bwrap import _in_hidden_dir

        copies = [(copy, orig) for orig, copy in spec.git_globals
                  if orig and os.path.isfile(orig) and os.path.isfile(copy) and not _in_hidden_dir(spec, orig)]
        covered = {orig for _, orig in copies}
        cfg["copies"] = copies
        cfg["landlock_bound"] = landlock.plan(spec.writable, tuple(s for s in spec.secrets if s not in covered),
                                              abi, tuple(s for s in spec.sealed if s not in spec.dot_sealed),
                                              unseen, reveal)
    return cfg


def _binds(spec: SandboxSpec) -> list[tuple[str, bool]]:
    """Where the Landlock launcher has a mount namespace (root): bwrap's binds of writable roots, pinned
    directories and read-only carve-outs, by depth, the read-only one last at a depth (deeper cover shallower)."""
    from hermes_agent.terminal.sandbox.bwrap import _depth

    mounts = [(_depth(p), 0, p) for p in (*spec.writable, *spec.pinned) if os.path.exists(p)]
    mounts += [(_depth(p), 1, p) for p in spec.readonly if os.path.lexists(p) and not os.path.islink(p)]
    return [(p, bool(ro)) for _, ro, p in sorted(dict.fromkeys(mounts))]
