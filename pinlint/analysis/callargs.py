"""Reading a call's arguments: keywords, positionals, literal booleans, ``non_blocking``."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst


def is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_false(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def keyword_args(call: cst.Call) -> dict[str, cst.Arg]:
    return {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}


def positional(call: cst.Call) -> list[cst.BaseExpression] | None:
    """Positional argument values; None when a ``*args``/``**kwargs`` hides what is passed."""
    out = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            out.append(arg.value)
    return out


def positional_values(call: cst.Call) -> list[cst.BaseExpression]:
    """Positional argument values before any ``*args`` (a star stops the list)."""
    return [a.value for a in call.args if a.keyword is None and not a.star]


def non_blocking(
    call: cst.Call,
    args: list[cst.BaseExpression],
    position: int,
    holds_true: Callable[[cst.BaseExpression], bool] = is_true,
) -> bool:
    """``non_blocking=True``, or ``True`` at ``position`` among the positionals; ``holds_true``
    tells whether an expression is ``True`` (a literal, or a name bound to one)."""
    flag = non_blocking_argument(call, args, position)
    return flag is not None and holds_true(flag)


def non_blocking_argument(call: cst.Call, args: list[cst.BaseExpression], position: int) -> cst.BaseExpression | None:
    """The expression passed for ``non_blocking`` (by keyword, or at ``position``), if any."""
    keyword = keyword_args(call).get("non_blocking")
    if keyword is not None:
        return keyword.value
    return args[position] if len(args) > position else None


def has_star_kwargs(call: cst.Call) -> bool:
    return any(arg.star == "**" for arg in call.args)


def is_empty_data(call: cst.Call) -> bool:
    """``torch.tensor([])``: a literal empty list or tuple as the data."""
    args = positional_values(call)
    return bool(args) and isinstance(args[0], (cst.List, cst.Tuple)) and not args[0].elements


def is_zero_size(call: cst.Call) -> bool:
    """``torch.zeros(0, ...)``, ``torch.empty((0,))``: a literal size of zero elements."""
    args = positional_values(call)
    if not args:
        return False
    first = args[0]
    if isinstance(first, (cst.Tuple, cst.List)):
        return any(isinstance(e.value, cst.Integer) and e.value.value == "0" for e in first.elements)
    return isinstance(first, cst.Integer) and first.value == "0"
