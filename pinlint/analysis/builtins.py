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
    from pinlint.analysis.values import Kind, kinds

    for literal, other in ((node.left, right), (node.right, left)):
        if isinstance(literal, (cst.List, cst.ListComp)) and not kinds(other) & {
            Kind.NUMPY,
            Kind.PAGEABLE,
            Kind.PINNED,
            Kind.HOST,
            Kind.DEVICE,
        }:
            return True
    return False
