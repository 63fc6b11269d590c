"""Context files are read by the unconfined process from a workspace the sandbox can write: a context file
swapped for a symlink (to a secret) or for a FIFO must be skipped, never followed or blocked on."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hermes_agent.memory.context_files import find_context_files
from hermes_agent.nofollow import NotRegularFile, read_regular


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, ws, secret = tmp_path / "hermes", tmp_path / "ws", tmp_path / "id_rsa"
    home.mkdir()
    (ws / ".git").mkdir(parents=True)
    secret.write_text("PRIVATE-KEY-SECRET\n")
    return home, ws, secret


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", ".hermes.md", "HERMES.md", "SOUL.md"])
def test_symlinked_context_file_is_not_followed(layout: tuple[Path, Path, Path], name: str) -> None:
    home, ws, secret = layout
    (ws / name).symlink_to(secret)
    texts = [cf.text for cf in find_context_files(ws, home)]
    assert not any("SECRET" in t for t in texts)


def test_symlinked_soul_in_hermes_home_is_not_followed(layout: tuple[Path, Path, Path]) -> None:
    home, ws, secret = layout
    (home / "SOUL.md").symlink_to(secret)
    assert not any("SECRET" in cf.text for cf in find_context_files(ws, home))


def test_regular_files_still_load_and_parent_links_are_fine(layout: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, ws, _ = layout
    (ws / "AGENTS.md").write_text("use tabs\n")
    (home / "SOUL.md").write_text("You are terse.\n")
    link = tmp_path / "ws-link"  # the user's own symlink above the file is resolved, not refused
    link.symlink_to(ws)
    kinds = {cf.kind: cf.text for cf in find_context_files(link, home)}
    assert kinds == {"soul": "You are terse.", "agents": "use tabs"}


def test_fifo_context_file_is_skipped_without_blocking(layout: tuple[Path, Path, Path]) -> None:
    home, ws, _ = layout
    os.mkfifo(ws / "AGENTS.md")
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(find_context_files(ws, home)), daemon=True)
    t.start()
    t.join(5)
    assert out == [[]]
    with pytest.raises(NotRegularFile):
        read_regular(ws / "AGENTS.md")


def test_read_regular_refuses_a_symlinked_directory_swapped_in_below(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "f-link").symlink_to(tmp_path / "real" / "f")
    with pytest.raises(PermissionError):
        read_regular(tmp_path / "f-link")
    assert read_regular(tmp_path / "real" / "f") == b"x"


def test_image_flag_refuses_a_symlink_and_a_fifo(tmp_path: Path) -> None:
    from hermes_agent.cli.run_flags import image_data_url
    from hermes_agent.errors import UsageError

    png = tmp_path / "real.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    assert image_data_url(str(png)).startswith("data:image/png;base64,")
    (tmp_path / "link.png").symlink_to(png)
    with pytest.raises(UsageError, match="symlink"):
        image_data_url(str(tmp_path / "link.png"))
    os.mkfifo(tmp_path / "pipe.png")
    with pytest.raises(UsageError):
        image_data_url(str(tmp_path / "pipe.png"))
