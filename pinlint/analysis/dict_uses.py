"""Whether a function only reads a dict a name holds: its values are then the ones it was given.

A state dict that ``torch.load`` read, or a dict parameter whose items a callee walks and copies,
holds the tensors it was made with only while nothing replaces them: ``sd[k] = v.pin_memory()``,
``sd.update(...)``, ``del sd[k]``, handing ``sd`` to other code, or an alias may. This check is
flow-insensitive and errs towards "changed": one use anywhere in the function (a nested function
included) that is not a plain read is enough.
"""

from __future__ import annotations

import libcst as cst

from pinlint.analysis.cst_walk import children

#: Dict methods that only read it.
_READING_METHODS = frozenset({"items", "values", "keys", "get", "copy", "__len__", "__contains__"})
#: Builtins that only read what they are given.
_READING_BUILTINS = frozenset({"len", "list", "sorted", "iter", "enumerate", "isinstance", "print"})


def only_read(scope: cst.CSTNode, name: str, handed: cst.Call | None = None) -> bool:
    """Every use of ``name`` in ``scope`` reads the dict (``.items()``, ``.values()``, ``name[k]``,
    ``for k in name``, ``k in name``, ``len(name)``) or binds the name, or passes it to
    ``handed`` (the call whose callee walks it)."""
    # Ancestors as a linked list (node, rest): a tuple of them is made only at a use of the name.
    stack: list[tuple[cst.CSTNode, tuple | None]] = [(scope, None)]
    while stack:
        node, above = stack.pop()
        if type(node) is cst.Name:
            if node.value == name and not _reads(node, _ancestors(above), handed):
                return False
            continue
        link = (node, above)
        stack.extend((child, link) for child in children(node))
    return True


def _ancestors(link: tuple | None) -> tuple[cst.CSTNode, ...]:
    """The outermost first."""
    found: list[cst.CSTNode] = []
    while link is not None:
        found.append(link[0])
        link = link[1]
    return tuple(reversed(found))


def _reads(node: cst.Name, parents: tuple[cst.CSTNode, ...], handed: cst.Call | None) -> bool:
    if _binds(node, parents):
        return True  # a target that binds the name (the value then is what was bound, flow by flow)
    parent = parents[-1] if parents else None
    above = parents[-2] if len(parents) > 1 else None
    kind = type(parent)
    if kind is cst.Attribute:
        # `sd.items()`: a reading method called on it; `x.sd` is another name altogether.
        if parent.value is not node:  # type: ignore[union-attr]
            return True
        return type(above) is cst.Call and above.func is parent and parent.attr.value in _READING_METHODS  # type: ignore[union-attr]
    if kind is cst.Subscript:
        # `sd[k]` read, not written (`sd[k] = v`, `sd[a], sd[b] = ...`, `del sd[k]`, `sd[k] += 1`).
        return parent.value is node and not _in_target(parents)  # type: ignore[union-attr]
    if kind is cst.Arg:
        call = above
        if call is handed:
            return True
        return (
            type(call) is cst.Call
            and type(call.func) is cst.Name
            and call.func.value in _READING_BUILTINS
            and parent.keyword is None  # type: ignore[union-attr]
        )
    if kind in (cst.For, cst.CompFor):
        return parent.iter is node  # type: ignore[union-attr]  # `for k in sd:`
    if kind is cst.ComparisonTarget:
        return True  # `k in sd`
    if kind is cst.Param:
        return True  # the parameter itself
    if kind is cst.Comparison:
        return True  # `sd is None`, the left side of a comparison
    if kind in (cst.If, cst.While, cst.UnaryOperation, cst.BooleanOperation):
        return True  # a truth test
    return False  # an alias (`other = sd`), a return, a yield, a container display, anything else


def _in_target(parents: tuple[cst.CSTNode, ...]) -> bool:
    """The innermost of ``parents`` lies in what a statement binds or deletes."""
    for i, ancestor in enumerate(parents):
        kind = type(ancestor)
        if kind in (cst.AssignTarget, cst.Del):
            return True
        below = parents[i + 1] if i + 1 < len(parents) else None
        if kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor) and below is ancestor.target:  # type: ignore[union-attr]
            return True
    return False


def _binds(node: cst.Name, parents: tuple[cst.CSTNode, ...]) -> bool:
    """``node`` is (an element of) what an assignment or a loop binds: ``sd = ...``, ``for sd in
    ...``, ``a, sd = ...`` (not ``sd[k] = ...``, which writes into it)."""
    child: cst.CSTNode = node
    for ancestor in reversed(parents):
        kind = type(ancestor)
        if kind in (cst.Element, cst.Tuple, cst.List, cst.StarredElement):
            child = ancestor
            continue
        if kind is cst.AssignTarget:
            return True
        if kind in (cst.For, cst.CompFor, cst.AnnAssign):
            return ancestor.target is child  # type: ignore[union-attr]
        return False
    return False
