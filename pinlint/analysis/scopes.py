"""Statements, targets and names: walking libcst statement trees without visitors, and what a
name means in one scope (torch, numpy, or a local that shadows them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst
import libcst.helpers

from pinlint import torch_api
from pinlint.analysis.names import FileNames

if TYPE_CHECKING:
    from pinlint.analysis.values import Value


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def named_parameter(function: cst.FunctionDef, name: str) -> cst.Param | None:
    """The parameter ``name`` of ``function`` (not ``*args``/``**kwargs``), if it has one."""
    params = function.params
    return next(
        (p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None
    )


def flatten_targets(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(node) in (cst.Tuple, cst.List):
        out: list[cst.BaseExpression] = []
        for element in node.elements:
            out.extend(flatten_targets(element.value))
        return out
    return [node]


def _suites(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """The blocks of statements directly inside a compound statement (not an elif's)."""
    out: list[cst.BaseSuite] = []
    body = getattr(statement, "body", None)
    if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite):  # the two kinds of suite
        out.append(body)
    orelse = getattr(statement, "orelse", None)
    if type(orelse) is cst.Else:
        out.append(orelse.body)
    finalbody = getattr(statement, "finalbody", None)
    if type(finalbody) is cst.Finally:
        out.append(finalbody.body)
    for handler in getattr(statement, "handlers", ()):
        out.append(handler.body)
    for case in getattr(statement, "cases", ()):
        out.append(case.body)
    return out


