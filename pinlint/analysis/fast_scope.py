"""Names in one function for the ``ast`` fast path of device constructions: which are bound
there, and how (the fast path defers to the full analysis whenever that could matter)."""

from __future__ import annotations

import ast

from pinlint import torch_api

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
#: A parameter annotated ``int`` or ``float`` (the interpreter's ``_scalar_annotation``).
_PYDATA = "pydata"


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
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for arg, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
            true = isinstance(default, ast.Constant) and default.value is True
            self.bind(arg.arg, _TRUE if true else _PYDATA if _scalar_annotation(arg.annotation) else _UNKNOWN)
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
                # Items of a list the function built may be known to the interpreter.
                kind = _COMPLEX if over_a_named_list(node.iter) else _UNKNOWN
                for name in _target_names(node.target):
                    special[id(name)] = kind
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


def _scalar_annotation(annotation: ast.expr | None) -> bool:
    """``int`` or ``float``, also ``Optional[...]`` or ``... | None`` of one."""
    node = annotation
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        if any(isinstance(s, ast.Constant) and s.value is None for s in sides):
            node = next(s for s in sides if not (isinstance(s, ast.Constant) and s.value is None))
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Optional":
        if not isinstance(node.slice, (ast.Tuple, ast.Slice)):
            node = node.slice
    return isinstance(node, ast.Name) and node.id in ("int", "float")


def over_a_named_list(iterable: ast.expr) -> bool:
    """``for t in bufs`` / ``for i, t in enumerate(self.bufs)``: the interpreter knows the items
    of a list the function built (``Evaluator.iterated``)."""
    if (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "enumerate"
        and len(iterable.args) == 1
    ):
        iterable = iterable.args[0]
    return isinstance(iterable, (ast.Name, ast.Attribute))


def _target_names(target: ast.expr) -> list[ast.Name]:
    """The names of a plain target (``x``, ``a, b``); nested or starred targets are not plain."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e for e in target.elts if isinstance(e, ast.Name)]
    return []
