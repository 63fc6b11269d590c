"""dataclasses' generated methods compiled once and reused by later runs (hermes_agent/dccache.py, issue 24):
real processes define the same classes with and without the cache; what the classes do must not differ, a second
run must compile nothing, and a corrupt or foreign file, or bytecode writing turned off, must change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CLASSES = r'''
import json, sys
if sys.argv[1] != "-":  # before dataclasses is imported, as hermes does (dccache imports it without inspect)
    from hermes_agent import dccache
    assert dccache.install(__import__("pathlib").Path(sys.argv[1]))
    assert "inspect" not in sys.modules
import dataclasses
from dataclasses import dataclass, field, InitVar, FrozenInstanceError

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0

@dataclass(order=True)
class Ranked:
    rank: int
    tags: list = field(default_factory=list)
    note: str = field(default="", repr=False, compare=False)

@dataclass(kw_only=True, unsafe_hash=True)
class Keyed:
    a: str
    b: float = 1.5

@dataclass(eq=False)
class Plain:
    seed: InitVar[int]
    value: int = field(init=False)
    def __post_init__(self, seed):
        self.value = seed * 2

out = []
p = Point(1)
out.append([repr(p), p == Point(1, 0), p == Point(2), hash(p) == hash(Point(1, 0))])
try:
    p.x = 5
except FrozenInstanceError as exc:
    out.append(["frozen", str(exc)])
r1, r2 = Ranked(1, ["a"], "n"), Ranked(2)
out.append([repr(r1), r1 < r2, sorted([r2, r1]) == [r1, r2], Ranked(1, ["a"], "x") == r1, r2.tags == []])
k = Keyed(a="z")
out.append([repr(k), hash(k) == hash(Keyed(a="z", b=1.5))])
try:
    Keyed("z")
except TypeError as exc:
    out.append(["kw_only", type(exc).__name__])
pl = Plain(21)
out.append([pl.value, pl == Plain(21), [f.name for f in dataclasses.fields(Plain)]])
out.append([Point.__init__.__qualname__, Point.__init__.__code__.co_filename, Ranked.__lt__.__name__])
# a class written without a docstring gets its signature as one (inspect.signature, which dccache lets
# dataclasses import on first use), and the process then has the real inspect module
out.append([Point.__doc__, Keyed.__doc__, "inspect" in sys.modules, hasattr(sys.modules.get("inspect"), "signature")])
if sys.argv[1] != "-":
    out.append(["new", dccache._state["new"]])
print(json.dumps(out))
'''


def _run(cache: str, *, no_bytecode: bool = False) -> list:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([sys.executable, "-c", CLASSES, cache], capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the cache knows Python 3.11's dataclasses only")
def test_a_second_run_compiles_nothing_and_the_classes_behave_the_same(tmp_path):
    cache = tmp_path / "dataclass-code.bin"
    plain = _run("-")
    first = _run(str(cache))
    assert cache.is_file()
    second = _run(str(cache))
    assert first[-1][0] == "new" and first[-1][1] > 10  # the first run compiled every method
    assert second[-1] == ["new", 0]  # the second one reused them all
    assert first[:-1] == second[:-1] == plain  # and nothing a class does differs from plain dataclasses


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the cache knows Python 3.11's dataclasses only")
def test_a_corrupt_or_foreign_cache_is_ignored_and_rewritten(tmp_path):
    import marshal

    plain = _run("-")
    cache = tmp_path / "dataclass-code.bin"
    for junk in (b"\x00garbage", marshal.dumps(("2.7.18 (other python)", {"x": 1})), marshal.dumps([1, 2])):
        cache.write_bytes(junk)
        got = _run(str(cache))
        assert got[:-1] == plain and got[-1][1] > 10
        assert marshal.loads(cache.read_bytes())[0] == sys.version  # written back whole


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the cache knows Python 3.11's dataclasses only")
def test_nothing_is_written_when_bytecode_writing_is_off(tmp_path):
    cache = tmp_path / "dataclass-code.bin"
    got = _run(str(cache), no_bytecode=True)
    assert got[:-1] == _run("-") and not cache.exists()
