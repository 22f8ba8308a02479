"""Provably non-contiguous views of pinned buffers copied non_blocking (PIN005).

PyTorch's CUDA copy reads the source directly only when the copy is a plain memcpy; otherwise it
first gathers ``src.contiguous()`` into a new, *pageable* host tensor (``Copy.cu``; the runtime's
``layout.py`` models the same rule). So:

* ``pinned[:, :n]``, ``pinned[:, i]``, ``pinned[::2]``: not dense; both ``.to(dev)`` and
  ``dst.copy_(...)`` gather them into pageable memory;
* ``pinned.t()``, ``.transpose(a, b)``, ``.permute(...)``: dense, so ``.to(dev)`` keeps their strides
  and copies directly, but ``dst.copy_(pinned.t())`` into a plainly laid out destination gathers;
* ``view.contiguous()`` of such a view *is* that gather, done explicitly.

Only what the source text proves is flagged: a view expression written at the copy, on a name
whose value is pinned on every path. Dimensions of size one make any slice contiguous, so a
literal size of 1 in the buffer's visible construction clears it; sizes given by names are taken
to be larger than one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.callargs import keyword_args, positional
from pinlint.analysis.cst_walk import children
from pinlint.analysis.events import EventSink, StridedPinnedCopy
from pinlint.analysis.scopes import dotted
from pinlint.analysis.values import Kind, Value, kinds

if TYPE_CHECKING:
    from pinlint.analysis.scopes import ScopeNames

#: Factories whose positional arguments (or first tuple argument) are the size.
_SIZE_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn"})
_TRANSPOSES = torch_api.TRANSPOSING_METHODS


class ViewContext(Protocol):
    events: EventSink
    names: ScopeNames
    statement: cst.CSTNode
    bindings: dict[str, list[cst.CSTNode]]

    def value_of(self, node: cst.BaseExpression) -> Value: ...


def strided_copy(
    ctx: ViewContext,
    call: cst.Call,
    api: str,
    source: cst.BaseExpression,
    destination: cst.BaseExpression | None,
) -> None:
    """A non_blocking host-to-device copy of ``source``: report it when ``source`` is a provably
    non-contiguous view of a pinned buffer."""
    if not ctx.events.wants_strided:
        return
    why = _why_strided(ctx, source, destination)
    if why is not None:
        ctx.events.add(StridedPinnedCopy(call, api, source, why, ctx.statement), ("strided", id(call)))


def _why_strided(ctx: ViewContext, source: cst.BaseExpression, destination: cst.BaseExpression | None) -> str | None:
    explicit = ""
    if _is_method(source, "contiguous") and not _args(source):
        # `view.contiguous()` is the gather itself: a new pageable tensor.
        assert isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute)
        source = source.func.value
        explicit = "; `.contiguous()` gathers it into pageable memory"
    if isinstance(source, cst.Subscript):
        base = source.value
        if not _pinned_name(ctx, base):
            return None  # pinned on every path, and a name we can look up: else not provable
        # Assigned more than once (in two branches, or one after the other): which assignment
        # reaches the copy is not read here, so any that leaves the gap is reported.
        reasons = [_subscript_gap(source, shape) for shape in _shapes(ctx, base)]
        why = next((r for r in reasons if r is not None), None)
        return None if why is None else why + explicit
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute):
        method = source.func.attr.value
        base = source.func.value
        if method not in _TRANSPOSES or not _pinned_name(ctx, base):
            return None
        if destination is None and not explicit:
            return None  # `.to()` keeps a dense permuted layout: a direct copy (layout.py)
        if destination is not None and _mentions_transpose(destination):
            return None  # the destination may be laid out the same way: a direct copy
        shape = _shape(ctx, base)
        if shape is None or len(shape) < 2:
            return None  # `.t()` of a 1-D tensor is itself: the construction must show 2+ dims
        if any(_is_one(d) for d in shape[:2]) and method == "t":
            return None  # a size-1 dimension: transposing it moves no data
        if method == "t" and len(shape) != 2:
            return None  # `.t()` raises on more than two dimensions
        shown = "()" if method == "t" else "(...)"
        return f"`.{method}{shown}` reorders its dimensions" + explicit
    return None


def _pinned_name(ctx: ViewContext, node: cst.BaseExpression) -> bool:
    value = ctx.value_of(node)
    return dotted(node) is not None and bool(value) and kinds(value) == {Kind.PINNED}


def _shape(ctx: ViewContext, base: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The size expressions of ``base``'s construction, when one visible assignment made it."""
    key = dotted(base)
    statements = ctx.bindings.get(key or "", [])
    if len({id(s) for s in statements}) != 1:
        return None  # bound elsewhere, or more than once: no single construction to read
    shape = _assigned_shape(ctx, statements[0], key or "")
    return None if shape is _SAME else shape  # type: ignore[return-value]


def _shapes(ctx: ViewContext, base: cst.BaseExpression) -> list[list[cst.BaseExpression] | None]:
    """The size expressions of each assignment of ``base`` in this function (None where not
    visible); ``buf = buf.pin_memory()`` keeps the tensor it had, and adds none."""
    key = dotted(base) or ""
    statements = {id(s): s for s in ctx.bindings.get(key, [])}
    shapes = [_assigned_shape(ctx, statement, key) for statement in statements.values()]
    found = [shape for shape in shapes if shape is not _SAME]
    return found or [None]  # type: ignore[list-item]


