"""What one module says about the project's pin-memory idiom: the helper's definition and
signature, how it is imported and called, what is passed as ``pin_memory=`` (read with ``ast``)."""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field

from pinlint import torch_api
from pinlint.fix.scope import DEF, IMPORT, FileScopes

NAME = torch_api.PIN_HELPER_NAME
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
#: Directories whose definitions lose to the package's own.
SECONDARY_DIRS = frozenset({"tests", "test", "benchmarks", "benchmark", "examples", "example", "scripts", "docs"})
_FACTS_VERSION = 1
_MAX_FILES = 50_000
#: A file worth reading for the idiom: it names the helper, or passes something other than a
#: literal as ``pin_memory=`` (literals teach nothing about the project's idiom).
_MENTION = re.compile(rb"is_pin_memory_available|pin_memory\s*=\s*(?!(?:True|False|None)\b)")


@dataclass(frozen=True)
class Signature:
    """How the helper is called: ``style`` is "noarg", "positional", "keyword" (``keyword=``),
    "unusable" (``reason`` says why) or "unknown"."""

    style: str
    keyword: str = ""
    reason: str = ""


def signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool = False) -> Signature:
    """The helper's arguments from its definition (``self``/``cls`` dropped for methods)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if method and positional:
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    if method:
        required = max(0, min(required, len(positional)))
    kwonly = [(a.arg, d is None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    required_kw = [name for name, req in kwonly if req]
    name = node.name
    if required > 1 or required_kw and (required or len(required_kw) > 1):
        count = required + len(required_kw)
        return Signature("unusable", reason=f"`{name}` needs {count} arguments; pinlint only knows the device")
    if required == 1:
        return Signature("positional")
    if required_kw:
        return Signature("keyword", required_kw[0])
    if positional:
        return Signature("positional")  # `(device=None)`: the project means it to get the device
    device_kw = [n for n, _ in kwonly if "dev" in n.lower()]
    if device_kw:
        return Signature("keyword", device_kw[0])
    return Signature("noarg")


def call_style(call: ast.Call) -> str:
    """``noarg``, ``positional``, ``keyword:<name>`` or ``multi``."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "multi"
    n = len(call.args) + len(call.keywords)
    if n == 0:
        return "noarg"
    if n > 1:
        return "multi"
    return "positional" if call.args else f"keyword:{call.keywords[0].arg}"


def signature_from_calls(styles: list[str], name: str) -> Signature | None:
    """What calls of the helper say about its arguments; None when there are none."""
    if not styles:
        return None
    if "positional" in styles:
        return Signature("positional")
    keywords = sorted({s.split(":", 1)[1] for s in styles if s.startswith("keyword:")})
    if len(keywords) == 1:
        return Signature("keyword", keywords[0])
    if "noarg" in styles:
        return Signature("noarg")
    return Signature(
        "unusable",
        reason=f"`{name}` is called here with several arguments; pinlint only knows the device",
    )


@dataclass
class ModuleFacts:
    """What one file says about the idiom (plain data: it goes into the JSON cache)."""

    #: Module-level ``def is_pin_memory_available``: its signature.
    definition: dict[str, str] | None = None
    #: Signatures of methods named ``is_pin_memory_available``.
    methods: list[dict[str, str]] = field(default_factory=list)
    #: Absolute modules the helper is imported from (one entry per import).
    imports: list[str] = field(default_factory=list)
    #: [module the called name comes from ("" unknown), call style] for each call of the helper.
    calls: list[list[str]] = field(default_factory=list)
    #: What is passed as ``pin_memory=``: "helper", "const:<NAME>:<module>" ("" module = here),
    #: "self:<attr>", "other" -> count.
    pin_values: dict[str, int] = field(default_factory=dict)
    #: Module-level names assigned from a helper call (``PIN_MEMORY = is_pin_memory_available()``).
    constants: list[str] = field(default_factory=list)
    #: Absolute modules imported at module level at run time.
    module_imports: list[str] = field(default_factory=list)


def absolute(module: str, own: str | None, is_package: bool) -> str | None:
    """``from .x import y`` in module ``own`` -> ``pkg.x``."""
    if not module.startswith("."):
        return module
    if own is None:
        return None
    level = len(module) - len(module.lstrip("."))
    parts = own.split(".")
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = module.lstrip(".")
    return ".".join([*base, rest] if rest else base) or None


def module_facts(tree: ast.Module, own: str | None, is_package: bool, scopes: FileScopes | None = None) -> ModuleFacts:
    scopes = scopes or FileScopes(tree)
    facts = ModuleFacts()
    # Local names (anywhere in the file) bound by an import of the helper -> absolute module.
    helper_names: dict[str, str] = {}
    for scope in _all_scopes(scopes):
        for local, bindings in scope.bindings.items():
            for b in bindings:
                if b.kind == IMPORT and b.imported == NAME and not b.dead:
                    module = absolute(b.module, own, is_package)
                    if module:
                        facts.imports.append(module)
                        helper_names[local] = module
    for b in scopes.module.bindings.get(NAME, []):
        if b.kind == DEF and isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not b.dead:
            facts.definition = asdict(signature_of(b.node))
            helper_names.setdefault(NAME, own or "")
    # Imported names, for `pin_memory=PIN_MEMORY` (module-level imports only).
    imported_from: dict[str, str] = {}
    for local, bindings in scopes.module.bindings.items():
        for b in bindings:
            if b.kind == IMPORT and not b.dead and b.imported:
                module = absolute(b.module, own, is_package)
                if module:
                    imported_from[local] = module
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == NAME:
            if not any(node is b.node for b in scopes.module.bindings.get(NAME, [])):
                first = (node.args.posonlyargs + node.args.args)[:1]
                method = bool(first) and first[0].arg in ("self", "cls")
                facts.methods.append(asdict(signature_of(node, method=method)))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in helper_names:
                facts.calls.append([helper_names[func.id], call_style(node)])
            elif isinstance(func, ast.Attribute) and func.attr == NAME:
                facts.calls.append(["", call_style(node)])
            for kw in node.keywords:
                if kw.arg == "pin_memory":
                    kind = _pin_value_kind(kw.value, helper_names, imported_from)
                    facts.pin_values[kind] = facts.pin_values.get(kind, 0) + 1
    for stmt in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        if value is not None and _is_helper_call(value, helper_names):
            facts.constants.extend(t.id for t in targets if isinstance(t, ast.Name))
    for _local, bindings in scopes.module.bindings.items():
        for b in bindings:
            if b.kind == IMPORT and not b.dead and not b.via_global:
                module = absolute(b.module, own, is_package)
                if module:
                    facts.module_imports.append(f"{module}.{b.imported}" if b.imported else module)
                    if b.imported:
                        facts.module_imports.append(module)
    facts.module_imports = sorted(set(facts.module_imports))
    return facts


def _all_scopes(scopes: FileScopes):  # type: ignore[no-untyped-def]
    stack = [scopes.module]
    while stack:
        scope = stack.pop()
        yield scope
        stack.extend(scope.children)


def _is_helper_call(value: ast.expr, helper_names: dict[str, str]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return (
        isinstance(func, ast.Name) and func.id in helper_names or isinstance(func, ast.Attribute) and func.attr == NAME
    )


def _pin_value_kind(value: ast.expr, helper_names: dict[str, str], imported_from: dict[str, str]) -> str:
    if _is_helper_call(value, helper_names):
        return "helper"
    if isinstance(value, ast.Name) and value.id.isupper():
        return f"const:{value.id}:{imported_from.get(value.id, '')}"
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return f"self:{value.attr}"
    return "other"


# -- the project -------------------------------------------------------------------------------
