"""SandboxRunner: what a LocalBackend holds to start its processes inside the sandbox. It picks the
mechanism once, owns the launcher, and offers a Popen-shaped `popen` for both paths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

from hermes_agent.terminal.sandbox.launcher import Launcher, SandboxError, choose_mechanism
from hermes_agent.terminal.sandbox.spec import SandboxSpec

_noticed: set[str] = set()
_notice_lock = threading.Lock()


def _stderr_notice(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def notice_once(line: str, emit: Callable[[str], None] | None = None) -> None:
    """Say `line` once per process (the "no sandbox here" warning)."""
    with _notice_lock:
        if line in _noticed:
            return
        _noticed.add(line)
    (emit or _stderr_notice)(line)


class SandboxRunner:
    """`state` is "bwrap", "landlock", "off" (the user's choice) or "unavailable" (nothing works here:
    commands would run unconfined, so the approval gate asks a person before each one)."""

    def __init__(self, spec: SandboxSpec, notice: Callable[[str], None] | None = None) -> None:
        self.spec = spec
        self._notice = notice
        self._launcher: Launcher | None = None
        self._retired: list[Launcher] = []  # launchers of an older spec: their processes keep running
        self._plain: Launcher | None = None  # unconfined calls: no sandbox, but still tracked and reaped
        self._state: str | None = None
        self._plain_used = False  # an unconfined call ran since network_input() last looked
        self._lock = threading.Lock()
        self._aborted = False  # closing: warm() starts nothing

    @property
    def state(self) -> str:
        if self._state is None:
            if not self.spec.enabled:
                self._state = "off"
            else:
                mechanism, why = choose_mechanism(self.spec)
                self._state = mechanism or "unavailable"
                if mechanism in ("bwrap", "landlock") and self.spec.network:
                    from hermes_agent.terminal.sandbox.netns import forwarder_problem

                    problem = forwarder_problem()
                    if problem is None and mechanism == "landlock":
                        from hermes_agent.terminal.sandbox.launcher import landlock_netns_works

                        if not landlock_netns_works():
                            problem = ("Landlock cannot give commands a network namespace here (no user "
                                       "namespaces): they share the host's loopback services; install bubblewrap")
                    if problem:
                        notice_once(f"hermes: {problem}", self._notice)
                if mechanism is None:
                    notice_once(f"hermes: no OS sandbox for local commands ({why}); every command needs your yes "
                                "for that one call (--yolo does not cover it)", self._notice)
        return self._state

    @property
    def contained(self) -> bool:
        return self.state in ("bwrap", "landlock")

    def private_tmp(self) -> bool:
        return self.contained and self.spec.denies_write("/tmp")

    def popen(self, argv: list[str], *, stdin, stdout, stderr, cwd: str, env: dict[str, str], pty: bool = False,
              sandbox: bool = True, extra: tuple[int, ...] = ()):
        """A started process: inside the sandbox when contained and `sandbox`, else plain subprocess.
        stdin/stdout/stderr take what Popen takes (fds, files, PIPE, DEVNULL, STDOUT); `extra` fds are
        the child's fds 3, 4, ..."""
        return self._launch(argv, stdin, stdout, stderr, cwd, env, pty, extra, sandbox and self.contained)

    def _launch(self, argv, stdin, stdout, stderr, cwd, env, pty, extra, confined):
        opened: list[int] = []
        keep: list = [None, None]

        def fd_of(value, index: int) -> int:
            if value is None or value == subprocess.DEVNULL:
                fd = os.open(os.devnull, os.O_RDWR)
                opened.append(fd)
                return fd
            if value == subprocess.PIPE:
                r, w = os.pipe()
                mine, theirs = (w, r) if index == 0 else (r, w)
                keep[0 if index == 0 else 1] = open(mine, "wb" if index == 0 else "rb")  # noqa: SIM115
                opened.append(theirs)
                return theirs
            return value if isinstance(value, int) else value.fileno()

        fds = [fd_of(stdin, 0), fd_of(stdout, 1)]
        fds.append(fds[1] if stderr == subprocess.STDOUT else fd_of(stderr, 2))
        try:
            launcher = self._get_launcher(confined)
            proc = launcher.spawn(argv, cwd=cwd, env=env, stdin=fds[0], stdout=fds[1], stderr=fds[2], pty=pty,
                                  pipes=(keep[0], keep[1]), extra=tuple(extra))
            self._say_no_pidns(launcher)
            return proc
        except SandboxError:
            for f in keep:
                if f is not None:
                    f.close()
            raise
        finally:
            for fd in opened:
                os.close(fd)

    def _get_launcher(self, confined: bool) -> Launcher:
        with self._lock:
            if not confined:
                self._plain_used = True
                if self._plain is None:
                    self._plain = Launcher(self.spec, "none")
                return self._plain
            fresh = self.spec.refreshed()  # re-planned when a .git or a HOME dot-entry appeared/moved
            joined = None
            if fresh is not None:
                self.spec = fresh
                if self._launcher is not None:
                    joined = self._launcher.net  # its network namespace: servers started there stay reachable
                    self._retired.append(self._launcher)  # its running processes keep their sandbox
                    self._launcher.retired = True
                    self._launcher = None
            if self._launcher is None:
                self._launcher = Launcher(self.spec, self.state, joined=joined)
            return self._launcher

    def warm(self) -> None:
        """Probe the mechanism and start the confined launcher ahead of the first command (nothing when commands
        would not be confined: the unconfined launcher still starts with its first call)."""
        if self.contained and not self._aborted:
            launcher = self._get_launcher(True)
            launcher.warm()
            self._say_no_pidns(launcher)

    def _say_no_pidns(self, launcher: Launcher) -> None:
        """One line, once, when a Landlock launcher came up without a pid namespace of its own (a normal user
        without user namespaces, or where its /proc cannot be mounted): what is missing then (terminal/README.md,
        "What holds where")."""
        if launcher.mechanism != "landlock" or launcher.pidns or not launcher.alive():
            return
        from hermes_agent.terminal.sandbox.landlock import abi_version

        signals = "refused by Landlock" if abi_version() >= 6 else "NOT refused (Landlock ABI < 6)"
        notice_once("hermes: no pid namespace for the sandbox here (no user namespaces for this user, or no /proc "
                    "of its own in one): commands can read your other processes' command lines (not their "
                    "environment or memory), processes are tracked by the sandbox launcher only, signals to yours "
                    f"are {signals}, priority changes refused by seccomp; install bubblewrap for a session of its "
                    "own", self._notice)

    def abort_start(self) -> None:
        """The session is closing: the confined launcher's start under way (a warm-up's) fails now."""
        self._aborted = True
        launcher = self._launcher
        if launcher is not None:
            launcher.abort_start()

    def network_input(self) -> bool | None:
        """Did content come in from outside since the last look? True: bytes arrived in the sandbox's own
        network namespace (netns.py); False: nothing did, or nothing could (`sandbox.network: false`); None:
        nobody can tell (a command ran with the host's network: Landlock, no slirp4netns, unconfined)."""
        with self._lock:
            plain, self._plain_used = self._plain_used, False
            launchers = [x for x in (*self._retired, self._launcher) if x is not None]
        if plain:
            return None
        if not self.contained or not self.spec.network:
            return False if self.contained else None
        seen = [launcher.took_in() for launcher in launchers]
        if any(s is None for s in seen):
            return None
        return any(seen)

    def strays(self) -> bool:
        """Confined processes outlived the calls that started them (Launcher.strays), in any launcher."""
        with self._lock:
            launchers = [x for x in (*self._retired, self._launcher) if x is not None]
        return any(launcher.strays() for launcher in launchers)

    def close(self) -> None:
        with self._lock:
            launchers = [*self._retired, self._launcher, self._plain]
            self._launcher, self._plain, self._retired = None, None, []
        for launcher in launchers:
            if launcher is not None:
                launcher.close()
