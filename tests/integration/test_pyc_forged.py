"""rt13 a48 through the real `hermes chat -q`: a command writes a compiled copy (`__pycache__/util.cpython-311.pyc`)
of an UNCHANGED module with the source's mtime and size in its header, so the user's next `import util` runs the
payload while `util.py` and `git status` look clean. Any compiled copy confined work writes that python would run
and that is not what its source compiles to goes, at any depth and in a workspace venv's site-packages; so do an
unchecked hash-based copy, an optimised one and a sourceless `.pyc` outside __pycache__. A copy python itself
writes in the sandbox stays."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys

from tests.integration.test_sandbox_run_later_guard import _chat, _terminal, home  # noqa: F401

PLANT = r'''
import importlib.util, marshal, os, struct, sys
def plant(src, payload, flags=0, opt="", header=None, out=None):
    st = os.stat(src)
    d = os.path.join(os.path.dirname(src), "__pycache__"); os.makedirs(d, exist_ok=True)
    name = os.path.splitext(os.path.basename(src))[0]
    head = header if header is not None else struct.pack("<II", int(st.st_mtime) & 0xFFFFFFFF, st.st_size)
    data = importlib.util.MAGIC_NUMBER + struct.pack("<I", flags) + head
    data += marshal.dumps(compile(payload + "\n" + open(src).read(), src, "exec"))
    path = out or os.path.join(d, f"{name}.{sys.implementation.cache_tag}{opt}.pyc")
    open(path, "wb").write(data)
P = "open('PWNED', 'w').close()"
plant("util.py", P)
plant("a/b/c/d/e/f/deep.py", P)
plant(".venv/lib/site-packages/helper.py", P)
plant("hashed.py", P, flags=1, header=b"\0" * 8)
plant("opt.py", P, opt=".opt-1")
plant("gone.py", P, out="gone.pyc"); os.remove("gone.py")
cached = f"__pycache__/linked.{sys.implementation.cache_tag}.pyc"  # python's own copy, from before the session
os.link(cached, "alias.bin")  # a second name, outside __pycache__: the copy rewritten through it in place
plant("linked.py", P, out="forged.tmp"); forged = open("forged.tmp", "rb").read()
with open("alias.bin", "r+b") as f: f.write(forged)
import good
print("PLANTED")
'''


def test_forged_compiled_copies_are_removed(scripted, home, mechanism):  # noqa: F811
    proj = home / "proj"
    files = {"util.py": "def f():\n    return 1\n", "a/b/c/d/e/f/deep.py": "X = 1\n", "hashed.py": "H = 1\n",
             "opt.py": "O = 1\n", "gone.py": "G = 1\n", "good.py": "GOOD = 1\n", ".gitignore": "__pycache__/\n.venv/\n",
             ".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/lib/site-packages/helper.py": "Y = 1\n"}
    for rel, text in files.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    (proj / "plant.py").write_text(PLANT)
    (proj / "linked.py").write_text("L = 1\n")
    py_compile.compile(str(proj / "linked.py"))
    results = _chat(scripted, home, [_terminal(f"{sys.executable} plant.py")], mechanism)
    assert "PLANTED" in results[0], results[0]
    tag = sys.implementation.cache_tag
    left = sorted(str(p.relative_to(proj)) for p in proj.rglob("*.pyc"))
    assert left == [f"__pycache__/good.{tag}.pyc"], f"{left}\n{results[0]}"  # python's own copy stays
    assert f"__pycache__/util.{tag}.pyc" in results[0] and "not what its source compiles to" in results[0], results[0]
    assert "gone.pyc" in results[0] and "hash-based" in results[0] and "hard link" in results[0], results[0]
    env = {**os.environ, "PYTHONPATH": "a/b/c/d/e/f:.venv/lib/site-packages"}
    out = subprocess.run([sys.executable, "-c", "import util, deep, helper, hashed, good, linked"], cwd=proj, env=env,
                         capture_output=True, text=True, timeout=60)
    subprocess.run([sys.executable, "-O", "-c", "import opt"], cwd=proj, env=env, timeout=60)
    assert out.returncode == 0 and not (proj / "PWNED").exists(), out.stderr


def test_copies_python_and_pytest_write_in_the_sandbox_stay(scripted, home, mechanism):  # noqa: F811
    """The control: pytest run in the sandbox writes its assertion-rewritten copies and python its own; they are
    what their sources compile to, so they stay and nothing is said."""
    proj = home / "proj"
    (proj / "tests").mkdir()
    (proj / "tests/test_a.py").write_text("import lib\n\ndef test_a():\n    assert lib.X == 1\n")
    (proj / "lib.py").write_text("X = 1\n")
    cmd = f"PYTHONPATH=. {sys.executable} -m pytest -q -p no:cacheprovider tests 2>&1 | tail -1"
    results = _chat(scripted, home, [_terminal(cmd)], mechanism)
    assert "1 passed" in results[0], results[0]
    left = sorted(p.name for p in proj.rglob("*.pyc"))
    assert any("-pytest-" in n for n in left) and any(n.startswith("lib.") for n in left), f"{left}\n{results[0]}"
    assert "removed" not in results[0], results[0]
