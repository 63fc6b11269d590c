"""The run-later guard's content verdicts (guardtools.py, guardpy.py) on the shapes tools really write: VS Code's
JSON with comments and trailing commas, npm's `key[]` arrays, a TOML file that does not parse, `.pth` lines
split where site.py splits them, and compiled copies made by py_compile next to their source."""

from __future__ import annotations

import ast
import importlib.util
import marshal
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
    from hermes_agent.terminal.sandbox.guardpyc import risky

    src = tmp_path / "m.py"
    src.write_text("X = 1\n")
    pyc = Path(py_compile.compile(str(src), cfile=str(tmp_path / "m.pyc")))
    s = os.lstat(src)
    sig = (s.st_mode, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns)
    name = "m.cpython-311.pyc"
    assert risky(name, pyc.read_bytes(), src.read_bytes(), sig) == ("", False)
    other = tmp_path / "o.py"
    other.write_text("import os; os.system('x')\n")
    forged = py_compile.compile(str(other), cfile=str(tmp_path / "o.pyc"))
    body = Path(forged).read_bytes()
    header = pyc.read_bytes()[:16]  # the source's mtime and size: python would load this copy
    assert "not what its source compiles to" in risky(name, header + body[16:], src.read_bytes(), sig)[0]
    assert risky("m.cpython-311.opt-1.pyc", header + body[16:], src.read_bytes(), sig)[1]
    stale = header[:8] + b"\0\0\0\0" + header[12:]  # another mtime: python compiles the source again
    assert risky(name, stale + body[16:], src.read_bytes(), sig) == ("", False)
    unchecked = header[:4] + b"\1\0\0\0" + b"\0" * 8  # hash-based, never checked: runs whatever the source
    assert risky(name, unchecked + body[16:], src.read_bytes(), sig)[1]
    assert risky(name, unchecked + body[16:], None, None)[1]
    checked = header[:4] + b"\3\0\0\0" + importlib.util.source_hash(src.read_bytes())
    assert risky(name, checked + body[16:], src.read_bytes(), sig)[1]  # the source's hash: python would use it
    assert risky(name, checked + pyc.read_bytes()[16:], src.read_bytes(), sig) == ("", False)
    assert risky(name, header + body[16:], None, None) == ("", False)  # no source: python ignores the copy
    assert risky("m.pyc", body, None, None, cached=False)[1]  # sourceless: imported as the module
    assert risky("m.pyc", body, b"X = 1\n", sig, cached=False) == ("", False)  # the source wins
    assert risky("m.cpython-311-pytest-0.0.1.pyc", header + body[16:], src.read_bytes(), sig)[0]  # unverifiable


def test_pytests_rewritten_copy_is_compared_with_its_rewrite(tmp_path: Path):
    from _pytest.assertion import rewrite

    from hermes_agent.terminal.sandbox.guardpyc import risky

    source = b"def test_a():\n    x = 1\n    assert x == 1\n"
    tree = ast.parse(source)
    rewrite.rewrite_asserts(tree, source, None, None)
    good = compile(tree, "t.py", "exec", dont_inherit=True)
    header = importlib.util.MAGIC_NUMBER + b"\3\0\0\0" + importlib.util.source_hash(source)
    name = f"t.{rewrite.PYTEST_TAG}.pyc"
    assert risky(name, header + marshal.dumps(good), source, (0, 0, 0, 0, 0)) == ("", False)
    evil = compile("import os\n" + source.decode(), "t.py", "exec")
    assert risky(name, header + marshal.dumps(evil), source, (0, 0, 0, 0, 0))[1]


def test_npmrc_keys_as_npms_ini_reads_them():
    from hermes_agent.terminal.sandbox import guardtools as gt

    for line in (b'"node-options" = "--require ./x.js"\n', b"'script-shell'=/tmp/sh\n", b"NODE_OPTIONS=--x\n",
                 b'node-options = "--require ./x.js" ; comment\n', b"node-options\n"):
        assert gt.risky(".npmrc", None, line, _never), line
    assert gt.risky(".npmrc", None, b"'fund' = false\n\"save-exact\"=true\n", _never) == ""
    assert "does not parse" in gt.risky(".npmrc", None, b"${X}-options=--x\n", _never)  # npm expands it


