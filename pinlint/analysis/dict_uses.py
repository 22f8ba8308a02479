"""Whether a function only reads a dict a name holds: its values are then the ones it was given.

A state dict that ``torch.load`` read, or a dict parameter whose items a callee walks and copies,
holds the tensors it was made with only while nothing replaces them: ``sd[k] = v.pin_memory()``,
``sd.update(...)``, ``del sd[k]``, handing ``sd`` to other code, or an alias may. This check is
flow-insensitive and errs towards "changed": one use anywhere in the function (a nested function
included) that is not a plain read is enough.

One write is understood: ``for k, v in sd.items(): sd[k] = v.to(dev, non_blocking=True)``, the
to-device idiom, replaces only the item the loop has just read (``rekeyed_in_walk``).
"""

from __future__ import annotations

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.cst_walk import children, mentioned

#: What replaces a tensor's memory in place (``t.set_(p)``, ``t.data = p``).
_MEMORY_REPLACING = torch_api.STORAGE_REPLACING_METHODS | torch_api.STORAGE_ATTRIBUTES

#: Dict methods that only read it.
_READING_METHODS = frozenset({"items", "values", "keys", "get", "copy", "__len__", "__contains__"})
#: Builtins that only read what they are given.
_READING_BUILTINS = frozenset({"len", "list", "sorted", "iter", "enumerate", "isinstance", "print"})


def only_read(scope: cst.CSTNode, name: str, handed: cst.Call | None = None, *, fields: bool = False) -> bool:
    """Every use of ``name`` in ``scope`` reads the dict (``.items()``, ``.values()``, ``name[k]``,
    ``for k in name``, ``k in name``, ``len(name)``) or binds the name, or passes it to
    ``handed`` (the call whose callee walks it). With ``fields``: reads the object's attributes
    (``name.ids``) instead, and calls none of its methods."""
    # Ancestors as a linked list (node, rest): a tuple of them is made only at a use of the name.
    stack: list[tuple[cst.CSTNode, tuple | None]] = [(scope, None)]
    while stack:
        node, above = stack.pop()
        if type(node) is cst.Name:
            if node.value == name and not _reads(node, _ancestors(above), handed, fields):
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


def _reads(node: cst.Name, parents: tuple[cst.CSTNode, ...], handed: cst.Call | None, fields: bool = False) -> bool:
    if _binds(node, parents):
        return True  # a target that binds the name (the value then is what was bound, flow by flow)
    parent = parents[-1] if parents else None
    above = parents[-2] if len(parents) > 1 else None
    kind = type(parent)
    if kind is cst.Attribute:
        # `sd.items()`: a reading method called on it; `x.sd` is another name altogether.
        if parent.value is not node:  # type: ignore[union-attr]
            return True
        called = type(above) is cst.Call and above.func is parent  # type: ignore[union-attr]
        if fields:
            # `b.ids` read (`b.ids.to(...)` calls the field's method, not b's); not `b.ids = t`,
            # `b.ids[0] = v`, nor `b.reset()`, which may replace a field; nor `pin_(b.ids)` or
            # `b.ids.set_(p)`, which may replace the field's memory in place.
            if type(above) is cst.Arg or (
                type(above) is cst.Attribute and above.attr.value in _MEMORY_REPLACING  # type: ignore[union-attr]
            ):
                return False
            return not called and not _in_target(parents)
        return called and parent.attr.value in _READING_METHODS  # type: ignore[union-attr]
    if fields and kind is cst.Subscript:
        return False  # `b[k]`: an object used as a container (its `__getitem__` may do anything)
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


#: Dict methods that read its keys only (a replaced value is not seen through them).
_KEY_METHODS = frozenset({"keys", "__len__", "__contains__"})


def rekeyed_in_walk(scope: cst.CSTNode, name: str, loop: cst.For) -> bool:
    """``loop`` is ``for k, v in name.items():`` and the only writes to the dict are
    ``name[k] = ...`` in its body, with ``k`` never bound there again: each replaces the item the
    loop has just read, so every ``v`` is a value the dict was given. No other use may read a
    value (``name[x]``, ``.get``, ``.values()``, another walk, a copy, handing it on): it could
    see a replaced one. Keys (``len``, ``in``, ``.keys()``) and ``return name`` are fine."""
    key = _walk_key(loop, name)
    if key is None:
        return False
    if _rebinds(loop.body, key):
        return False  # `k` may name another item by the time of the write
    writes = 0
    stack: list[tuple[cst.CSTNode, tuple | None]] = [(scope, None)]
    while stack:
        node, above = stack.pop()
        if type(node) is cst.Name:
            if node.value == name:
                use = _rekey_use(node, _ancestors(above), loop, key)
                if use is None:
                    return False
                writes += use == "write"
            continue
        link = (node, above)
        stack.extend((child, link) for child in children(node))
    return writes > 0


