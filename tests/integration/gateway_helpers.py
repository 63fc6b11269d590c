"""Start the real `hermes gateway run` process against the fake Telegram API and the scripted model."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.fake_telegram import FakeTelegram
from tests.helpers import HERMES, model_config


class Gateway:
    """One `hermes gateway run` process; `start()` waits until it prints one of `ready`."""

    ready: tuple[str, ...] = ("gateway: telegram polling", "gateway: telegram webhook")

    def __init__(self, home: Path, fake: FakeTelegram, model_url: str, env: dict | None = None,
                 extra: str = "", cwd: Path | None = None) -> None:
        self.home, self.fake = home, fake
        model_config(home, model_url, "platforms:\n  telegram:\n    extra:\n"
                                      f"      base_url: {fake.base_url}\n      base_file_url: {fake.file_url()}\n"
                                      f"      poll_timeout: 2\n{extra}")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_", "HERMES_",
                                                                            "TELEGRAM_", "GATEWAY_"))}
        # progress messages off unless a test asks (display.tool_progress's default `all` would add them to
        # every count of sent messages); a None value in `env` removes the variable
        self.env.update({"HERMES_HOME": str(home), "TELEGRAM_BOT_TOKEN": fake.token,
                         "MESSAGING_CWD": str(cwd or home), "HERMES_TOOL_PROGRESS": "false", **(env or {})})
        self.env = {k: v for k, v in self.env.items() if v is not None}
        self.proc: subprocess.Popen | None = None
        self.log = home / "gateway.out"

    def start(self, timeout: float = 30) -> float:
        """Start and wait for "polling"; returns the seconds it took."""
        t0 = time.perf_counter()
        out = open(self.log, "a")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen([HERMES, "gateway", "run"], env=self.env, stdout=out,
                                     stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(marker in self.log.read_text() for marker in self.ready):
                return time.perf_counter() - t0
            if self.proc.poll() is not None:
                raise AssertionError(f"gateway exited:\n{self.log.read_text()}")
            time.sleep(0.02)
        raise AssertionError(f"gateway did not start:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code, self.proc = self.proc.returncode, None
        return code

    def output(self) -> str:
        return self.log.read_text()