def test_console_scripts_by_the_installers_shape(tmp_path: Path):
    from hermes_agent.terminal.sandbox import runlater

    venv = str(tmp_path / "v")

    def writable(path: str) -> bool:
        return path.startswith(str(tmp_path))

    pip = (f"#!{venv}/bin/python3\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom pip._internal.cli.main "
           "import main\nif __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', "
           "sys.argv[0])\n    sys.exit(main())\n")
    uv = (f"#!{venv}/bin/python3\nimport sys\nfrom _pytest.config import _console_main\nif __name__ == '__main__':\n"
          "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit(_console_main())\n")
    long_path = (f"#!/bin/sh\n'''exec' '{venv}/bin/python' \"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\nimport sys\n"
                 "from black import patched_main\nif __name__ == \"__main__\":\n    if sys.argv[0].endswith(\"-script.pyw\"):"
                 "\n        sys.argv[0] = sys.argv[0][:-11]\n    sys.exit(patched_main())\n")
    for good in (pip, uv, long_path):
        assert runlater.bin_risky(venv, "tool", good.encode(), writable) == "", good
    bad = (pip.replace("sys.exit(main())", "import os; os.system('x'); sys.exit(main())"),
           pip.replace(f"#!{venv}/bin/python3", f"#!{tmp_path}/evil"), "#!/bin/sh\ntouch x\n",
           pip.replace("sys.exit(main())", "sys.exit(main(__import__('os').system('x')))"), "\x7fELF\x02")
    for script in bad:
        assert "console script" in runlater.bin_risky(venv, "tool", script.encode(), writable), script


def test_activate_only_as_the_base_pythons_template_renders_it(tmp_path: Path):
    import shlex
    import subprocess
    import sys

    from hermes_agent.terminal.sandbox import runlater

    venv = tmp_path / "odd name.env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)

    def writable(path: str) -> bool:
        return path.startswith(str(tmp_path))

    for name in ("activate", "activate.fish", "activate.csh", "Activate.ps1"):
        data = (venv / "bin" / name).read_bytes()
        assert runlater.bin_risky(str(venv), name, data, writable) == "", name
        assert runlater.bin_risky(str(venv), name, data + b"\ntouch /tmp/x\n", writable), name
    # the venv's path as a command substitution, whether the template quotes it with shlex.quote (CPython
    # 3.11.2-3.11.3, Debian's) or within double quotes (3.11.4 on)
    data = (venv / "bin/activate").read_bytes()
    bad = data.replace(shlex.quote(str(venv)).encode(), b"/x$(touch /tmp/y)").replace(str(venv).encode(),
                                                                                       b"/x$(touch /tmp/y)")
    assert bad != data and runlater.bin_risky(str(venv), "activate", bad, writable)


def test_package_scripts_hooks_reach():
    from hermes_agent.terminal.sandbox import runlater

    keys = runlater.hook_scripts([b"#!/bin/sh\nnpm test\nnpx lint-staged\nyarn lint && pnpm run build:prod\n"])
    assert {"scripts.test", "scripts.pretest", "scripts.lint", "scripts.build:prod", "lint-staged"} <= keys
    assert "scripts.install" not in keys and "scripts.*" not in keys
    assert runlater.hook_scripts([b'npm run "$TARGET"\n']) == {"scripts.*"}
    assert "scripts.postinstall" in runlater.hook_scripts([b"npm ci\n"])
    old = b'{"scripts": {"test": "jest", "dev": "vite"}}'
    assert "scripts.test" in runlater.pkg_risky({"scripts.test"}, old, old.replace(b"jest", b"jest; curl x|sh"))
    assert runlater.pkg_risky({"scripts.test"}, old, old.replace(b"vite", b"vite --host")) == ""
    assert "does not parse" in runlater.pkg_risky({"scripts.test"}, old, b"{")


def test_vscode_settings_are_judged_by_value_whatever_the_key(tmp_path):
    """rt9 a09: a string anywhere in a setting that leads into the workspace or a writable place is dangerous."""
    import json

    def risky(settings: dict) -> str:
        return guardtools.risky(".vscode/settings.json", None, json.dumps(settings).encode(),
                                lambda p: p.startswith(str(tmp_path)), str(tmp_path))

    (tmp_path / "gobin").write_text("#!/bin/sh\n")
    for bad in ({"go.alternateTools": {"go": "${workspaceFolder}/.bin/go"}}, {"go.goroot": "${env:HOME}/x"},
                {"some.ext.tool": ".bin/tool"}, {"some.ext.tool": "../other/tool"}, {"some.ext.tool": "~/x"},
                {"some.ext.list": ["ok", f"{tmp_path}/x"]}, {"some.ext.tool": "gobin"},
                {"security.workspace.trust.enabled": False}):
        assert "VS Code" in risky(bad), bad
    for fine in ({"editor.fontFamily": "Fira/Code"}, {"some.ext.tool": "/usr/bin/tool"}, {"some.ext.tool": "tool"},
                 {"some.ext.flag": True}, {"json.schemas": [{"url": "https://example.com/s.json"}]},
                 {"files.exclude": {"**/x": True}}, {"python.analysis.extraPaths": ["${workspaceFolder}/src"]}):
        assert risky(fine) == "", fine
