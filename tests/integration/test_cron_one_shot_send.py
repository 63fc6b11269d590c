"""`hermes cron run ID --now` with no gateway running delivers through a one-shot adapter (`connect`, send,
`stop`): every platform adapter implements the whole adapter contract, not Telegram alone. Real `hermes`,
the scripted model, local fakes of Slack and Discord."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import model_config, run_hermes

pytest.importorskip("aiohttp")


def _job_id(out: str) -> str:
    return out.split("Created job ", 1)[1].split()[0]


def _job(home: Path) -> dict:
    return json.loads((home / "cron" / "jobs.json").read_text())["jobs"][0]


def _run_now(home: Path, target: str, env: dict) -> tuple[str, dict]:
    created = run_hermes("cron", "create", "every 1h", "Write the report.", "--deliver", target, home=home, env=env)
    job = _job_id(created.stdout)
    ran = run_hermes("cron", "run", job, "--now", home=home, env=env, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr
    return ran.stdout, _job(home)


def test_cron_run_now_delivers_to_slack_without_a_gateway(scripted, hermes_home):
    pytest.importorskip("slack_bolt")
    from tests.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack

    slack = FakeSlack().start()
    try:
        scripted.default = {"content": "The report is READY-SLACK."}
        model_config(hermes_home, scripted.url, f"platforms:\n  slack:\n    extra:\n      base_url: {slack.base_url}\n")
        out, job = _run_now(hermes_home, "slack:CREPORTS",
                            {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN})
        assert "READY-SLACK" in out
        assert slack.wait_for(lambda: any("READY-SLACK" in t for t in slack.texts()))
        sent = next(m for m in slack.sent if "READY-SLACK" in m["text"])
        assert sent["channel"] == "CREPORTS"
        assert not job.get("last_delivery_error"), job
    finally:
        slack.stop()


def test_cron_run_now_delivers_to_discord_without_a_gateway(scripted, hermes_home):
    pytest.importorskip("discord")
    from tests.fake_discord import FakeDiscord

    fake = FakeDiscord().start()
    channel = 700000000000000500
    try:
        scripted.default = {"content": "The report is READY-DISCORD."}
        model_config(hermes_home, scripted.url, f"platforms:\n  discord:\n    extra:\n      base_url: {fake.api_url}\n"
                                                f"      gateway_url: {fake.gateway_url}\n")
        out, job = _run_now(hermes_home, f"discord:{channel}", {"DISCORD_BOT_TOKEN": fake.token})
        assert "READY-DISCORD" in out
        assert fake.wait_for(lambda: any("READY-DISCORD" in t for t in fake.texts(channel)))
        assert not job.get("last_delivery_error"), job
    finally:
        fake.stop()
