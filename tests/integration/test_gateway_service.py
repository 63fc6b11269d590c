"""`hermes gateway install|uninstall`: the systemd user unit, named as the released Hermes names it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import HERMES


def _hermes(home: Path, hermes_home: Path | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "TELEGRAM_"))}
    env["HOME"] = str(home)
    if hermes_home is not None:
        env["HERMES_HOME"] = str(hermes_home)
    return subprocess.run([HERMES, "gateway", *args], env=env, capture_output=True, text=True, timeout=60)


def test_install_writes_the_hermes_named_unit_and_uninstall_removes_it(tmp_path):
    home = tmp_path / "user"
    (home / ".hermes").mkdir(parents=True)
    res = _hermes(home, None, "install")
    assert res.returncode == 0, res.stdout + res.stderr
    unit = home / ".config/systemd/user/hermes-gateway.service"
    text = unit.read_text()
    assert "-m hermes_agent gateway run" in text
    assert f'Environment="HERMES_HOME={(home / ".hermes").resolve()}"' in text
    assert "Restart=always" in text and "WantedBy=default.target" in text
    again = _hermes(home, None, "install")
    assert "already installed and current" in again.stdout
    status = _hermes(home, None, "status")
    assert "hermes-gateway" in status.stdout or "never ran" in status.stdout
    gone = _hermes(home, None, "uninstall")
    assert gone.returncode == 0 and not unit.exists()
    assert _hermes(home, None, "uninstall").returncode == 1


@pytest.mark.parametrize(("where", "name"), [("profiles/coder", "hermes-gateway-coder"), ("elsewhere", None)])
def test_profile_and_custom_homes_get_their_own_unit(tmp_path, where, name):
    home = tmp_path / "user"
    target = home / ".hermes" / where if where.startswith("profiles") else tmp_path / where
    target.mkdir(parents=True)
    res = _hermes(home, target, "install")
    assert res.returncode == 0, res.stdout + res.stderr
    units = list((home / ".config/systemd/user").glob("hermes-gateway*.service"))
    assert len(units) == 1
    if name:
        assert units[0].name == f"{name}.service"
    else:
        assert units[0].name.startswith("hermes-gateway-") and len(units[0].stem) == len("hermes-gateway-") + 8


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_the_unit_is_valid_for_systemd(tmp_path):
    home = tmp_path / "user"
    (home / ".hermes").mkdir(parents=True)
    _hermes(home, None, "install")
    unit = home / ".config/systemd/user/hermes-gateway.service"
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "hermes-gateway.service" not in res.stderr, res.stderr


def test_start_after_install_without_user_systemd_falls_back_to_the_pid_file(tmp_path):
    home = tmp_path / "user"
    (home / ".hermes").mkdir(parents=True)
    _hermes(home, None, "install")
    res = _hermes(home, None, "stop")
    assert res.returncode == 1 and "not running" in res.stdout


def test_start_with_no_platform_says_the_gateway_exited_and_why(tmp_path):
    home = tmp_path / "user"
    (home / ".hermes").mkdir(parents=True)
    res = _hermes(home, None, "start")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Gateway exited at once (exit code 1): No messaging platform configured" in res.stdout
    assert "Gateway started" not in res.stdout
    assert not list((home / ".hermes").rglob("gateway.pid"))
    assert "not running" in _hermes(home, None, "status").stdout
