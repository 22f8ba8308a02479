"""Non_blocking device-to-host copies and the host reads that may come too early (PIN004).

``cpu = gpu.to("cpu", non_blocking=True)`` returns at once; the pinned destination is filled when
the copy runs on the stream. A host read before a synchronisation reads stale data.

The set of copies not yet synchronised is kept in the interpreter's environment under
``PENDING_KEY`` (a key no Python name can spell), so branches merge it and loops iterate it like any
other value: a copy is pending after a branch when it is pending on *some* path. A synchronisation
binds it to the empty set.

What counts as a synchronisation is decided per call (``may_synchronize``): precision first, every
call that pinlint cannot show to be free of synchronisation counts as one (project functions,
methods of unknown objects, ``torch`` functions it does not know, blocking copies, pageable or
unknown non_blocking host-to-device copies, which CUDA may synchronise with the stream).

Everything here runs only when PIN004 is selected (``EventSink.wants_d2h``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.callargs import keyword_args, non_blocking, positional
from pinlint.analysis.devices import RUNTIME_OR_ACCELERATOR, classify_device
from pinlint.analysis.events import EventSink, UnsyncedHostRead, strip_views
from pinlint.analysis.scopes import dotted
from pinlint.analysis.values import HOST_KINDS, UNKNOWN, Kind, Origin, Value, is_host, is_true, kinds

if TYPE_CHECKING:
    from pinlint.analysis.env import Env
    from pinlint.analysis.scopes import ScopeNames

#: The environment key holding the pending copies' markers.
PENDING_KEY = "<d2h-pending>"
#: ``Origin.what`` of a marker: the value of ``gpu.to("cpu", non_blocking=True)``.
MARK = "<d2h>"


class D2HContext(Protocol):
    """What the tracker reads of the interpreter."""

    env: Env
    events: EventSink
    names: ScopeNames
    statement: cst.CSTNode
    truth_test: cst.CSTNode | None

    def value_of(self, node: cst.BaseExpression) -> Value: ...


@dataclass(frozen=True)
class D2HCopy:
    call: cst.Call
    api: str
    statement: cst.CSTNode
    #: For ``host.copy_(gpu, ...)``: the destination's name or attribute chain, and its value then
    #: (a read must see the same binding).
    dest_key: str | None = None
    dest_value: Value | None = None

    @property
    def marker(self) -> Origin:
        return Origin(Kind.UNKNOWN, self.call, what=MARK)


def _copies(ctx: D2HContext) -> dict[int, D2HCopy]:
    return ctx.events.d2h_copies


def _pending(ctx: D2HContext) -> Value:
    return ctx.env.get(PENDING_KEY) or frozenset()


def _add_pending(ctx: D2HContext, copy: D2HCopy) -> None:
    _copies(ctx)[id(copy.call)] = copy
    ctx.env.set(PENDING_KEY, _pending(ctx) | {copy.marker})


# ---------------------------------------------------------------------------- the copies
def copied_to_host(ctx: D2HContext, call: cst.Call, receiver: Value) -> Value:
    """``x.to("cpu", non_blocking=True)`` (x not provably on the host): its value."""
    if not ctx.events.wants_d2h:
        return UNKNOWN
    if not receiver or kinds(receiver) <= {Kind.PYDATA, Kind.NUMPY}:
        return UNKNOWN  # not a tensor we know: `.to` is someone else's method
    copy = D2HCopy(call, ".to", ctx.statement)
    _add_pending(ctx, copy)
    return frozenset({copy.marker})


def copied_into_host(
    ctx: D2HContext, call: cst.Call, receiver_node: cst.BaseExpression, receiver: Value, source: Value
) -> None:
    """``host.copy_(src, non_blocking=True)`` with a provably host destination."""
    if not ctx.events.wants_d2h:
        return
    if is_host(source) or kinds(source) <= {Kind.PYDATA, Kind.NUMPY}:
        return  # host to host: a plain memcpy, done when copy_ returns
    if not all(o.kind is Kind.PINNED or o.what == MARK for o in receiver):
        # Into pageable (or not provably pinned) memory CUDA returns only once the copy is done:
        # nothing is left in flight (and the copy waits for the stream: a synchronisation).
        return
    key = dotted(strip_views(receiver_node))
    if key is None:
        return  # a destination we could not name again at a read
    _add_pending(ctx, D2HCopy(call, ".copy_", ctx.statement, key, ctx.env.get(key)))


# ---------------------------------------------------------------------------- the reads
def _read_copies(ctx: D2HContext, node: cst.BaseExpression) -> list[D2HCopy]:
    """The pending copies whose destination ``node`` is (or is a view of)."""
    pending = _pending(ctx)
    if not pending:
        return []
    copies = _copies(ctx)
    found: list[D2HCopy] = []
    for origin in ctx.value_of(node):
        if origin.what == MARK and origin in pending:
            found.append(copies[id(origin.node)])
    key = dotted(strip_views(node))
    if key is not None:
        for marker in pending:
            copy = copies.get(id(marker.node))
            if copy is not None and copy.dest_key == key and ctx.env.get(key) == copy.dest_value:
                found.append(copy)
    return found


def _leaves(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands a truth test or conversion of ``node`` reads: ``a[0] > 1 and not b`` reads
    ``a[0]`` and ``b`` (identity tests, ``is``/``is not``, read nothing)."""
    out: list[cst.BaseExpression] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Comparison):
            if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in current.comparisons):
                continue
            stack.append(current.left)
            stack.extend(c.comparator for c in current.comparisons)
        elif isinstance(current, (cst.BinaryOperation, cst.BooleanOperation)):
            stack.extend((current.left, current.right))
        elif isinstance(current, cst.UnaryOperation):
            stack.append(current.expression)
        else:
            out.append(current)
    return out


