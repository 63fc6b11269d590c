"""A checkpoint restore never writes or removes through a link (storage/cprestore.py): the working directory may be
a sandbox's workspace, where a confined process can have swapped a directory or a file for a link to a place
outside (`~/.ssh`), before the restore or while it runs (a background process still alive at `/rollback`). Real
files, a real git store, a real thread swapping links as fast as it can."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from hermes_agent.storage.checkpoints import CheckpointStore


def _setup(tmp_path: Path) -> tuple[Path, Path, CheckpointStore, str]:
    wd, outside = tmp_path / "work", tmp_path / "outside"
    (wd / "keep").mkdir(parents=True)
    (wd / "keep/f").write_text("checkpoint\n")
    (wd / "notes.txt").write_text("checkpoint\n")
    outside.mkdir()
    for name in ("f", "x", "notes.txt"):
        (outside / name).write_text("SECRET\n")
    store = CheckpointStore(tmp_path / "hh/checkpoints")
    cp = store.snapshot(wd, "before")
    assert cp
    return wd, outside, store, cp


def _untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["f", "notes.txt", "x"]
    for name in ("f", "x", "notes.txt"):
        assert (outside / name).read_text() == "SECRET\n", f"{name} outside the tree was written"


def test_links_swapped_in_before_a_restore_are_replaced_not_followed(tmp_path):
    wd, outside, store, cp = _setup(tmp_path)
    (wd / "gone").mkdir()
    (wd / "gone/x").write_text("new\n")  # added since the checkpoint: the restore removes it
    store.snapshot(wd, "later")
    for name in ("keep", "gone"):
        os.rename(wd / name, wd / f"{name}.real")
        os.symlink(outside, wd / name)
    (wd / "notes.txt").unlink()
    os.symlink(outside / "notes.txt", wd / "notes.txt")
    store.restore(wd, cp)
    _untouched(outside)
    assert not (wd / "keep").is_symlink() and (wd / "keep/f").read_text() == "checkpoint\n"
    assert not (wd / "notes.txt").is_symlink() and (wd / "notes.txt").read_text() == "checkpoint\n"


def test_links_swapped_in_while_a_restore_runs_are_never_followed(tmp_path):
    wd, outside, store, cp = _setup(tmp_path)
    stop = threading.Event()

    def swap() -> None:  # what a confined background process can do in the workspace meanwhile
        while not stop.is_set():
            for name in ("keep", "gone"):
                try:
                    os.rename(wd / name, wd / f"{name}.real")
                    os.symlink(outside, wd / name)
                    time.sleep(0.0005)
                    os.unlink(wd / name)
                    os.rename(wd / f"{name}.real", wd / name)
                except OSError:
                    pass

    for _ in range(15):
        (wd / "gone").mkdir(exist_ok=True)
        (wd / "gone/x").write_text("new\n")
        store.snapshot(wd, "later")
        swapper = threading.Thread(target=swap, daemon=True)
        stop.clear()
        swapper.start()
        try:
            store.restore(wd, cp)
        except Exception:  # noqa: BLE001 - a restore that met a link in its way may say so; it must not follow it
            pass
        finally:
            stop.set()
            swapper.join()
        _untouched(outside)
