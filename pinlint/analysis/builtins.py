"""Facts of Python's own builtins and operators that the evaluator relies on."""

from __future__ import annotations

import libcst as cst

from pinlint.analysis.values import Value

#: Builtins that only read their arguments (a tensor passed to them does not escape).
READ_ONLY_BUILTINS = frozenset(
    {
        "print",
        "len",
        "isinstance",
        "type",
        "id",
        "repr",
        "str",
        "format",
        "bool",
        "hash",
        "int",
        "float",
        "max",
        "min",
        "sum",
        "any",
        "all",
        "abs",
        "round",
    }
)


def repeats_a_list(node: cst.BinaryOperation, left: Value, right: Value) -> bool:
    """``[0] * n`` / ``n * [0]``: a list literal times something that is not a tensor or array."""
    from pinlint.analysis.values import ARRAY_KINDS, kinds

    for literal, other in ((node.left, right), (node.right, left)):
        if isinstance(literal, (cst.List, cst.ListComp)) and not kinds(other) & ARRAY_KINDS:
            return True
    return False


def constant_truth(test: cst.BaseExpression) -> bool | None:
    """The truth of a test that is a constant (``True``, ``False``, ``None``, an int literal, and
    ``not`` of one); None for anything else. Names are the builtins' (assigning ``True`` is a
    syntax error)."""
    if type(test) is cst.Name and test.value in ("True", "False", "None"):
        return test.value == "True"
    if type(test) is cst.Integer:
        try:
            return int(test.value, 0) != 0
        except ValueError:
            return None  # a literal `int()` does not read with base 0 (`007` is not Python 3)
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = constant_truth(test.expression)
        return None if inner is None else not inner
    return None


def never_iterates(iterable: cst.BaseExpression) -> bool:
    """A ``for`` over this never runs its body: an empty display (``()``, ``[]``, ``{}``) or an
    empty plain string."""
    kind = type(iterable)
    if kind in (cst.Tuple, cst.List, cst.Set, cst.Dict):
        return not iterable.elements  # type: ignore[attr-defined]
    if kind is cst.SimpleString:
        return iterable.evaluated_value in ("", b"")  # type: ignore[attr-defined]
    return False


def iterates_at_least_once(iterable: cst.BaseExpression, range_is_builtin: bool) -> bool:
    """A ``for`` over this runs its body at least once: a display with an element that is not
    starred (a ``*rest`` may be empty), a non-empty plain string, or ``range(n)`` /
    ``range(a, b)`` of int literals that is not empty."""
    kind = type(iterable)
    if kind in (cst.Tuple, cst.List, cst.Set):
        return any(type(element) is cst.Element for element in iterable.elements)  # type: ignore[attr-defined]
    if kind is cst.SimpleString:
        value = iterable.evaluated_value  # type: ignore[attr-defined]
        return isinstance(value, (str, bytes)) and len(value) > 0
    if kind is cst.Call and range_is_builtin:
        call: cst.Call = iterable  # type: ignore[assignment]
        if type(call.func) is not cst.Name or call.func.value != "range":
            return False
        if any(a.keyword is not None or a.star for a in call.args) or len(call.args) not in (1, 2):
            return False
        bounds = [_int_literal(a.value) for a in call.args]
        if any(b is None for b in bounds):
            return False
        start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
        return start < stop  # type: ignore[operator]
    return False


def _int_literal(node: cst.BaseExpression) -> int | None:
    negative = type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus
    if negative:
        node = node.expression  # type: ignore[attr-defined]
    if type(node) is not cst.Integer:
        return None
    try:
        value = int(node.value, 0)
    except ValueError:
        return None
    return -value if negative else value


def none_facts(test: cst.BaseExpression, holds: bool) -> set[tuple[str, bool]]:
    """What ``test`` being ``holds`` proves of names being None: ``{(name, is_none)}``
    (``x is None``, ``x is not None``, a bare ``x`` that is true, through ``not``, ``and``, ``or``)."""
    from pinlint.analysis.scopes import dotted

    kind = type(test)
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
        return none_facts(test.expression, not holds)  # type: ignore[attr-defined]
    if kind is cst.BooleanOperation:
        operator = type(test.operator)  # type: ignore[attr-defined]
        if (operator is cst.And and holds) or (operator is cst.Or and not holds):
            return none_facts(test.left, holds) | none_facts(test.right, holds)  # type: ignore[attr-defined]
        return set()  # one side or the other: nothing certain
    if kind is cst.Name:
        return {(test.value, False)} if holds else set()  # type: ignore[attr-defined]  # true: not None
    if kind is cst.Comparison and len(test.comparisons) == 1:  # type: ignore[attr-defined]
        comparison = test.comparisons[0]  # type: ignore[attr-defined]
        name = dotted(test.left)  # type: ignore[attr-defined]
        other = comparison.comparator
        if name is None or type(other) is not cst.Name or other.value != "None":
            return set()
        if type(comparison.operator) is cst.Is:
            return {(name, holds)}
        if type(comparison.operator) is cst.IsNot:
            return {(name, not holds)}
    return set()