def _walk_key(loop: cst.For, name: str) -> str | None:
    """``k`` of ``for k, v in name.items():`` (two plain names), else None."""
    items = loop.iter
    target = loop.target
    if not (
        type(items) is cst.Call
        and not items.args
        and type(items.func) is cst.Attribute
        and items.func.attr.value == "items"
        and type(items.func.value) is cst.Name
        and items.func.value.value == name
        and type(target) is cst.Tuple
        and len(target.elements) == 2
        and all(type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements)
    ):
        return None
    first, second = (e.value.value for e in target.elements)  # type: ignore[union-attr]
    return first if first != second and name not in (first, second) else None


def _rebinds(body: cst.CSTNode, key: str) -> bool:
    """A name ``key`` in ``body`` that an assignment, a loop, ``with``, ``except``, a walrus or a
    ``del`` binds, or a nested function or lambda (which may see it later): errs towards yes."""
    stack: list[tuple[cst.CSTNode, tuple | None]] = [(body, None)]
    while stack:
        node, above = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.NamedExpr, cst.Global, cst.Nonlocal):
            return True
        if kind is cst.Name:
            if node.value == key:  # type: ignore[attr-defined]
                parents = _ancestors(above)
                if _binds(node, parents) or _in_target(parents) and not _subscript_index(node, parents):
                    return True
                if any(type(p) in (cst.AsName, cst.ExceptHandler, cst.WithItem) for p in parents[-2:]):
                    return True
            continue
        link = (node, above)
        stack.extend((child, link) for child in children(node))
    return False


def _subscript_index(node: cst.Name, parents: tuple[cst.CSTNode, ...]) -> bool:
    """``node`` is the index of a subscript (``d[k]``), not what a target binds."""
    return (
        len(parents) >= 3
        and type(parents[-1]) is cst.Index
        and type(parents[-2]) is cst.SubscriptElement
        and type(parents[-3]) is cst.Subscript
    )


def _rekey_use(node: cst.Name, parents: tuple[cst.CSTNode, ...], loop: cst.For, key: str) -> str | None:
    """What one use of the dict's name is: "walk" (the loop's ``name.items()``), "write" (a
    ``name[k] = ...`` in the loop), "keys" (reads no value), or None (anything else)."""
    parent = parents[-1] if parents else None
    above = parents[-2] if len(parents) > 1 else None
    kind = type(parent)
    if kind is cst.Attribute and parent.value is node:  # type: ignore[union-attr]
        if above is loop.iter:
            return "walk"
        if type(above) is cst.Call and above.func is parent and parent.attr.value in _KEY_METHODS:  # type: ignore[union-attr]
            return "keys"
        return None
    if kind is cst.Subscript and parent.value is node:  # type: ignore[union-attr]
        slices = parent.slice  # type: ignore[union-attr]
        target = parents[-2] if len(parents) > 1 else None
        statement = parents[-3] if len(parents) > 2 else None
        if (
            type(target) is cst.AssignTarget
            and type(statement) is cst.Assign
            and len(statement.targets) == 1
            and len(slices) == 1
            and type(slices[0].slice) is cst.Index
            and type(slices[0].slice.value) is cst.Name
            and slices[0].slice.value.value == key
            and any(p is loop.body for p in parents)
        ):
            return "write"
        return None
    if kind is cst.Return or kind is cst.Param or kind is cst.ComparisonTarget:
        return "keys"  # handed back at the end, the parameter itself, `k in name`
    if kind in (cst.If, cst.While, cst.UnaryOperation, cst.BooleanOperation) or kind is cst.Comparison:
        return "keys"  # a truth test, `name is None`
    if kind is cst.Arg and type(above) is cst.Call and type(above.func) is cst.Name:
        if above.func.value in ("len", "isinstance") and parent.keyword is None:  # type: ignore[union-attr]
            return "keys"
        return None
    if kind in (cst.For, cst.CompFor) and parent.iter is node:  # type: ignore[union-attr]
        return "keys"  # `for k in name:` walks the keys
    return None


#: Nodes whose test decides which way the code goes.
_TESTED = (cst.If, cst.While, cst.IfExp, cst.Assert, cst.CompIf)


def key_decides(body: cst.CSTNode, key: str) -> bool:
    """A test in ``body`` names ``key`` (``if k == "ids": continue``, ``... if k != "mask"``): which
    items a walk copies then depends on their keys, not only on what the dict holds."""
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, _TESTED) and key in mentioned(node.test):
            return True
        if type(node) is cst.Match and key in mentioned(node.subject):
            return True
        stack.extend(children(node))
    return False
