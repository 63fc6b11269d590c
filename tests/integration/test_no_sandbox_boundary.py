"""Issue 19 (lock4): with no OS sandbox on the machine, every command crosses the boundary: only a person's
yes for that one call runs it (never --yolo, approvals.mode: off or the allowlist); `sandbox.mode: off` set by
the user is the exception and is said once on stderr. The once-only prompt re-asks with the choices it offers.
Through the real `hermes chat -q`, HOME outside /tmp, the scripted model; "no sandbox" is made real by forcing
`sandbox.mechanism: bwrap` with a PATH on which bwrap does not exist."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import HERMES, model_config, on_pty, run_hermes


def _path_without_bwrap(base: Path) -> str:
    """A PATH with every program of the system's PATH but bwrap (links), so nothing can build a sandbox."""
    bindir = base / "bin"
    bindir.mkdir()
    for entry in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        if not os.path.isdir(entry) or entry.startswith(str(base)):
            continue
        for name in os.listdir(entry):
            if name != "bwrap" and not (bindir / name).exists():
                (bindir / name).symlink_to(os.path.join(entry, name))
    return str(bindir)


@pytest.fixture
def no_sandbox(outside_dir: Path) -> dict:
    home = outside_dir / "home"
    work = home / "proj"
    work.mkdir(parents=True)
    return {"home": home, "work": work, "env": {"HOME": str(home), "PATH": _path_without_bwrap(outside_dir)}}


def _calls(*commands: str) -> list[dict]:
    return [{"tool_calls": [{"name": "terminal", "arguments": {"command": c}}]} for c in commands]


def _tool_results(scripted) -> list[str]:  # noqa: ANN001
    return [str(m["content"]) for m in scripted.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_without_any_sandbox_yolo_mode_off_and_allowlist_do_not_run_commands(scripted, hermes_home, no_sandbox):
    home, work = no_sandbox["home"], no_sandbox["work"]
    model_config(hermes_home, scripted.url, "approvals:\n  mode: 'off'\ncommand_allowlist: [unsandboxed, "
                 "'echo fine > notes.txt']\nsandbox:\n  mechanism: bwrap\n")
    scripted.add(*_calls("echo fine > notes.txt", f"echo PWNED >> {home}/.bashrc"),
                 {"tool_calls": [{"name": "execute_code", "arguments": {"code": "open('x.txt','w').write('x')"}}]},
                 {"content": "done"})
    out = run_hermes("chat", "-q", "go", "--yolo", home=hermes_home, cwd=str(work), timeout=120,
                     env=no_sandbox["env"])
    assert out.returncode == 0, out.stderr
    assert not (work / "notes.txt").exists() and not (home / ".bashrc").exists() and not (work / "x.txt").exists()
    results = _tool_results(scripted)
    assert len(results) == 3
    for result in results:
        assert "BLOCKED" in result and "no OS sandbox works on this machine" in result, result
        assert "--yolo, approvals.mode: off, command_allowlist and session approvals do not cover it" in result
    assert "every command needs your yes for that one call" in out.stderr
    doctor = run_hermes("doctor", home=hermes_home, cwd=str(work), env=no_sandbox["env"])
    assert "no OS sandbox for local commands" in doctor.stdout
    assert "every command needs a person's yes for that one call" in doctor.stdout


def test_sandbox_mode_off_is_the_users_choice_and_said_once(scripted, hermes_home, no_sandbox):
    work = no_sandbox["work"]
    model_config(hermes_home, scripted.url, "sandbox:\n  mode: 'off'\n")
    scripted.add(*_calls("echo one > a.txt", "echo two > b.txt"), {"content": "done"})
    out = run_hermes("chat", "-q", "go", home=hermes_home, cwd=str(work), timeout=120, env=no_sandbox["env"])
    assert out.returncode == 0, out.stderr
    assert (work / "a.txt").read_text() == "one\n" and (work / "b.txt").read_text() == "two\n"
    assert out.stderr.count("sandbox.mode is off (your config): local commands run unconfined") == 1, out.stderr
    doctor = run_hermes("doctor", home=hermes_home, cwd=str(work), env=no_sandbox["env"])
    assert "sandbox.mode is off: local commands run unconfined" in doctor.stdout


def _run_on_pty(argv: list[str], env: dict, cwd: str, answers: list[tuple[str, str]], timeout: float = 90) -> str:
    """Run `argv` with a pty as its controlling terminal; each time the screen shows the next answer's cue,
    type the answer. Returns everything shown."""
    pending = list(answers)

    def react(fd: int, shown: bytes) -> bool:
        while pending and shown.decode("utf-8", "replace").count(pending[0][0]) >= _seen(answers, pending):
            os.write(fd, pending.pop(0)[1].encode() + b"\n")
        return False

    return on_pty(argv, env, cwd, react, timeout).decode("utf-8", "replace")


def _seen(answers: list[tuple[str, str]], pending: list[tuple[str, str]]) -> int:
    """How many times the next cue must have been shown: once more than the answers already given to it."""
    done = answers[: len(answers) - len(pending)]
    return 1 + sum(1 for cue, _ in done if cue == pending[0][0])


def test_the_once_only_prompt_asks_again_with_the_choices_it_offers(scripted, hermes_home, no_sandbox):
    """On a real terminal: no sandbox here, so the command is put to the person, offering once/deny only; an
    answer that is none of them is asked again with [o/D], not [o/s/a/D]; "o" then runs it."""
    work = no_sandbox["work"]
    model_config(hermes_home, scripted.url, "sandbox:\n  mechanism: bwrap\n")
    scripted.add(*_calls("echo asked > asked.txt"), {"content": "finished"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), NO_COLOR="1", TERM="dumb", **no_sandbox["env"])
    shown = _run_on_pty([HERMES, "chat", "-q", "write the file", "--yolo"], env, str(work),
                        [("Choice [o/D]", "maybe"), ("Choice [o/D]", "o"), ("finished", "")])
    assert "This leaves the sandbox: only this one call can be approved." in shown, shown
    assert "Please type o or d. Choice [o/D]" in shown, shown
    assert "[o/s/a/D]" not in shown and "[s]ession" not in shown, shown
    assert (work / "asked.txt").read_text() == "asked\n"