#: ``buf = buf.pin_memory()``: the same tensor's storage, pinned (no size of its own).
_SAME: list[cst.BaseExpression] = []


def _assigned_shape(ctx: ViewContext, statement: cst.CSTNode, key: str) -> list[cst.BaseExpression] | None:
    assigned: cst.BaseExpression | None = None
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if (
                (isinstance(small, cst.Assign) and len(small.targets) == 1 and dotted(small.targets[0].target) == key)
                or isinstance(small, cst.AnnAssign)
                and dotted(small.target) == key
            ):
                assigned = small.value
    pinned_again = False
    while _is_method(assigned, "pin_memory"):
        assert isinstance(assigned, cst.Call) and isinstance(assigned.func, cst.Attribute)
        assigned = assigned.func.value
        pinned_again = True
    if pinned_again and assigned is not None and dotted(assigned) == key:
        return _SAME
    if (
        isinstance(assigned, cst.Call)
        and isinstance(assigned.func, cst.Attribute)
        and assigned.func.attr.value in ("view", "reshape")
        and positional(assigned)
    ):
        # `buf = buf.view(8, 1)`: the sizes are the arguments (a name or -1 stays unknown).
        sizes = positional(assigned)
        if isinstance(sizes[0], (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in sizes[0].elements):
                return None
            return [e.value for e in sizes[0].elements]
        return list(sizes)  # type: ignore[arg-type]
    if not isinstance(assigned, cst.Call):
        return None
    name = ctx.names.torch_function(assigned.func)
    args = positional(assigned)
    if name not in _SIZE_FACTORIES and name != "full" or not args or "size" in keyword_args(assigned):
        return None  # not a factory whose size we can read
    if isinstance(args[0], (cst.Tuple, cst.List)):
        elements = args[0].elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None  # `(*dims, n)`: the number of dimensions is not visible
        return [e.value for e in elements]
    if name == "full":
        return None  # `torch.full(n, v)`: the size is one argument
    return list(args)


def _subscript_gap(node: cst.Subscript, shape: list[cst.BaseExpression] | None) -> str | None:
    """Why ``base[...]`` has gaps between its rows (not dense), or None when it may not.

    Row-major rule: the outermost kept dimension may be restricted; a restriction, an integer index
    or a step on any later dimension leaves gaps when an earlier kept dimension has more than one
    element.
    """
    outer_kept = False  # an earlier dimension kept with (possibly) more than one element
    for dim, element in enumerate(node.slice):
        size = shape[dim] if shape is not None and dim < len(shape) else None
        inner = element.slice
        if isinstance(inner, cst.Index):
            if isinstance(inner.value, (cst.Ellipsis, cst.List, cst.Tuple)) or dotted(inner.value) == "None":
                return None  # `...`, `None` or advanced indexing: not a view we can lay out
            if not isinstance(inner.value, (cst.Integer, cst.Name, cst.Attribute, cst.UnaryOperation)):
                return None  # maybe a tensor index (advanced indexing copies, no view)
            if isinstance(inner.value, (cst.Name, cst.Attribute)) and not _is_int_name(inner.value):
                return None  # a name may hold an index tensor: advanced indexing
            if outer_kept and not _is_one(size):
                return f"indexing dimension {dim} leaves gaps between rows"
            continue
        assert isinstance(inner, cst.Slice)
        step = inner.step
        if step is not None and not (isinstance(step, cst.Integer) and step.value == "1"):
            if not (isinstance(step, cst.Integer) and int(step.value, 0) > 1):
                return None  # a step we cannot read
            if not _is_one(size):
                return f"a step slice of dimension {dim} skips elements"
        restricted = inner.lower is not None or inner.upper is not None
        if restricted and outer_kept and not _is_one(size):
            return f"a restricted slice of dimension {dim} leaves gaps between rows"
        if not _is_one(size) and not _single_element(inner):
            outer_kept = True
    return None


def _is_int_name(node: cst.BaseExpression) -> bool:
    """By convention, ``i``, ``idx``, ``row``... hold integers; anything else may be a tensor."""
    name = (dotted(node) or "").rsplit(".", 1)[-1].lower()
    return name in {"i", "j", "k", "idx", "index", "row", "col", "b", "layer", "layer_id"}


def _single_element(inner: cst.Slice) -> bool:
    """``a:a+1`` with literal bounds that differ by one keeps one element."""
    lower, upper = inner.lower, inner.upper
    if isinstance(lower, cst.Integer) and isinstance(upper, cst.Integer):
        return int(upper.value, 0) - int(lower.value, 0) <= 1
    return upper is not None and lower is None and isinstance(upper, cst.Integer) and upper.value in ("0", "1")


def _is_one(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1"


def _is_method(node: cst.BaseExpression | None, name: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == name


def _args(call: cst.BaseExpression) -> list[cst.Arg]:
    return list(call.args) if isinstance(call, cst.Call) else []


def _mentions_transpose(node: cst.BaseExpression) -> bool:
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.attr.value in (_TRANSPOSES | {"T", "mT"}):
            return True
        stack.extend(children(current))
    return False
