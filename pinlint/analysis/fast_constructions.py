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

from pinlint.analysis.events import ConstructionSite
from pinlint.analysis.fast_scope import (
    _ASSIGN,
    _COMPREHENSIONS,
    _DATA_FACTORIES,
    _SCOPES,
    _Defer,
    _Scope,
    over_a_named_list,
)
from pinlint.analysis.fast_values import _Classifier, classify_device
from pinlint.analysis.names import FileNames
from pinlint.analysis.triage import Segment
from pinlint.analysis.values import (
    UNKNOWN,
    Kind,
    Value,
    construction_data,
    is_host,
    only,
)
from pinlint.core.diagnostics import Location
from pinlint.core.text import split_lines


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
        column = byte_col if line.isascii() else len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
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
    source_lines = split_lines(source)  # the tokenizer's lines, as ast counts them (not str.splitlines)
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
    if scope.imports_torch or scope.own.keys() & (names.torch_modules | names.torch_functions.keys()):
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
            elif isinstance(func, ast.Name) and names.torch_functions.get(func.id) in _DATA_FACTORIES:
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
            elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
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
                    # Unpacked from a value the full analysis may know element by element (a
                    # summarised call's tuple): unknown here only if this path knows the value.
                    known = UNKNOWN if value is not None else None
                    pairs = [(e.id, known) for e in target.elts]  # type: ignore[attr-defined]
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
        elif isinstance(statement, ast.If):
            self.expression(statement.test, statement.test)
            truth = _constant_truth(statement.test)
            if truth is None and self._module_flag(statement.test) and _has_call(statement):
                raise _Defer  # `if USE_STAGE:`: the module's constant may decide which side runs
            if truth is not False:  # `if False:` / `if 0:`: the body never runs
                self.block(statement.body)
            if truth is not True:  # `if True:`: the rest of the chain never runs
                self.block(statement.orelse)
        elif isinstance(statement, ast.While):
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
            if isinstance(current, _COMPREHENSIONS) and any(over_a_named_list(g.iter) for g in current.generators):
                if _has_construction(current, self.names):
                    # A construction from its items (`[torch.tensor(x, device=d) for x in xs]`):
                    # they may be a built list's, which the interpreter knows (on the device?).
                    raise _Defer
            if isinstance(current, ast.IfExp):
                truth = _constant_truth(current.test)
                if truth is None and self._module_flag(current.test) and _has_call(current):
                    raise _Defer  # `a if USE_STAGE else b`: as for an `if` statement
                if truth is not None:
                    stack.extend((current.test, current.body if truth else current.orelse))  # one side runs
                    continue
            stack.extend(ast.iter_child_nodes(current))
        if not found:
            return
        if not isinstance(statement, tuple):
            statement = (statement.lineno, statement.end_lineno or statement.lineno)  # type: ignore[attr-defined]
        offset = self.columns.row_offset
        rows = (statement[0] + offset, statement[1] + offset)
        for call in found:
            self.construction(call, rows)

    def _module_flag(self, test: ast.expr) -> bool:
        """A test of a name the module binds (the interpreter reads literal module constants)."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        return (
            isinstance(test, ast.Name)
            and test.id not in self.classifier.scope.own
            and test.id in self.names.module_level_bindings
        )

    def construction(self, call: ast.Call, rows: tuple[int, int]) -> None:
        classifier = self.classifier
        name = classifier.torch_function(call.func)
        if name not in _DATA_FACTORIES:
            return
        keywords = {k.arg: k for k in call.keywords if k.arg is not None}
        if "out" in keywords:
            return
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        if positional and isinstance(positional[0], (ast.List, ast.Tuple)) and not positional[0].elts:
            return  # `torch.tensor([])`: no bytes to copy
        device_kw = keywords.get("device")
        if device_kw is None:
            return
        device = classify_device(device_kw.value, classifier.torch_function)
        if device not in ("accelerator", "unknown"):
            return
        if device == "unknown" and isinstance(device_kw.value, ast.Name):
            kind = classifier.scope.own.get(device_kw.value.id)
            if kind not in (None, "unknown", "true") and _mentions_host(self.columns):
                raise _Defer  # `dev = "cpu"` assigned here: the interpreter knows it is the host
            if kind is None and device_kw.value.id in self.names.module_level_bindings:
                raise _Defer  # a module constant, perhaps `CPU = torch.device("cpu")`
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


def _mentions_host(columns: _Columns) -> bool:
    return any("cpu" in line for line in columns.source_lines)


def _parenthesized(columns: _Columns, keyword: ast.keyword, value: ast.expr) -> bool:
    """``device=(d)``: the value's own parentheses, which ast leaves out of its position."""
    if keyword.lineno != value.lineno:  # type: ignore[attr-defined]
        return True
    line = columns.source_lines[keyword.lineno - 1].encode()  # type: ignore[attr-defined]
    return b"(" in line[keyword.col_offset : value.col_offset]  # type: ignore[attr-defined]


def _constant_truth(test: ast.expr) -> bool | None:
    """``builtins.constant_truth`` on ``ast``: ``True``, ``False``, ``None``, an int literal, and
    ``not`` of one."""
    if isinstance(test, ast.Constant):
        value = test.value
        if value is True or value is False or value is None:
            return bool(value)
        return value != 0 if type(value) is int else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _constant_truth(test.operand)
        return None if inner is None else not inner
    return None


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))
