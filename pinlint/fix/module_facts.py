"""What one module says about the project's pin-memory idiom: the helper's definition and
signature, how it is imported and called, what is passed as ``pin_memory=`` (read with ``ast``)."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import asdict, dataclass

from pinlint import torch_api
from pinlint.core.results import ModuleFacts
from pinlint.fix.scope import DEF, IMPORT, _is_dead_test, may_declare

NAME = torch_api.PIN_HELPER_NAME
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
#: Directories whose definitions lose to the package's own.
SECONDARY_DIRS = frozenset({"tests", "test", "benchmarks", "benchmark", "examples", "example", "scripts", "docs"})
_FACTS_VERSION = 2  # 2: conditional, decorated or rebound definitions are not the helper
_MAX_FILES = 50_000
#: A file worth reading for the idiom: it names the helper, or passes something other than a
#: literal as ``pin_memory=`` (literals teach nothing about the project's idiom).
_MENTION = re.compile(rb"is_pin_memory_available|pin_memory\s*=\s*(?!(?:True|False|None)\b)")


def mentions_idiom(data: bytes) -> bool:
    """The file may teach the project's pin-memory idiom (it names the helper or passes a
    non-literal ``pin_memory=``): a plain ``in`` test first (both spellings hold "pin_memory"),
    the regex only for the few files that pass it."""
    return b"pin_memory" in data and _MENTION.search(data) is not None


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


def module_facts(tree: ast.Module, own: str | None, is_package: bool, text: str | None = None) -> ModuleFacts:
    """The facts of one parsed module. ``text`` (its source) lets the walk skip the statements
    that cannot hold a helper call or a ``pin_memory=`` argument."""
    found = _Declarations(declares_global=text is None or may_declare(text))
    found.block(tree.body, in_function=False, dead=False, module_level=True, globals_=frozenset())
    facts = ModuleFacts()
    # Local names (in any scope) bound by a run-time import of the helper -> absolute module.
    helper_names: dict[str, str] = {}
    for local, raw, dead in found.helper_imports:
        module = absolute(raw, own, is_package)
        if module and not dead:
            facts.imports.append(module)
            helper_names[local] = module
    module_defs = [b for b in found.module if b.kind == DEF and b.name == NAME]
    for b in module_defs:
        if (
            not b.dead
            and not b.conditional
            and not _rebound_at_module_level(tree)
            and not _script(tree, own, is_package)
        ):
            node = b.node
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            # A decorator other than a cache may change what the helper takes (or is): its
            # signature is then unknown.
            signature = signature_of(node) if _transparently_decorated(node) else Signature("unknown")
            facts.definition = asdict(signature)
            helper_names.setdefault(NAME, own or "")
    # Imported names, for `pin_memory=PIN_MEMORY` (module-level imports only).
    imported_from: dict[str, str] = {}
    for b in found.module:
        if b.kind == IMPORT and not b.dead and b.imported:
            module = absolute(b.module, own, is_package)
            if module:
                imported_from[b.name] = module
    module_nodes = {id(b.node) for b in module_defs}
    for node in found.helper_defs:
        if id(node) not in module_nodes:
            first = (node.args.posonlyargs + node.args.args)[:1]
            method = bool(first) and first[0].arg in ("self", "cls")
            facts.methods.append(asdict(signature_of(node, method=method)))
    for node in _calls(tree, text, helper_names):
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
    for b in found.module:
        if b.kind == IMPORT and not b.dead and not b.via_global:
            module = absolute(b.module, own, is_package)
            if module:
                facts.module_imports.append(f"{module}.{b.imported}" if b.imported else module)
                if b.imported:
                    facts.module_imports.append(module)
    facts.module_imports = sorted(set(facts.module_imports))
    return facts


@dataclass(frozen=True)
class _Bound:
    """A module-scope binding by an import or a ``def`` (the only kinds the facts read)."""

    name: str
    kind: str
    module: str = ""
    imported: str = ""
    dead: bool = False
    via_global: bool = False
    node: ast.AST | None = None
    #: Inside a module-level `if`/`try`/`with`/loop: it may not exist when imported.
    conditional: bool = False


def _transparently_decorated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every decorator keeps the function's signature (``@functools.cache``, ``@lru_cache()``),
    as the analysis's summaries judge them (``torch_api.TRANSPARENT_DECORATORS``)."""
    for decorator in node.decorator_list:
        expression = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts: list[str] = []
        while isinstance(expression, ast.Attribute):
            parts.append(expression.attr)
            expression = expression.value
        if not isinstance(expression, ast.Name):
            return False
        if ".".join([expression.id, *reversed(parts)]) not in torch_api.TRANSPARENT_DECORATORS:
            return False
    return True


def _script(tree: ast.Module, own: str | None, is_package: bool) -> bool:
    """A top-level module (no package, nor a package's ``__init__``) that runs calls when
    imported (``print(...)``, ``main()``): a script, which an inserted import would run."""
    if is_package or own is not None and "." in own:
        return False
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)


