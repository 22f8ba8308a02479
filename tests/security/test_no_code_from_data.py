"""Issue 20: outside `pinlint/runtime/` (trace/probe run code by design), no module may import
a deserializer that builds arbitrary objects, or call eval/exec. Checked on the AST, so a
comment or a string mentioning them does not count and an aliased import does."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pinlint"
FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "_pickle", "cPickle", "dill", "cloudpickle"}
FORBIDDEN_CALLS = {"eval", "exec"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "runtime" not in p.relative_to(PACKAGE).parts)


def problems(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in FORBIDDEN_MODULES:
            found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in FORBIDDEN_CALLS:
                found.append(f"{name}() at line {node.lineno}")
            # importlib.import_module("pickle") / __import__("pickle")
            if (
                name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
            ) and str(node.args[0].value).split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{name}({node.args[0].value!r})")
    return found


def test_the_checker_catches_what_it_must() -> None:
    bad = "import pickle as p\nfrom marshal import loads\nimport shelve\nexec('1')\nbuiltins.eval('1')\n__import__('pickle')\n"
    assert len(problems(ast.parse(bad))) == 6
    assert problems(ast.parse("# import pickle\nx = 'eval(1)'\nimport json\n")) == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_runs_no_code_from_data(path: Path) -> None:
    assert problems(ast.parse(path.read_text(encoding="utf-8"))) == []
