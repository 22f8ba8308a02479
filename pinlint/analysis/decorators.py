"""Project decorators that pass the call through: a function decorated with one is followed as
if it were not decorated. Only the plainest wrapper counts (what an instrumentation or logging
decorator is):

    def instrument(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            range_push(fn.__qualname__)
            result = fn(*args, **kwargs)
            range_pop()
            return result
        return wrapped

The wrapper takes ``*args, **kwargs`` only, calls the function once, unconditionally, with both
unchanged, and returns what it returned; nothing else touches them. Anything else (a wrapper
that pins its argument, retries, caches, returns something else) is not followed."""

from __future__ import annotations

import ast

from pinlint.analysis.star_imports import bound_names, conditional_bodies

_WRAPS = frozenset({"functools.wraps", "wraps"})
_FUNCTION_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})

#: (module text, decorator name) -> whether that module's function of that name passes through.
_MEMO: dict[tuple[str, str], bool] = {}


def passes_through(module_text: str, name: str) -> bool:
    """``name`` is a module-level function of ``module_text``, defined once, that is a plain
    pass-through decorator (see the module's docstring)."""
    key = (module_text, name)
    if key not in _MEMO:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        _MEMO[key] = _passes_through(module_text, name)
    return _MEMO[key]


def _passes_through(text: str, name: str) -> bool:
    if f"def {name}" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    found = [s for s in tree.body if name in bound_names(s)]
    if len(found) != 1 or not isinstance(found[0], ast.FunctionDef):
        return False  # not defined here, or bound twice (which one runs is not known)
    if any(name in bound_names(s) for node in tree.body for body in conditional_bodies(node) for s in body):
        return False  # also bound under an `if`/`try`
    return _is_pass_through(found[0])


def _is_pass_through(outer: ast.FunctionDef) -> bool:
    arguments = outer.args
    if outer.decorator_list or len(arguments.args) != 1 or _more_than(arguments, positional=1):
        return False
    fn = arguments.args[0].arg
    body = _without_docstring(outer.body)
    if len(body) != 2 or not isinstance(body[0], ast.FunctionDef):
        return False
    inner, returned = body
    if not (isinstance(returned, ast.Return) and isinstance(returned.value, ast.Name)):
        return False
    if returned.value.id != inner.name:
        return False
    return _forwards(inner, fn)


def _more_than(arguments: ast.arguments, positional: int) -> bool:
    return bool(
        arguments.posonlyargs
        or arguments.kwonlyargs
        or arguments.defaults
        or (positional and (arguments.vararg or arguments.kwarg))
    )


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def _forwards(inner: ast.FunctionDef, fn: str) -> bool:
    """``inner(*args, **kwargs)`` calls ``fn(*args, **kwargs)`` once, unconditionally, and returns
    its result unchanged; nothing else reads the arguments or ``fn`` (but its name)."""
    arguments = inner.args
    if arguments.args or _more_than(arguments, positional=0) or not (arguments.vararg and arguments.kwarg):
        return False
    if not all(_is_wraps(d, fn) for d in inner.decorator_list):
        return False
    args, kwargs = arguments.vararg.arg, arguments.kwarg.arg
    body = _without_docstring(inner.body)
    calls = [i for i, s in enumerate(body) if _forwarding_call(s, fn, args, kwargs) is not None]
    if len(calls) != 1:
        return False
    at = calls[0]
    call_statement = body[at]
    if isinstance(call_statement, ast.Return):
        result, rest = None, body[at + 1 :]
        if rest:
            return False  # nothing runs after the return
    else:
        result = call_statement.targets[0].id  # type: ignore[attr-defined]
        rest = body[at + 1 :]
        if not rest or not _returns_name(rest[-1], result):
            return False
        rest = rest[:-1]
    for statement in body[:at] + rest:
        for node in ast.walk(statement):
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
                return False  # another way out, or not a plain function
            if isinstance(node, ast.Name) and node.id in (args, kwargs, result):
                return False  # reads or changes the arguments or the result
            if isinstance(node, ast.Name) and node.id == fn and not _names_only(statement, fn):
                return False
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                return False
    return True


def _forwarding_call(statement: ast.stmt, fn: str, args: str, kwargs: str) -> ast.Call | None:
    """``return fn(*args, **kwargs)`` or ``result = fn(*args, **kwargs)``."""
    if isinstance(statement, ast.Return):
        value = statement.value
    elif (
        isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
    ):
        value = statement.value
    else:
        return None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == fn):
        return None
    if len(value.args) != 1 or len(value.keywords) != 1:
        return None
    star, double = value.args[0], value.keywords[0]
    if not (isinstance(star, ast.Starred) and isinstance(star.value, ast.Name) and star.value.id == args):
        return None
    if double.arg is not None or not (isinstance(double.value, ast.Name) and double.value.id == kwargs):
        return None
    return value


def _returns_name(statement: ast.stmt, name: str | None) -> bool:
    return isinstance(statement, ast.Return) and isinstance(statement.value, ast.Name) and statement.value.id == name


def _names_only(statement: ast.stmt, fn: str) -> bool:
    """Every use of ``fn`` in ``statement`` reads one of its name attributes (``fn.__qualname__``)."""
    parents = {id(child): node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == fn:
            parent = parents.get(id(node))
            if not (isinstance(parent, ast.Attribute) and parent.attr in _FUNCTION_ATTRIBUTES):
                return False
    return True


def _is_wraps(decorator: ast.expr, fn: str) -> bool:
    """``@functools.wraps(fn)``."""
    return (
        isinstance(decorator, ast.Call)
        and ast.unparse(decorator.func) in _WRAPS
        and len(decorator.args) == 1
        and not decorator.keywords
        and isinstance(decorator.args[0], ast.Name)
        and decorator.args[0].id == fn
    )