def _report(ctx: D2HContext, node: cst.BaseExpression, how: str, copies: list[D2HCopy]) -> None:
    events = ctx.events
    for copy in copies:
        key = ("d2h", id(copy.call))
        if key in events._seen:
            continue
        first = id(ctx.statement) not in events.d2h_read_statements
        events.d2h_read_statements.add(id(ctx.statement))
        event = UnsyncedHostRead(copy.call, copy.api, copy.statement, node, how, ctx.statement, first)
        events.add(event, key)


def computed(ctx: D2HContext, node: cst.BinaryOperation | cst.Comparison | cst.UnaryOperation) -> None:
    """Arithmetic or a comparison (already evaluated): on a host tensor the CPU computes it at once,
    reading the data. A comparison that is itself a truth test is reported as one (by the caller)."""
    if not ctx.events.wants_d2h or not _pending(ctx):
        return
    if isinstance(node, cst.Comparison):
        if node is ctx.statement or node is ctx.truth_test:
            return  # `if cpu[0] > 0:`: the test's own read follows, as "a truth test"
        read(ctx, node, "a comparison")
    else:
        read(ctx, node, "arithmetic")


def read(ctx: D2HContext, node: cst.BaseExpression, how: str) -> None:
    """``node`` (already evaluated) is read on the host: a truth test, a conversion, iteration."""
    if not ctx.events.wants_d2h or not _pending(ctx):
        return
    for leaf in _leaves(node):
        copies = _read_copies(ctx, leaf)
        if copies:
            _report(ctx, leaf, how, copies)


# ---------------------------------------------------------------------------- calls
def after_call(ctx: D2HContext, call: cst.Call) -> None:
    """A call was evaluated: report the pending destinations it reads, then forget every pending
    copy if it may synchronise."""
    if not _pending(ctx):
        return  # nothing in flight: the common case, one dictionary lookup
    if id(call) in _copies(ctx):
        return  # the non_blocking copy itself
    func = call.func
    torch_name = ctx.names.torch_function(func)
    if isinstance(func, cst.Attribute) and (
        func.attr.value in torch_api.D2H_READING_METHODS or func.attr.value in torch_api.D2H_HOST_COMPUTING_METHODS
    ):
        copies = _read_copies(ctx, func.value)
        if copies:
            _report(ctx, func.value, f"`.{func.attr.value}()`", copies)
    elif torch_name in torch_api.D2H_HOST_COMPUTING_FUNCTIONS:
        # `torch.cat([cpu, other])`: the host kernel reads every tensor it is given.
        for arg in call.args:
            elements = arg.value.elements if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg.value]
            for element in elements:
                node = element.value if isinstance(element, cst.BaseElement) else element
                read(ctx, node, f"`torch.{torch_name}()`")
    elif isinstance(func, cst.Name) and func.value in torch_api.D2H_READING_BUILTINS and func.value not in ctx.env:
        for arg in call.args:
            read(ctx, arg.value, f"`{func.value}()`")
    elif ctx.names.is_numpy_call(func) and _numpy_name(func) in torch_api.D2H_NUMPY_COPIES:
        for arg in call.args:
            read(ctx, arg.value, f"`numpy.{_numpy_name(func)}()`")
    if may_synchronize(ctx, call):
        ctx.env.set(PENDING_KEY, frozenset())


def _numpy_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _host_like(value: Value) -> bool:
    """Every path gives a host tensor (a pending destination included)."""
    return bool(value) and all(o.kind in HOST_KINDS or o.what == MARK for o in value)


def _maybe_device(ctx: D2HContext, node: cst.BaseExpression) -> bool:
    """Could ``node`` be a device tensor (so converting it would synchronise)?"""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
        return False
    if isinstance(node, cst.FormattedString):
        # `f"{x}"` formats x: a device tensor there synchronises. Only literal parts are safe.
        return any(isinstance(part, cst.FormattedStringExpression) for part in node.parts)
    value = ctx.value_of(node)
    if _host_like(value):
        return False
    return not value or bool(kinds(value) & {Kind.DEVICE, Kind.UNKNOWN})


