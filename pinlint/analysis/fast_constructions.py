"""The fast path for device constructions (PIN003): Python's ``ast``, no libcst, no flow analysis.

A device construction (``torch.tensor(data, device=d)``) needs only its data and device
expressions classified. In a function that no other selected rule needs, this module parses the
function with ``ast`` (about 10x faster than libcst) and classifies those two expressions with
the interpreter's own rules, restricted to what needs no flow analysis: literals, builtins,
methods with known results, names and attribute chains *not bound in the function* (those are
unknown to the interpreter too). Whenever the interpreter could know more than this (a data
expression that mentions a local binding, a torch call, a shadowed torch name, a parenthesized
device expression whose text libcst would keep), ``fast_constructions`` returns ``None`` and the
caller runs the full analysis on that function instead. The results are meant to be identical
to the slow path; ``tests/analysis/test_fast_constructions.py`` checks that on every fixture and
``benchmarks/fast_path_equivalence.py`` on the real corpora.
"""

from __future__ import annotations

import ast

from pinlint import torch_api
from pinlint.analysis.events import ConstructionSite
from pinlint.analysis.names import FileNames
from pinlint.analysis.triage import Segment
from pinlint.analysis.values import (
    DTYPE,
    NUMPY,
    PINNED,
    PYDATA,
    TRUE,
    UNKNOWN,
    Kind,
    Value,
    combine,
    construction_data,
    derived,
    is_host,
    is_pydata,
    kinds,
    only,
    pageable,
)
from pinlint.core.diagnostics import Location

