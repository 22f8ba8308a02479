"""Tests of where a tensor lives (``t.device.type == "cpu"``, ``t.is_cpu``, ``dev.type == "cuda"``),
read as facts: what a check proves past it, and a ``non_blocking=`` test that holds exactly for a
host-to-device copy."""

from __future__ import annotations

import libcst as cst

from pinlint.analysis.scopes import dotted


def on_host_when(test: cst.BaseExpression, holds: bool) -> set[str]:
    """Names/attribute chains that ``test`` proves to be on the CPU when it evaluates to
    ``holds``: ``t.device.type == "cpu"`` and ``t.is_cpu`` when true, their negations when false,
    through ``not``, ``and`` (true) and ``or`` (false). (``not t.is_cuda`` proves nothing: the
    tensor may be on another accelerator.)"""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, holds = test.expression, not holds
    if type(test) is cst.BooleanOperation:
        if (type(test.operator) is cst.And) == holds:
            return on_host_when(test.left, holds) | on_host_when(test.right, holds)
        return set()  # `a or b` true (or `a and b` false): either side may be the one that holds
    key = None
    if type(test) is cst.Attribute and test.attr.value == "is_cpu" and holds:
        key = dotted(test.value)
    elif type(test) is cst.Comparison and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        left = test.left
        equal = type(comparison.operator) is cst.Equal
        if (
            (equal or type(comparison.operator) is cst.NotEqual)
            and equal == holds
            and type(comparison.comparator) is cst.SimpleString
            and comparison.comparator.evaluated_value == "cpu"
            and type(left) is cst.Attribute
            and left.attr.value == "type"
            and type(left.value) is cst.Attribute
            and left.value.attr.value == "device"
        ):
            key = dotted(left.value.value)
    return {key} if key else set()


def true_when_host_to_device(flag: cst.BaseExpression, source: cst.BaseExpression, device: cst.BaseExpression) -> bool:
    """``non_blocking=src.device.type == "cpu" and dev.type == "cuda"``: a conjunction of tests
    that the copy's source is on the CPU and its target an accelerator, true exactly when the copy
    is host-to-device (any other test in it might be false then, and the copy block)."""
    source_key = dotted(source)
    target = device.value if type(device) is cst.Attribute and device.attr.value == "device" else device
    target_key = dotted(target)
    if not source_key or not target_key:
        return False
    conjuncts: list[cst.BaseExpression] = []
    stack = [flag]
    while stack:
        node = stack.pop()
        if type(node) is cst.BooleanOperation and type(node.operator) is cst.And:
            stack.extend((node.left, node.right))
        else:
            conjuncts.append(node)
    tested: set[str] = set()
    for conjunct in conjuncts:
        if source_key in on_host_when(conjunct, True):
            tested.add("source")
        elif target_key in _accelerator_when_true(conjunct):
            tested.add("target")
        else:
            return False
    return tested == {"source", "target"}


def _accelerator_when_true(test: cst.BaseExpression) -> set[str]:
    """``x.is_cuda``, ``x.type == "cuda"``, ``x.device.type != "cpu"``: the chain that is then on
    an accelerator (``x`` a tensor or a device)."""
    if type(test) is cst.Attribute and test.attr.value == "is_cuda":
        key = dotted(test.value)
        return {key} if key else set()
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return set()
    comparison = test.comparisons[0]
    left = test.left
    if (
        type(comparison.comparator) is not cst.SimpleString
        or type(left) is not cst.Attribute
        or left.attr.value != "type"
    ):
        return set()
    text = comparison.comparator.evaluated_value
    if not (
        (type(comparison.operator) is cst.Equal and text == "cuda")
        or (type(comparison.operator) is cst.NotEqual and text == "cpu")
    ):
        return set()
    keys = {dotted(left.value)}
    if type(left.value) is cst.Attribute and left.value.attr.value == "device":
        keys.add(dotted(left.value.value))  # `x.device.type`: x's device, x itself
    return {key for key in keys if key}


def compared_to_another_device(test: cst.BaseExpression) -> tuple[str, bool, cst.BaseExpression] | None:
    """``t.device != target`` (or ``==``), ``target`` a device value rather than a literal: the
    chain ``t``, the truth of the test where the devices differ (``!=`` true, ``==`` false), and
    ``target``.
    There ``t`` is still what it was, and ``target`` is another device (on the other side,
    ``target`` is where ``t`` is: a copy there is none)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    if type(comparison.operator) not in (cst.NotEqual, cst.Equal):
        return None
    left, right = test.left, comparison.comparator
    if type(left) is not cst.Attribute or left.attr.value != "device":
        return None
    if type(right) not in (cst.Name, cst.Attribute):
        return None  # a literal or `torch.device("cpu")`: decided by where `t` is
    key = dotted(left.value)
    return (key, type(comparison.operator) is cst.NotEqual, right) if key else None


def host_side(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``t.is_cuda``, ``t.is_cpu``, ``t.device.type == "cuda"`` (``!=``, ``"cpu"``, through
    ``not``): the chain ``t`` and the truth of the test on the side where ``t`` may be on the host.
    There a tensor known to be on the host is still what it was; which side runs for any other
    tensor is decided at run time. (``and``/``or`` of tests: None.)"""
    holds = True
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, holds = test.expression, not holds
    if type(test) is cst.Attribute and test.attr.value in _PLACE_PROPERTIES:
        key = dotted(test.value)
        return (key, holds == _PLACE_PROPERTIES[test.attr.value]) if key else None
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    left = test.left
    if (
        type(comparison.operator) not in (cst.Equal, cst.NotEqual)
        or type(comparison.comparator) is not cst.SimpleString
        or type(left) is not cst.Attribute
        or left.attr.value != "type"
        or type(left.value) is not cst.Attribute
        or left.value.attr.value != "device"
    ):
        return None
    text = comparison.comparator.evaluated_value
    if not isinstance(text, str):
        return None
    key = dotted(left.value.value)
    if not key:
        return None
    # `== "cpu"` holds on the host; `== "cuda"` (any other type) does not; `!=` the other way.
    on_host = (text == "cpu") == (type(comparison.operator) is cst.Equal)
    return (key, holds == on_host)


#: A tensor's boolean place properties -> their value for a tensor on the host.
_PLACE_PROPERTIES = {"is_cuda": False, "is_cpu": True, "is_meta": False}