def _rebound_at_module_level(tree: ast.Module) -> bool:
    """The module assigns or deletes the helper's name besides its ``def`` (``NAME = ...``,
    ``del NAME``, under an ``if``/``try`` too): what an import of it gets is not that function.
    Function and class bodies bind names of their own, unless a function declares it ``global``."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _FUNCTIONS) and NAME in _declared_global(node.body):
            return True
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            continue
        if isinstance(node, ast.stmt):
            stack.extend(child for body, _ in _bodies(node) for child in body)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id == NAME:
                    return True
    return False


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Declarations:
    """One walk over the statements (expressions are not entered): imports of the helper in any
    scope, the module scope's imports and defs, and every ``def`` of the helper's name. Python's
    scoping as far as these facts need it: a class body or a function binds its own names, unless
    the function declares them ``global``; a block under ``if TYPE_CHECKING:`` never runs."""

    def __init__(self, declares_global: bool) -> None:
        self.declares_global = declares_global
        self.helper_imports: list[tuple[str, str, bool]] = []  # local, module as written, dead
        self.module: list[_Bound] = []
        self.helper_defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.nested = 0  # compound statements (`if`, `try`...) around the current one

    def block(
        self, statements: list[ast.stmt], *, in_function: bool, dead: bool, module_level: bool, globals_: frozenset[str]
    ) -> None:
        for stmt in statements:
            self.statement(stmt, in_function=in_function, dead=dead, module_level=module_level, globals_=globals_)

    def _binds_module(self, name: str, module_level: bool, in_function: bool, globals_: frozenset[str]) -> bool:
        return module_level or in_function and name in globals_

    def statement(
        self, stmt: ast.stmt, *, in_function: bool, dead: bool, module_level: bool, globals_: frozenset[str]
    ) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                module = alias.name if alias.asname else alias.name.split(".", 1)[0]
                if self._binds_module(local, module_level, in_function, globals_):
                    self.module.append(_Bound(local, IMPORT, module, "", dead, not module_level))
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                if alias.name == NAME:
                    self.helper_imports.append((local, module, dead))
                if self._binds_module(local, module_level, in_function, globals_):
                    self.module.append(_Bound(local, IMPORT, module, alias.name, dead, not module_level))
        elif isinstance(stmt, _FUNCTIONS):
            if stmt.name == NAME:
                self.helper_defs.append(stmt)
            if self._binds_module(stmt.name, module_level, in_function, globals_):
                self.module.append(
                    _Bound(
                        stmt.name,
                        DEF,
                        dead=dead,
                        via_global=not module_level,
                        node=stmt,
                        conditional=self.nested > 0,
                    )
                )
            own = _declared_global(stmt.body) if self.declares_global else frozenset()
            self.block(stmt.body, in_function=True, dead=dead, module_level=False, globals_=own)
        elif isinstance(stmt, ast.ClassDef):
            # A class body's own scope: `global` is not followed there (as the fixer's scope model).
            self.block(stmt.body, in_function=False, dead=dead, module_level=False, globals_=frozenset())
        else:
            self.nested += 1
            for body, body_dead in _bodies(stmt):
                self.block(
                    body, in_function=in_function, dead=dead or body_dead, module_level=module_level, globals_=globals_
                )
            self.nested -= 1


def _bodies(stmt: ast.stmt) -> list[tuple[list[ast.stmt], bool]]:
    """The statement lists inside a compound statement, each with whether it never runs."""
    if isinstance(stmt, ast.If):
        return [(stmt.body, _is_dead_test(stmt.test)), (stmt.orelse, False)]
    out: list[tuple[list[ast.stmt], bool]] = []
    for attr in ("body", "orelse", "finalbody"):
        body = getattr(stmt, attr, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            out.append((body, False))
    for handler in getattr(stmt, "handlers", ()):
        out.append((handler.body, False))
    for case in getattr(stmt, "cases", ()):
        out.append((case.body, False))
    return out


def _declared_global(body: list[ast.stmt]) -> frozenset[str]:
    """Names a function declares ``global`` anywhere in its own body (not nested scopes)."""
    names: set[str] = set()
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Global):
            names.update(stmt.names)
        elif not isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
            for sub, _ in _bodies(stmt):
                stack.extend(sub)
    return frozenset(names)


#: Statements that hold statements (their headers are walked, their bodies visited one by one).
_COMPOUND = tuple(
    getattr(ast, name)
    for name in (
        "FunctionDef",
        "AsyncFunctionDef",
        "ClassDef",
        "If",
        "For",
        "AsyncFor",
        "While",
        "With",
        "AsyncWith",
        "Try",
        "TryStar",
        "Match",
    )
    if hasattr(ast, name)
)


def _calls(tree: ast.Module, text: str | None, helper_names: dict[str, str]) -> list[ast.Call]:
    """Every call that may name the helper or pass ``pin_memory=``. With the source, only the
    simple statements spanning a line that mentions one of them are walked (a call's name and
    keywords lie within its statement's lines); compound statements' headers always are."""
    if text is None:
        return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    needles = ("pin_memory", NAME, *helper_names)
    rows = [i for i, line in enumerate(text.splitlines(), 1) if any(n in line for n in needles)]
    if not rows:
        return []
    out: list[ast.Call] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            # A decorator is written above its `def` line.
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            i = bisect.bisect_left(rows, first)
            if i == len(rows) or rows[i] > (node.end_lineno or node.lineno):
                continue  # no line of it mentions the helper or `pin_memory`: no call of them inside
            if not isinstance(node, _COMPOUND):
                out.extend(n for n in ast.walk(node) if isinstance(n, ast.Call))
                continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                stack.append(child)
            else:
                out.extend(n for n in ast.walk(child) if isinstance(n, ast.Call))
    return out


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