def statements_in(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    if type(suite) is cst.IndentedBlock:
        return list(suite.body)
    if type(suite) is cst.SimpleStatementSuite:
        return [suite]
    return []


def iter_statements(statements: list[cst.CSTNode], into_functions: bool = False) -> Iterator[cst.CSTNode]:
    """Every statement below ``statements`` (walking blocks of compound statements, an
    ``elif`` chain included), without descending into nested functions and classes unless
    asked. Manual recursion: libcst's visitor machinery costs ~10x the parse."""
    stack = list(reversed(statements))
    while stack:
        statement = stack.pop()
        yield statement
        if type(statement) in (cst.FunctionDef, cst.ClassDef) and not into_functions:
            continue
        children: list[cst.CSTNode] = []
        if type(statement) is cst.If and type(statement.orelse) is cst.If:
            children.append(statement.orelse)
        for suite in _suites(statement):
            children.extend(statements_in(suite))
        stack.extend(reversed(children))


class BoundNames:
    """Every name a function binds (parameters, assignments, loops, imports, nested defs)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.torch_imports: set[str] = set()
        self.torch_function_imports: dict[str, str] = {}

    def params(self, params: cst.Parameters) -> None:
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self.names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                self.names.add(star.name.value)

    def statements(self, statements: list[cst.CSTNode]) -> None:
        for statement in iter_statements(statements):
            if type(statement) in (cst.FunctionDef, cst.ClassDef):
                self.names.add(statement.name.value)
            elif type(statement) is cst.For:
                self._targets(statement.target)
            elif type(statement) is cst.With:
                for item in statement.items:
                    if item.asname is not None:
                        self._targets(item.asname.name)
            elif type(statement) in (cst.Try, cst.TryStar):
                for handler in statement.handlers:
                    if handler.name is not None and type(handler.name.name) is cst.Name:
                        self.names.add(handler.name.name.value)
            smalls = statement.body if type(statement) in (cst.SimpleStatementLine, cst.SimpleStatementSuite) else ()
            for small in smalls:
                self._small(small)

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if type(small) is cst.Assign:
            for target in small.targets:
                self._targets(target.target)
        elif type(small) in (cst.AnnAssign, cst.AugAssign):
            self._targets(small.target)
        elif type(small) is cst.Import:
            for alias in small.names:
                name = alias.evaluated_alias or alias.evaluated_name.split(".", 1)[0]
                self.names.add(name)
                if alias.evaluated_name == "torch" or (
                    alias.asname is None and alias.evaluated_name.startswith("torch.")
                ):
                    self.torch_imports.add(name)
        elif type(small) is cst.ImportFrom and type(small.names) is not cst.ImportStar:
            module = cst.helpers.get_full_name_for_node(small.module) if small.module else None
            for alias in small.names:
                local = alias.evaluated_alias or alias.evaluated_name
                self.names.add(local)
                if module == "torch" and not small.relative:
                    self.torch_function_imports[local] = alias.evaluated_name
        elif type(small) in (cst.Global, cst.Nonlocal):
            for item in small.names:
                self.names.add(item.name.value)

    def _targets(self, node: cst.BaseExpression) -> None:
        for element in flatten_targets(node):
            if type(element) is cst.Name:
                self.names.add(element.value)
            elif type(element) is cst.StarredElement and type(element.value) is cst.Name:
                self.names.add(element.value.value)


class ScopeNames:
    """What torch and numpy names mean inside one scope (a function's locals shadow them)."""

    def __init__(self, names: FileNames, scope: cst.FunctionDef | cst.Module) -> None:
        self.file = names
        torch_modules = set(names.torch_modules)
        torch_functions = dict(names.torch_functions)
        if type(scope) is cst.FunctionDef:
            collector = BoundNames()
            collector.params(scope.params)
            collector.statements(statements_in(scope.body))
            # A parameter or local that reuses a torch name shadows it for the whole function
            # (Python scoping: a name assigned anywhere in a function is local everywhere in it).
            imported = collector.torch_imports | collector.torch_function_imports.keys()
            for name in collector.names - imported:
                torch_modules.discard(name)
                torch_functions.pop(name, None)
            torch_modules |= collector.torch_imports
            torch_functions.update(collector.torch_function_imports)
        self.torch_modules = torch_modules
        self.torch_functions = torch_functions

    def torch_function(self, func: cst.BaseExpression) -> str | None:
        """``"tensor"`` for ``torch.tensor`` / ``T.tensor`` / an imported ``tensor``, else None."""
        if type(func) is cst.Name:
            return self.torch_functions.get(func.value)
        if type(func) is cst.Attribute and type(func.value) is cst.Name:
            if func.value.value in self.torch_modules:
                return func.attr.value
        return None

    def is_numpy_call(self, func: cst.BaseExpression) -> bool:
        if type(func) is cst.Name:
            return self.file.numpy_functions.get(func.value) in torch_api.NUMPY_ARRAY_FUNCTIONS
        if type(func) is cst.Attribute:
            root = dotted(func)
            if root and root.split(".", 1)[0] in self.file.numpy_modules:
                return func.attr.value in torch_api.NUMPY_ARRAY_FUNCTIONS
        return False

    def library_source(self, func: cst.BaseExpression, local: Value | None = None) -> str | None:
        """The dotted name of a known host-returning library function (``load_file``), of one
        that opens a file of tensors (``safe_open``) or rearranges one (``einops.rearrange``), if
        ``func`` resolves to one through the imports. ``local``: what the function binds to
        the name ``func`` starts with, if it binds it (an import there, or anything else)."""
        chain = dotted(func)
        if chain is None:
            return None
        root, _, rest = chain.partition(".")
        if local is not None:
            names = {o.imported for o in local}
            if len(names) != 1 or not next(iter(names)):
                return None  # bound in the function to something else than an import
            module: str | None = next(iter(names))
        else:
            module = self.file.modules.get(root)
            if module is None or root in self.file.module_level_bindings:
                return None  # not imported, or also bound at module level (`def load_file` after the import)
        full = f"{module}.{rest}" if rest else module
        known = (
            full in torch_api.HOST_LIBRARY_FUNCTIONS
            or full in torch_api.HOST_FILE_HANDLES
            or full in torch_api.DEVICE_KEEPING_LIBRARY_FUNCTIONS
            or full in torch_api.HOST_BATCH_LOADERS
            or full in torch_api.PASS_THROUGH_ITERATORS
            or full in torch_api.DEFAULT_COLLATE_FUNCTIONS
            or full in torch_api.TENSOR_DATASETS
        )
        return full if known else None

    def functional(self, func: cst.BaseExpression) -> str | None:
        """``"pad"`` for ``F.pad`` where ``F`` is ``torch.nn.functional``."""
        if type(func) is cst.Attribute and type(func.value) is cst.Name:
            if self.file.modules.get(func.value.value) == "torch.nn.functional":
                return func.attr.value
        return None

    def is_dtype_attribute(self, node: cst.BaseExpression) -> bool:
        """``torch.float16`` (any alias of torch), or a name imported from torch that is one."""
        if type(node) is cst.Attribute and type(node.value) is cst.Name:
            return node.value.value in self.torch_modules and node.attr.value in torch_api.DTYPES
        if type(node) is cst.Name:
            return self.torch_functions.get(node.value) in torch_api.DTYPES
        return False

    def is_dtype(self, node: cst.BaseExpression) -> bool:
        if type(node) is cst.Attribute and type(node.value) is cst.Name:
            if node.value.value in self.torch_modules:
                return node.attr.value in torch_api.DTYPES
        if type(node) is cst.Name and self.torch_functions.get(node.value) in torch_api.DTYPES:
            return True
        if type(node) is cst.Call and self.torch_function(node.func) in torch_api.DTYPE_FUNCTIONS:
            return True  # `torch.get_default_dtype()`
        if type(node) is cst.Attribute and "dtype" in node.attr.value.lower():
            return True  # `x.to(xs[0].dtype)`: a tensor's dtype, whatever the tensor's expression
        name = dotted(node)
        # `x.to(dtype, non_blocking=True)`, `x.to(self.torch_dtype)`: by convention a dtype.
        return bool(name) and "dtype" in name.rsplit(".", 1)[-1].lower()
