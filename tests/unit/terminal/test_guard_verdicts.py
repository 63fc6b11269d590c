"""The run-later guard's content verdicts (guardtools.py, guardpy.py) on the shapes tools really write: VS Code's
JSON with comments and trailing commas, npm's `key[]` arrays, a TOML file that does not parse, `.pth` lines
split where site.py splits them, and compiled copies made by py_compile next to their source."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path

from hermes_agent.terminal.sandbox import guardpy, guardtools


def _never(path: str) -> bool:
    return False


def test_vscode_settings_with_comments_and_trailing_commas():
    old = b'{\n  // mine\n  "editor.tabSize": 2, /* block */\n  "files.exclude": {"**/x": true,},\n}\n'
    new = old.replace(b'"editor.tabSize": 2', b'"editor.tabSize": 4, "python.defaultInterpreterPath": "./p"')
    assert guardtools.risky(".vscode/settings.json", old, old.replace(b"2", b"4"), _never) == ""
    why = guardtools.risky(".vscode/settings.json", old, new, _never)
    assert "python.defaultinterpreterpath" in why and "VS Code" in why
    assert "does not parse" in guardtools.risky(".vscode/settings.json", old, b'{"a": ', _never)


def test_npmrc_arrays_and_removed_keys():
    assert guardtools.risky(".npmrc", b"node-options=--x\n", b"save-exact=true\n", _never) == ""  # removed
    assert "node-options" in guardtools.risky(".npmrc", None, b"node-options[]=--require\nnode-options[]=./x\n", _never)
    assert guardtools.risky(".npmrc", None, b"fund=false\n; node-options=--x\n", _never) == ""


def test_toml_that_does_not_parse_counts_as_every_key():
    assert "does not parse" in guardtools.risky(".cargo/config.toml", None, b"[alias\nb = 1\n", _never)
    assert "alias.b" in guardtools.risky(".cargo/config.toml", b"[build]\njobs = 2\n",
                                         b"[build]\njobs = 2\n[alias]\nb = 'run'\n", _never)


def test_pyvenv_home_only_where_the_sandbox_can_write(tmp_path: Path):
    def writable(path: str) -> bool:
        return path.startswith(str(tmp_path))
    ok = b"home = /usr/bin\ninclude-system-site-packages = false\n"
    assert guardtools.risky(".venv/pyvenv.cfg", None, ok, writable) == ""
    assert "home" in guardtools.risky(".venv/pyvenv.cfg", ok, f"home = {tmp_path}/bin\n".encode(), writable)
    assert "home" in guardtools.risky(".venv/pyvenv.cfg", ok, b"home = bin\n", writable)  # relative: fail closed


def test_pth_lines_as_site_sees_them():
    code, paths = guardpy.pth_lines(b"# c\n/src\n\nimport os\n/a\x0cimport sys\n import x\n")
    assert code == ["import os", "import sys"] and paths == ["/src", "/a", " import x"]
    assert "python runs" in guardpy.pth_risky(b"import os; os.system('x')\n", {}, {})
    assert guardpy.pth_risky(guardpy.DISTUTILS.encode() + b"\n", {}, {}) == ""
    line = b"import __editable___p_finder; __editable___p_finder.install()\n"
    assert "python runs" in guardpy.pth_risky(line, {"__editable___p_finder": b"import os\nos.system('x')\n"}, {})


def test_finder_shape():
    good = (b"import sys\nfrom pathlib import Path\nMAPPING: dict[str, str] = {'p': '/w/p'}\n"
            b"PATH_PLACEHOLDER = 'x' + '.__path_hook__'\n"
            b"class _F:\n    @classmethod\n    def find_spec(cls, name, path=None, target=None):\n"
            b"        return Path(MAPPING[name]).exists() and None\n"
            b"def install():\n    sys.meta_path.append(_F)\n")
    assert guardpy.finder_ok(good)
    for bad in (good + b"import os\n", good + b"install()\n",
                good.replace(b"Path(MAPPING[name]).exists()", b"__import__('os').system('x')"),
                good.replace(b"sys.meta_path.append(_F)", b"sys.modules['os'].__dict__"),
                good.replace(b"{'p': '/w/p'}", b"open('/etc/passwd').read()")):
        assert not guardpy.finder_ok(bad), bad


def test_compiled_copy_must_be_the_source_beside_it(tmp_path: Path):
    src = tmp_path / "m.py"
    src.write_text("X = 1\n")
    pyc = Path(py_compile.compile(str(src), cfile=str(tmp_path / "m.pyc")))
    s = os.lstat(src)
    sig = (s.st_mode, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    assert guardpy.pyc_risky(pyc.read_bytes(), src.read_bytes(), sig) == ""
    other = tmp_path / "o.py"
    other.write_text("import os; os.system('x')\n")
    forged = py_compile.compile(str(other), cfile=str(tmp_path / "o.pyc"))
    body = Path(forged).read_bytes()
    header = pyc.read_bytes()[:16]  # the source's mtime and size: python would load this copy
    assert "compiled copy" in guardpy.pyc_risky(header + body[16:], src.read_bytes(), sig)
    stale = header[:8] + b"\0\0\0\0" + header[12:]  # another mtime: python compiles the source again
    assert guardpy.pyc_risky(stale + body[16:], src.read_bytes(), sig) == ""