_DATA_FACTORIES = frozenset({"tensor"}) | torch_api.UNPINNABLE_DATA_FACTORIES
#: Methods whose value depends on the receiver's (views, copies, casts, ``.cpu()``).
_RECEIVER_METHODS = (
    torch_api.VIEW_METHODS
    | torch_api.NEW_TENSOR_METHODS
    | torch_api.TO_HOST_METHODS
    | torch_api.PINNABLE_NEW_METHODS
    | {torch_api.COPY_METHOD, torch_api.TO_METHOD, torch_api.CUDA_METHOD}
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Defer(Exception):
    """The full analysis could know more than this path: analyse the function with libcst."""


def dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
#: A name bound once, by something the interpreter binds to an unknown value.
_UNKNOWN, _TRUE, _ASSIGN, _COMPLEX = "unknown", "true", "assign", "complex"


class _Scope:
    """What one function binds itself (nested functions, classes, lambdas and comprehensions
    are scopes of their own), and how: the interpreter's environment starts empty."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.own: dict[str, str] = {}
        self.attributes: set[str] = set()
        self.tested: set[str] = set()
        self.imports_torch = False
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(
            args.defaults
        )
        for arg, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
            true = isinstance(default, ast.Constant) and default.value is True
            self.bind(arg.arg, _TRUE if true else _UNKNOWN)
        for star in (args.vararg, args.kwarg):
            if star is not None:
                self.bind(star.arg, _UNKNOWN)
        self._walk(fn.body)

    def bind(self, name: str, kind: str) -> None:
        self.own[name] = _COMPLEX if name in self.own else kind

    def _walk(self, body: list[ast.stmt]) -> None:
        special: dict[int, str] = {}
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bind(node.name, _UNKNOWN)
                continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, _COMPREHENSIONS):
                # Their targets are theirs; a walrus inside still binds here.
                for generator in node.generators:
                    stack.append(generator.iter)
                    stack.extend(generator.ifs)
                if isinstance(node, ast.DictComp):
                    stack.extend((node.key, node.value))
                else:
                    stack.append(node.elt)
                continue
            if isinstance(node, ast.Name):
                if not isinstance(node.ctx, ast.Load):
                    self.bind(node.id, special.get(id(node), _COMPLEX))
                continue
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in _target_names(target):
                        special[id(name)] = _ASSIGN
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                for name in _target_names(node.target):
                    special[id(name)] = _UNKNOWN
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        for name in _target_names(item.optional_vars):
                            special[id(name)] = _UNKNOWN
            elif isinstance(node, (ast.If, ast.While)):
                # What `if x.is_cuda:` makes the interpreter forget (a superset of it).
                for n in ast.walk(node.test):
                    if isinstance(n, ast.Attribute) and n.attr in torch_api.DEVICE_TEST_ATTRIBUTES:
                        key = dotted(n.value)
                        if key:
                            self.tested.add(key)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for alias in node.names:
                    root = (module or alias.name).split(".", 1)[0]
                    self.imports_torch = self.imports_torch or root == "torch"
                    self.bind((alias.asname or alias.name).split(".", 1)[0], _UNKNOWN)
                continue
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bind(node.name, _UNKNOWN)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    self.bind(name, _COMPLEX)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                self.bind(node.name, _COMPLEX)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                self.bind(node.rest, _COMPLEX)
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                key = dotted(node)
                if key:
                    self.attributes.add(key)
            stack.extend(ast.iter_child_nodes(node))


def _target_names(target: ast.expr) -> list[ast.Name]:
    """The names of a plain target (``x``, ``a, b``); nested or starred targets are not plain."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e for e in target.elts if isinstance(e, ast.Name)]
    return []


class _Classifier:
    """The interpreter's value of an expression, for expressions that need no flow analysis."""

    def __init__(self, names: FileNames, scope: _Scope) -> None:
        self.names = names
        self.scope = scope
        #: Names whose only binding, an assignment, dominates the statements being walked.
        self.resolved: dict[str, Value | None] = {}

    def name(self, node: ast.Name) -> Value:
        kind = self.scope.own.get(node.id)
        if kind is None:
            return DTYPE if self.is_dtype_attribute(node) else UNKNOWN  # a global or builtin
        if node.id in self.scope.tested:
            raise _Defer  # an `if` that tests it may make the interpreter forget its value
        if node.id in self.resolved:
            value = self.resolved[node.id]
            if value is None:
                raise _Defer
            return value
        if kind == _TRUE:
            return TRUE
        if kind == _UNKNOWN:
            return UNKNOWN  # a parameter, loop item, `with` target, import: unknown provenance
        raise _Defer  # bound on some paths, or more than once: the flow decides

    def torch_function(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name):
            return self.names.torch_functions.get(func.id)
        is_module_attribute = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        if is_module_attribute and func.value.id in self.names.torch_modules:  # type: ignore[union-attr]
            return func.attr  # type: ignore[union-attr]
        return None

    def is_numpy_call(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return self.names.numpy_functions.get(func.id) in torch_api.NUMPY_ARRAY_FUNCTIONS
        if isinstance(func, ast.Attribute):
            root = dotted(func)
            if root and root.split(".", 1)[0] in self.names.numpy_modules:
                return func.attr in torch_api.NUMPY_ARRAY_FUNCTIONS
        return False

    def is_dtype_attribute(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return node.value.id in self.names.torch_modules and node.attr in torch_api.DTYPES
        if isinstance(node, ast.Name):
            return self.names.torch_functions.get(node.id) in torch_api.DTYPES
        return False

    def value(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            if node.value is True:
                return TRUE
            if node.value is None or node.value is False:
                return PYDATA
            if isinstance(node.value, (int, float, complex)):
                return PYDATA
            return UNKNOWN  # strings, bytes, Ellipsis
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            key = dotted(node)
            if key is not None and key in self.scope.attributes:
                raise _Defer  # an attribute chain assigned in this function
            if self.is_dtype_attribute(node):
                return DTYPE
            # The attribute's value does not depend on the receiver's (the interpreter
            # evaluates it only for the copies it may hold).
            return PYDATA if node.attr in torch_api.PYTHON_NUMBER_ATTRIBUTES else UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp)):
            return PYDATA
        if isinstance(node, ast.Subscript):
            base = self.value(node.value)
            if (
                isinstance(node.value, ast.Attribute)
                and node.value.attr in torch_api.PYTHON_NUMBER_ATTRIBUTES
            ):
                return base
            if is_pydata(base):
                return UNKNOWN
            # A view keeps the base's value, a copying index derives from it: the data class
            # (what PIN003 reads) is the same either way.
            return base if not is_host(base) else derived(base, node, "an indexing result")
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            if is_pydata(left) and is_pydata(right):
                return PYDATA
            return combine([left, right], node, "an arithmetic result")
        if isinstance(node, ast.Compare):
            values = [self.value(node.left)] + [self.value(c) for c in node.comparators]
            if all(is_pydata(v) for v in values):
                return PYDATA
            return combine(values, node, "a comparison result")
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            return PYDATA if is_pydata(operand) else derived(operand, node, "an arithmetic result")
        if isinstance(node, ast.IfExp):
            return self.value(node.body) | self.value(node.orelse)
        if isinstance(node, ast.NamedExpr):
            raise _Defer  # a binding inside the data expression
        if isinstance(node, ast.Call):
            return self.call(node)
        return UNKNOWN  # dicts, generators, f-strings, lambdas, awaits: no tensor we know

    def call(self, call: ast.Call) -> Value:
        func = call.func
        if self.torch_function(func) is not None:
            raise _Defer  # torch's own semantics: the full table of handlers
        taught = dotted(func)
        if taught is not None and (
            taught in self.names.pinned_functions or taught in self.names.host_functions
        ):
            raise _Defer
        if self.is_numpy_call(func):
            return NUMPY
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method in torch_api.PYTHON_DATA_METHODS or method in torch_api.PYTHON_NUMBER_METHODS:
                return PYDATA
            if method == "numpy":
                return NUMPY
            if method == torch_api.PIN_METHOD:
                return PINNED
            if method not in _RECEIVER_METHODS:
                return UNKNOWN  # not a tensor method: unknown provenance, whatever the receiver
            receiver = self.value(func.value)
            if method in torch_api.VIEW_METHODS or method == torch_api.COPY_METHOD:
                return receiver
            if method in torch_api.NEW_TENSOR_METHODS:
                return derived(receiver, call, f".{method}()")
            if method in torch_api.TO_HOST_METHODS:
                if only(receiver, Kind.PINNED):
                    return receiver
                if not receiver or kinds(receiver) <= {Kind.PYDATA, Kind.NUMPY}:
                    return UNKNOWN
                return pageable(call, pinnable=False, what=".cpu()")
            if (
                method in (torch_api.TO_METHOD, torch_api.CUDA_METHOD)
                or method in torch_api.PINNABLE_NEW_METHODS
            ):
                raise _Defer  # copies and allocations: the full table of handlers
            return UNKNOWN
        if isinstance(func, ast.Name):
            if func.id in self.scope.own:
                return UNKNOWN  # a local callable: not the builtin
            if func.id in torch_api.PYTHON_DATA_BUILTINS:
                return PYDATA
            return UNKNOWN
        return UNKNOWN


def classify_device(node: ast.expr, torch_function) -> str:  # type: ignore[no-untyped-def]
    """``analysis.devices.classify_device`` on ``ast``: "host", "accelerator", "other", "unknown"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        lowered = node.value.strip().lower()
        if lowered.startswith(torch_api.HOST_DEVICE_PREFIXES):
            return "host"
        if lowered.startswith(torch_api.ACCELERATOR_DEVICE_PREFIXES):
            return "accelerator"
        return "other"
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            lowered = first.value.strip().lower()
            if lowered.startswith(torch_api.HOST_DEVICE_PREFIXES):
                return "host"
            if lowered.startswith(torch_api.ACCELERATOR_DEVICE_PREFIXES):
                return "accelerator"
        return "unknown"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return "accelerator"
    if isinstance(node, ast.Call) and torch_function(node.func) == "device":
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if args and len(args) == len(node.args):
            return classify_device(args[0], torch_function)
        if node.args:
            raise _Defer  # `torch.device(*spec)`
        kw = next((k.value for k in node.keywords if k.arg == "type"), None)
        return classify_device(kw, torch_function) if kw is not None else "unknown"
    return "unknown"


class _Columns:
    """Maps ``ast`` positions in a dedented segment to the file's rows and character columns,
    exactly as ``analysis.positions.Positions`` maps libcst's."""

    def __init__(self, segment: Segment, lines: list[str], source_lines: list[str]) -> None:
        self.row_offset = 0 if segment.whole_file else segment.start
        self.indent = len(segment.indent)
        self.lines = lines
        self.source_lines = source_lines

    def location(self, lineno: int, byte_col: int) -> Location:
        line = self.source_lines[lineno - 1] if lineno <= len(self.source_lines) else ""
        column = (
            byte_col
            if line.isascii()
            else len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
        )
        row = lineno + self.row_offset
        text = self.lines[row - 1] if 0 < row <= len(self.lines) else ""
        dedented = bool(self.indent) and bool(text.strip()) and not text.lstrip().startswith("#")
        return Location(row, column + (self.indent if dedented else 0) + 1)

    def start(self, node: ast.AST) -> Location:
        return self.location(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> Location:
        return self.location(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def text(self, node: ast.AST) -> str:
        """The node's source text (``ast.get_source_segment`` on the segment's lines)."""
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if first == last:
            return self.source_lines[first].encode()[start:end].decode()
        parts = [self.source_lines[first].encode()[start:].decode()]
        parts.extend(self.source_lines[first + 1 : last])
        parts.append(self.source_lines[last].encode()[:end].decode())
        return "".join(parts)


def fast_constructions(
    source: str, segment: Segment, lines: list[str], names: FileNames
) -> list[ConstructionSite] | None:
    """The device constructions of the functions in ``source`` (one segment), or None when the
    full analysis is needed (a syntax error included: the slow path reports it)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    source_lines = source.splitlines(keepends=True)
    columns = _Columns(segment, lines, source_lines)
    sites: list[ConstructionSite] = []
    try:
        for node in tree.body:
            _scope_statements(node, names, columns, sites, top=True)
    except (_Defer, RecursionError):
        return None
    return sites


def _scope_statements(
    node: ast.stmt, names: FileNames, columns: _Columns, sites: list[ConstructionSite], *, top: bool
) -> None:
    """Walk a def (a scope of its own) or a class (whose methods are scopes; its body is not)."""
    if isinstance(node, ast.ClassDef):
        for child in node.body:
            _scope_statements(child, names, columns, sites, top=False)
        return
    if not isinstance(node, _SCOPES):
        if top:
            raise _Defer  # the segment is not one function: let the slow path decide
        return
    if not _has_construction(node, names):
        return  # nothing to report in this scope (nested scopes included)
    scope = _Scope(node)
    if scope.imports_torch or scope.own.keys() & (
        names.torch_modules | names.torch_functions.keys()
    ):
        raise _Defer  # torch shadowed or imported locally: the scope's own names decide
    _Walker(_Classifier(names, scope), columns, sites, names).block(node.body)


def _has_construction(node: ast.AST, names: FileNames) -> bool:
    """A call of a torch data factory with ``device=`` somewhere below ``node``."""
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and any(k.arg == "device" for k in child.keywords):
            func = child.func
            if isinstance(func, ast.Attribute):
                if func.attr in _DATA_FACTORIES:
                    return True
            elif (
                isinstance(func, ast.Name) and names.torch_functions.get(func.id) in _DATA_FACTORIES
            ):
                return True
    return False


class _Walker:
    """The statements of one scope, with what the interpreter records as each call's statement."""

    def __init__(
        self,
        classifier: _Classifier,
        columns: _Columns,
        sites: list[ConstructionSite],
        names: FileNames,
    ):
        self.classifier = classifier
        self.columns = columns
        self.sites = sites
        self.names = names

    def block(self, statements: list[ast.stmt]) -> None:
        resolved = self.classifier.resolved
        added: list[str] = []
        for statement in statements:
            self.statement(statement)
            if isinstance(statement, ast.Assign):
                added.extend(self._resolve(statement))
        for name in added:  # the block's assignments dominate only what follows in it
            resolved.pop(name, None)

    def _resolve(self, statement: ast.Assign) -> list[str]:
        """Names that this assignment binds for good (their only binding in the scope)."""
        classifier = self.classifier
        own = classifier.scope.own
        try:
            value: Value | None = classifier.value(statement.value)
        except _Defer:
            value = None
        out = []
        for target in statement.targets:
            if isinstance(target, ast.Name):
                pairs: list[tuple[str, Value | None]] = [(target.id, value)]
            elif isinstance(target, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Name) for e in target.elts
            ):
                rhs = statement.value
                if (
                    isinstance(rhs, (ast.Tuple, ast.List))
                    and len(rhs.elts) == len(target.elts)
                    and not any(isinstance(e, ast.Starred) for e in rhs.elts)
                ):
                    pairs = []
                    for element, part in zip(target.elts, rhs.elts):
                        try:
                            pairs.append((element.id, classifier.value(part)))  # type: ignore[attr-defined]
                        except _Defer:
                            pairs.append((element.id, None))  # type: ignore[attr-defined]
                else:
                    pairs = [(e.id, UNKNOWN) for e in target.elts]  # type: ignore[attr-defined]
            else:
                continue
            for name, part_value in pairs:
                if own.get(name) == _ASSIGN:
                    classifier.resolved[name] = part_value
                    out.append(name)
        return out

    def statement(self, statement: ast.stmt) -> None:
        rows = (statement.lineno, statement.end_lineno or statement.lineno)
        if isinstance(statement, (*_SCOPES, ast.ClassDef)):
            _scope_statements(statement, self.names, self.columns, self.sites, top=False)
        elif isinstance(statement, (ast.If, ast.While)):
            self.expression(statement.test, statement.test)
            self.block(statement.body)
            self.block(statement.orelse)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            self.expression(statement.iter, statement.iter)
            self.expression(statement.target, statement)
            self.block(statement.body)
            self.block(statement.orelse)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                self.expression(item.context_expr, item.context_expr)
                if item.optional_vars is not None:
                    self.expression(item.optional_vars, item.context_expr)
            self.block(statement.body)
        elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.block(statement.body)
            for handler in statement.handlers:
                if handler.type is not None:
                    self.expression(handler.type, handler.type)
                self.block(handler.body)
            self.block(statement.orelse)
            self.block(statement.finalbody)
        elif isinstance(statement, ast.Match):
            self.expression(statement.subject, statement.subject)
            for case in statement.cases:
                if _has_call(case.pattern) or (case.guard is not None and _has_call(case.guard)):
                    raise _Defer
                self.block(case.body)
        elif isinstance(statement, ast.AnnAssign):
            if statement.value is not None:
                self.expression(statement.value, rows)
                self.expression(statement.target, rows)
        elif isinstance(
            statement,
            (
                ast.Import,
                ast.ImportFrom,
                ast.Global,
                ast.Nonlocal,
                ast.Pass,
                ast.Break,
                ast.Continue,
            ),
        ):
            return
        elif isinstance(statement, ast.Delete):
            for target in statement.targets:
                self.expression(target, rows)
        else:  # Expr, Assign, AugAssign, Return, Raise, Assert
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, ast.expr):
                    self.expression(child, rows)

    def expression(self, node: ast.expr, statement: ast.AST | tuple[int, int]) -> None:
        """Every construction inside ``node`` that the interpreter evaluates (lambda bodies are
        not); ``statement`` is what it records as their statement (a node, or its rows)."""
        stack: list[ast.AST] = [node]
        found: list[ast.Call] = []
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Lambda):
                if _has_call(current.body):
                    raise _Defer  # what the interpreter does with it is not worth mirroring
                continue
            if isinstance(current, ast.Call):
                found.append(current)
            stack.extend(ast.iter_child_nodes(current))
        if not found:
            return
        if not isinstance(statement, tuple):
            statement = (statement.lineno, statement.end_lineno or statement.lineno)  # type: ignore[attr-defined]
        offset = self.columns.row_offset
        rows = (statement[0] + offset, statement[1] + offset)
        for call in found:
            self.construction(call, rows)

    def construction(self, call: ast.Call, rows: tuple[int, int]) -> None:
        classifier = self.classifier
        name = classifier.torch_function(call.func)
        if name not in _DATA_FACTORIES:
            return
        keywords = {k.arg: k for k in call.keywords if k.arg is not None}
        if "out" in keywords:
            return
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        if (
            positional
            and isinstance(positional[0], (ast.List, ast.Tuple))
            and not positional[0].elts
        ):
            return  # `torch.tensor([])`: no bytes to copy
        device_kw = keywords.get("device")
        if device_kw is None:
            return
        device = classify_device(device_kw.value, classifier.torch_function)
        if device not in ("accelerator", "unknown"):
            return
        # The data: the first positional argument before any `*args` (the interpreter's rule).
        data_node = next((a for a in call.args if not isinstance(a, ast.Starred)), None)
        data = classifier.value(data_node) if data_node is not None else UNKNOWN
        kind = construction_data(data)
        if name == "tensor":
            if data and only(data, Kind.DEVICE):
                return
        elif kind not in ("python", "numpy", "tensor") or (kind == "tensor" and not is_host(data)):
            return
        value = device_kw.value
        columns = self.columns
        text = columns.text(value)
        if _parenthesized(columns, device_kw, value):
            raise _Defer  # libcst keeps the parentheses in the device text: let it decide
        self.sites.append(
            ConstructionSite(
                factory=name,
                data=kind,
                requires_grad="requires_grad" in keywords,
                star_kwargs=any(k.arg is None for k in call.keywords),
                call_start=columns.start(call),
                call_end=columns.end(call),
                device_start=columns.start(device_kw),
                device_end=columns.end(value),
                device_text=text.strip(),
                statement_rows=rows,
            )
        )


def _parenthesized(columns: _Columns, keyword: ast.keyword, value: ast.expr) -> bool:
    """``device=(d)``: the value's own parentheses, which ast leaves out of its position."""
    if keyword.lineno != value.lineno:  # type: ignore[attr-defined]
        return True
    line = columns.source_lines[keyword.lineno - 1].encode()  # type: ignore[attr-defined]
    return b"(" in line[keyword.col_offset : value.col_offset]  # type: ignore[attr-defined]


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))
