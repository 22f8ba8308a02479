"""Values of expressions for the ``ast`` fast path of device constructions, by the interpreter's
own rules restricted to what needs no flow analysis."""

from __future__ import annotations

import ast

from pinlint import torch_api
from pinlint.analysis.fast_scope import (
    _PYDATA,
    _RECEIVER_METHODS,
    _TRUE,
    _UNKNOWN,
    _Defer,
    _Scope,
    dotted,
)
from pinlint.analysis.names import FileNames
from pinlint.analysis.values import (
    ARRAY_KINDS,
    DTYPE,
    MAYBE_PINNED_KINDS,
    NUMPY,
    PINNED,
    PYDATA,
    TRUE,
    UNKNOWN,
    Kind,
    Value,
    combine,
    derived,
    is_host,
    is_pydata,
    kinds,
    pageable,
)


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
        if kind == _PYDATA:
            return PYDATA  # `page_size: int`: a Python number
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
            if node.attr in torch_api.PYTHON_NUMBER_ATTRIBUTES:
                return PYDATA  # `x.shape`, whatever `x` is
            if key is not None and key.startswith("self.") and key.count(".") == 1:
                raise _Defer  # what the class's methods assign to it: the interpreter's summaries
            # The attribute's value does not depend on the receiver's (the interpreter
            # evaluates it only for the copies it may hold).
            return UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp)):
            return PYDATA
        if isinstance(node, ast.Subscript):
            base = self.value(node.value)
            if isinstance(node.value, ast.Attribute) and node.value.attr in torch_api.PYTHON_NUMBER_ATTRIBUTES:
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
            if isinstance(node.op, ast.Mult) and _repeats_a_list(node, left, right):
                return PYDATA  # `[0] * n`: a list repeated (n is a count)
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
        if taught is not None and (taught in self.names.pinned_functions or taught in self.names.host_functions):
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
                if isinstance(func.value, ast.Name) and (
                    func.value.id == "self"
                    or func.value.id in self.names.modules
                    or func.value.id in self.names.from_imports
                    or (func.value.id in self.names.top_level_classes and func.value.id not in self.scope.own)
                ):
                    # A method of the class, a function of a module, or a classmethod of a class
                    # of the file (`Plan.build(...)`): summarised there.
                    raise _Defer
                return UNKNOWN  # not a tensor method: unknown provenance, whatever the receiver
            receiver = self.value(func.value)
            if method in torch_api.VIEW_METHODS or method == torch_api.COPY_METHOD:
                return receiver
            if method in torch_api.NEW_TENSOR_METHODS:
                return derived(receiver, call, f".{method}()")
            if method in torch_api.TO_HOST_METHODS:
                if receiver and kinds(receiver) <= MAYBE_PINNED_KINDS:
                    return receiver
                if not receiver or kinds(receiver) <= {Kind.PYDATA, Kind.NUMPY}:
                    return UNKNOWN
                return pageable(call, pinnable=False, what=".cpu()")
            if method in (torch_api.TO_METHOD, torch_api.CUDA_METHOD) or method in torch_api.PINNABLE_NEW_METHODS:
                raise _Defer  # copies and allocations: the full table of handlers
            return UNKNOWN
        if isinstance(func, ast.Name):
            if func.id in self.scope.own:
                return UNKNOWN  # a local callable: not the builtin
            if func.id in self.names.module_level_bindings or func.id in self.names.from_imports:
                raise _Defer  # a function of the project: what it returns is summarised
            if func.id in torch_api.PYTHON_DATA_BUILTINS:
                return PYDATA
            return UNKNOWN
        return UNKNOWN


def _repeats_a_list(node: ast.BinOp, left: Value, right: Value) -> bool:
    """``builtins.repeats_a_list`` on ``ast``: a list literal times something that is not a
    tensor or array."""
    for literal, other in ((node.left, right), (node.right, left)):
        if isinstance(literal, (ast.List, ast.ListComp)) and not kinds(other) & ARRAY_KINDS:
            return True
    return False


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
