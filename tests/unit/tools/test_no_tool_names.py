"""Tools are known by their registry traits only: no built-in tool name may appear in a string literal
of the executor, the approval gate, delegation or the renderers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import hermes_agent
from hermes_agent.tools.registry import discover_builtin_tools, registry

SRC = Path(hermes_agent.__file__).parent
MODULES = ["core/executor.py", "approval/gate.py", "bootstrap/delegation.py", "cli/render.py", "cli/live.py"]


def builtin_tool_names() -> set[str]:
    discover_builtin_tools()
    return {e.name for e in registry.entries() if (e.handler.__module__ or "").startswith("hermes_agent.tools.builtin")}


def string_literals(source: str) -> list[str]:
    """Every str constant except docstrings (prose may mention a tool; code must not test for one)."""
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_the_builtin_tools_are_found():
    assert {"terminal", "process", "write_file", "patch", "memory", "todo", "clarify", "delegate_task",
            "session_search", "read_file"} <= builtin_tool_names()


@pytest.mark.parametrize("module", MODULES)
def test_no_builtin_tool_name_in_string_literals(module):
    names = builtin_tool_names()
    found = {(name, text[:60]) for text in string_literals((SRC / module).read_text())
             for name in names if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text)}
    assert not found, f"{module} names tools (use a registry trait instead): {sorted(found)}"


def test_the_check_catches_a_name():
    names = builtin_tool_names()
    hits = [t for t in string_literals('x = "terminal"\nif name in ("write_file", "y"): pass') if t in names]
    assert hits == ["terminal", "write_file"]