def may_synchronize(ctx: D2HContext, call: cst.Call) -> bool:
    """Whether evaluating ``call`` may wait for the device (every bail-out to True is precision:
    a call we cannot see into may synchronise)."""
    func = call.func
    names = ctx.names
    torch_name = names.torch_function(func)
    if torch_name is not None:
        return _torch_function_syncs(ctx, torch_name, call)
    if isinstance(func, cst.Name):
        if func.value in ctx.env:
            return True  # a local callable: unknown code
        if func.value in torch_api.D2H_INERT_BUILTINS or func.value in torch_api.D2H_VIEW_BUILTINS:
            return False
        if func.value in torch_api.D2H_READING_BUILTINS:
            return any(_maybe_device(ctx, arg.value) for arg in call.args)
        return True  # a project or library function: it may synchronise
    if not isinstance(func, cst.Attribute):
        return True  # `f()()`, `table[k]()`: unknown code
    method = func.attr.value
    chain = dotted(func)
    if chain is not None and chain.split(".", 1)[0] in names.torch_modules:
        # `torch.cuda.synchronize()` synchronises; `torch.cuda.current_stream()` does not.
        return method not in torch_api.D2H_NON_BLOCKING_TORCH_CALLS
    if method in torch_api.D2H_STREAM_SIDE_METHODS:
        return False  # enqueued on a stream: the host does not wait
    if isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
        return method == "format" and any(_maybe_device(ctx, a.value) for a in call.args)
    receiver = ctx.value_of(func.value)
    k = kinds(receiver)
    if receiver and k <= {Kind.PYDATA, Kind.NUMPY, Kind.DTYPE}:
        return False  # Python data or numpy: no torch work
    if _host_like(receiver):
        return _host_method_syncs(ctx, method, call, receiver)
    if method in torch_api.D2H_LAUNCH_METHODS:
        return _launch_syncs(ctx, method, call, receiver)
    return True  # `.synchronize()`, `.wait()`, `.nonzero()`, any other method: may wait


def _torch_function_syncs(ctx: D2HContext, name: str, call: cst.Call) -> bool:
    if name not in torch_api.D2H_NON_BLOCKING_TORCH_FUNCTIONS:
        return True  # a torch function we do not know (`nonzero`, `unique`...): it may wait
    args = positional(call)
    if args is None:
        return True  # `*args`: not visible
    if name == "where" and len(args) == 1:
        return True  # `torch.where(cond)` is `nonzero`: data-dependent, it waits
    if name in torch_api.RUNTIME_DATA_TO_DEVICE_FACTORIES:
        device = keyword_args(call).get("device")
        if device is not None and classify_device(device.value, ctx.names.torch_function) in RUNTIME_OR_ACCELERATOR:
            return True  # `torch.tensor(data, device=d)` copies with a blocking copy
        return bool(args) and _maybe_device(ctx, args[0])  # a list of device scalars waits
    return False


def _nb(ctx: D2HContext, call: cst.Call, position: int) -> bool:
    args = positional(call)
    return args is not None and non_blocking(call, args, position, lambda n: is_true(ctx.value_of(n)))


def _host_method_syncs(ctx: D2HContext, method: str, call: cst.Call, receiver: Value) -> bool:
    """A method of a host tensor: host work, except copies to or from a device."""
    if method in ("to", "cuda"):
        if method == "to" and _is_cast(ctx, call):
            return False  # a dtype cast on the host
        if _nb(ctx, call, 1) or _nb(ctx, call, 2):
            # Pinned (a D2H destination is): asynchronous. Pageable: CUDA may synchronise with the
            # stream to stage it.
            return not all(o.kind is Kind.PINNED or o.what == MARK for o in receiver)
        return True  # a blocking copy to a device waits
    if method == "copy_":
        args = positional(call)
        return not (args and _host_like(ctx.value_of(args[0])))  # from a device: a blocking D2H copy
    return False  # host computation on host memory


def _launch_syncs(ctx: D2HContext, method: str, call: cst.Call, receiver: Value) -> bool:
    """A tensor method that launches work, on a device tensor or a value of unknown kind."""
    if method in ("to", "cuda"):
        if _is_cast(ctx, call):
            return False  # a dtype cast where the tensor lives
        if _nb(ctx, call, 1) or _nb(ctx, call, 2):
            # From a device tensor: asynchronous. From an unknown value: it may be pageable host
            # memory, which CUDA may synchronise with the stream to stage.
            return not (receiver and kinds(receiver) == {Kind.DEVICE})
        return True  # a blocking copy waits
    if method == "copy_":
        return not _nb(ctx, call, 1)  # a blocking copy waits
    return False


def _is_cast(ctx: D2HContext, call: cst.Call) -> bool:
    """``x.to(torch.float16)`` / ``x.to(dtype=...)``: no device named."""
    args = positional(call)
    if args is None:
        return False
    keywords = keyword_args(call)
    if "device" in keywords:
        return False
    if not args:
        return "dtype" in keywords
    first = args[0]
    return ctx.names.is_dtype(first) or kinds(ctx.value_of(first)) == {Kind.DTYPE}
