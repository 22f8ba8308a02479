"""The layout's promises: a rule is one module, one TOML and one registry line (the worked
example of docs/architecture.md, run as written); every TOML has a rule and every rule a TOML;
no import cycles between pinlint's modules."""

from __future__ import annotations

import ast
import re
import shutil
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

import pinlint
from pinlint import catalog
from pinlint import rules as registry
from pinlint.analysis import triage

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(pinlint.__file__).resolve().parent
DOC = ROOT / "docs" / "architecture.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def example_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The documented PIN900, installed the way the page says: its module, its TOML, one line."""
    code = next(b for b in _blocks("python") if b.startswith("# pinlint/rules/pin900"))
    toml = next(b for b in _blocks("toml") if 'code = "PIN900"' in b)
    module = types.ModuleType("pinlint.rules.pin900_cuda_method_copy")
    exec(compile(code, "pin900_cuda_method_copy.py", "exec"), module.__dict__)  # the page's own code
    monkeypatch.setitem(sys.modules, module.__name__, module)
    rules_dir = tmp_path / "rules"
    shutil.copytree(catalog.RULES_DIR, rules_dir, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (rules_dir / "PIN900.toml").write_text(toml, encoding="utf-8")
    monkeypatch.setattr(catalog, "RULES_DIR", rules_dir)
    monkeypatch.setattr(registry, "RULES", (*registry.RULES, module.CudaMethodCopy()))
    for cached in (catalog.all_rules, registry.select, triage.compile_triggers):
        cached.cache_clear()
    yield
    for cached in (catalog.all_rules, registry.select, triage.compile_triggers):
        cached.cache_clear()


def test_a_rule_defined_only_in_its_module_and_toml_is_documented_selected_and_run(
    example_rule: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pinlint.cli import main

    doc = catalog.get_rule("PIN900")
    assert doc is not None and doc.name == "cuda-method-copy"
    assert "return torch.zeros(4).cuda(non_blocking=True)" in doc.to_markdown()  # documented

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.pinlint]\n")
    (project / "bad.py").write_text(doc.bad_examples[0].code)
    (project / "good.py").write_text(doc.good_examples[0].code)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["check", ".", "--select", "PIN900", "--no-cache", "--output-format", "concise"])
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[0] == (
        "bad.py:4:12: PIN900 `torch.zeros(...)` is pageable and reaches `.cuda(non_blocking=True)` on the same line"
    )
    assert "good.py" not in result.output
    # Off by default, as its TOML says: the default selection does not run it.
    default = CliRunner().invoke(main, ["check", "bad.py", "--no-cache", "--output-format", "concise"])
    assert "PIN900" not in default.output


def test_every_toml_has_a_rule_and_every_rule_a_toml() -> None:
    tomls = {p.stem for p in catalog.RULES_DIR.glob("PIN*.toml")}
    classes = {rule.code for rule in registry.RULES}
    assert tomls == classes
    for rule in registry.RULES:
        module = type(rule).__module__.rsplit(".", 1)[-1]
        name = catalog.get_rule(rule.code).name  # type: ignore[union-attr]
        assert module == f"{rule.code.lower()}_{name.replace('-', '_')}", module  # named after the rule


def _module_imports(path: Path, name: str) -> set[str]:
    """Modules of pinlint imported at module level (not under TYPE_CHECKING, not in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in [node] if not isinstance(node, (ast.If, ast.Try)) else ast.walk(node):
            if isinstance(sub, ast.Import):
                found |= {a.name for a in sub.names if a.name.startswith("pinlint")}
            elif isinstance(sub, ast.ImportFrom):
                if sub.level:
                    base = package.split(".")[: len(package.split(".")) - sub.level + 1]
                    module = ".".join(base + ([sub.module] if sub.module else []))
                else:
                    module = sub.module or ""
                if module.startswith("pinlint"):
                    found.add(module)
                    found |= {f"{module}.{a.name}" for a in sub.names}
    return found


def test_no_import_cycles() -> None:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {
        name: {m for m in _module_imports(path, name) if m in modules and m != name} for name, path in modules.items()
    }
    # A package's __init__ importing its own submodules is not a cycle through the package.
    seen: set[str] = set()
    stack: list[str] = []

    def visit(node: str) -> None:
        if node in stack:
            cycle = stack[stack.index(node) :] + [node]
            raise AssertionError(" -> ".join(cycle))
        if node in seen:
            return
        stack.append(node)
        for target in sorted(graph[node]):
            if not (node.startswith(target + ".") or target.startswith(node + ".")):
                visit(target)
        stack.pop()
        seen.add(node)

    for name in sorted(graph):
        visit(name)
