"""What torch calls do to host provenance: one small handler per API family, in two tables
(``torch.<name>(...)`` functions and tensor methods), read from ``pinlint.torch_api``.

Handlers see the interpreter only through ``Context``; they report copies and device
constructions to its event sink. Every bail-out to ``UNKNOWN`` says why.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import d2h, views
from pinlint.analysis.callargs import (
    is_empty_data,
    is_zero_size,
    keyword_args,
    non_blocking,
    non_blocking_argument,
    positional,
)
from pinlint.analysis.device_tests import true_when_host_to_device
from pinlint.analysis.devices import RUNTIME_OR_ACCELERATOR, DeviceClass, classify_device
from pinlint.analysis.scopes import dotted
from pinlint.analysis.torch_context import Context, allocated_value, device_kw
from pinlint.analysis.values import (
    DEVICE,
    HOST,
    HOST_DEVICE,
    HOST_KINDS,
    MAYBE_PINNED_KINDS,
    NUMPY,
    PINNED,
    PINNED_ARRAY,
    PINNED_ARRAY_ORIGIN,
    PYDATA,
    UNKNOWN,
    Kind,
    Value,
    allocated_on,
    cast,
    combine,
    construction_data,
    derived,
    is_host,
    is_pydata,
    is_tensor,
    kinds,
    loaded,
    non_scalar,
    only,
    pageable,
    to_host,
)
from pinlint.analysis.values import (
    is_true as is_true_value,
)


def _check_device_construction(ctx: Context, call: cst.Call, name: str, data: Value) -> None:
    if not ctx.events.wants_constructions:
        return
    device, arg = device_kw(ctx, call)
    if arg is None or device not in RUNTIME_OR_ACCELERATOR:
        return  # no device=, or provably the host / a non-copy target such as "meta"
    kind = construction_data(data)
    if name == "tensor":
        if data and only(data, Kind.DEVICE):
            return  # already on an accelerator: a device-to-device copy, no host involved
    elif kind not in ("python", "numpy", "tensor") or (kind == "tensor" and not is_host(data)):
        # as_tensor/asarray do not copy data already on the device: only data that is provably
        # on the host is copied (from pageable memory) by the call itself.
        return
    requires_grad = "requires_grad" in keyword_args(call)
    ctx.events.construction(call, name, arg, ctx.statement, data=kind, requires_grad=requires_grad)


# ---------------------------------------------------------------------------- torch.<name>()
TorchHandler = Callable[[Context, str, cst.Call, list[Value], Value], Value]


def _tensor(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    _check_device_construction(ctx, call, name, first)
    device, _ = device_kw(ctx, call)
    if Kind.DEVICE in kinds(first) and is_tensor(first):
        # torch.tensor(device_tensor) copies on its device; with device= it is somewhere else.
        return DEVICE if device is DeviceClass.DEFAULT else UNKNOWN
    if is_tensor(first) or only(first, Kind.NUMPY):
        if device not in (DeviceClass.DEFAULT, DeviceClass.HOST):
            # A non-copy target has no memory; a run-time device: see allocated_value.
            return UNKNOWN if device is DeviceClass.OTHER else DEVICE
        if ctx.default_device_unknown and device is DeviceClass.DEFAULT:
            return UNKNOWN  # a default device may be set: it may allocate there
        what = "torch.tensor(<numpy array>)" if only(first, Kind.NUMPY) else "torch.tensor(<tensor>)"
        ctx.data_not_python.add(id(call))  # another walk (a loop's first) may have seen Python data
        # `pin_memory=True` raises for numpy or tensor data: this cannot be pinned at birth.
        return pageable(call, pinnable=False, what=what, factory=name)
    return allocated_value(ctx, call, "torch.tensor(...)", factory=name, data=first)


def _factory(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    if name in torch_api.SIZED_FACTORIES and is_zero_size(call):
        return UNKNOWN  # an empty tensor copies no bytes: nothing to pin
    return allocated_value(ctx, call, f"torch.{name}(...)", factory=name)


def _like_factory(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    device, _ = device_kw(ctx, call)
    if device is DeviceClass.DEFAULT and not is_host(first):
        if first and only(first, Kind.DEVICE):
            return DEVICE
        return UNKNOWN  # allocates on its argument's device, which we do not know
    return allocated_value(ctx, call, f"torch.{name}(...)", factory=name)


def _as_tensor(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    _check_device_construction(ctx, call, name, first)
    device, _ = device_kw(ctx, call)
    if device in RUNTIME_OR_ACCELERATOR:
        return DEVICE  # a run-time device: see allocated_value
    if device is DeviceClass.OTHER:
        return UNKNOWN  # e.g. "meta": no memory at all
    if ctx.default_device_unknown and device is DeviceClass.DEFAULT:
        return UNKNOWN  # a default device may be set: it may allocate there
    if (first and is_pydata(first)) or only(first, Kind.NUMPY):
        return pageable(call, pinnable=False, what=f"torch.{name}(...)", factory=name)
    if is_tensor(first):
        # as_tensor of a tensor returns it (or a converted copy on the same device).
        if "dtype" not in keyword_args(call):
            return first
        return derived(first, call, f"torch.{name}(...)")
    return UNKNOWN  # data of unknown provenance: it may already be anywhere


def _memory_sharing(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    if PINNED_ARRAY_ORIGIN in first:
        return UNKNOWN  # `torch.from_numpy(pinned.numpy())`: maybe the pinned memory itself
    if name == "from_file":
        device, _ = device_kw(ctx, call)
        if "pin_memory" in keyword_args(call) or device not in (DeviceClass.DEFAULT, DeviceClass.HOST):
            return UNKNOWN  # pinned as asked, or on a device
        if device is DeviceClass.DEFAULT and ctx.default_device_unknown:
            return UNKNOWN  # a default device may be set
        return pageable(call, pinnable=False, what="torch.from_file(...)", factory=name)
    if name == "frombuffer" and not (is_pydata(first) or only(first, Kind.NUMPY) or _python_buffer(call)):
        # A buffer of unknown origin may wrap any memory (`(c_uint8 * n).from_address(ptr)` of a
        # pinned host buffer): pageable only when Python (or numpy) allocated it. It is host
        # memory all the same (a copy into it is no host-to-device copy).
        return HOST
    return pageable(call, pinnable=False, what=f"torch.{name}(...)", factory=name)


def _python_buffer(call: cst.Call) -> bool:
    """``torch.frombuffer(bytearray(n))``, ``(b"...")``: the buffer is made by the call itself."""
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    if type(first) is cst.SimpleString:
        return True
    return (
        type(first) is cst.Call
        and type(first.func) is cst.Name
        and first.func.value in torch_api.PYTHON_BUFFER_BUILTINS
    )


def _combining(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    inputs: list[Value] = []
    for arg, value in zip(call.args, args):
        if arg.keyword is not None:
            continue
        elements = ctx.list_elements(arg.value)
        if type(arg.value) in (cst.List, cst.Tuple):
            inputs.extend(ctx.value_of(e.value) for e in arg.value.elements)
        elif type(arg.value) is cst.ListComp:
            # `torch.cat([torch.arange(n) for n in lens])`: each item is what the element gives.
            # (A bare generator expression is no sequence: `torch.cat(<genexpr>)` raises.)
            inputs.append(ctx.value_of(arg.value.elt))
        elif elements is not None:
            inputs.append(elements)  # `torch.cat(parts)` of a list built here
        elif type(arg.value) is cst.Call and ".[]" in (held := ctx.container_of(arg.value) or {}):
            inputs.append(held[".[]"])  # `torch.stack(tuple(t.cpu() for t in ts))`, a helper's list
        elif (items := ctx.parameter_items(arg.value, call)) is not None:
            inputs.append(items)  # `torch.cat(ws)` of a list parameter: what each caller's list holds
        else:
            inputs.append(value)
    if name in torch_api.DATA_FIRST_FUNCTIONS:
        inputs = inputs[:1]  # the other arguments are counts, sizes or dims
    if not inputs or any(is_pydata(v) for v in inputs[:1]):
        return UNKNOWN  # e.g. torch.cat(list_of_tensors): the elements are not visible
    if name in torch_api.MAYBE_SAME_MEMORY_METHODS:
        return cast(inputs[0], call, f"torch.{name}(...)")  # `torch.flatten(pinned)`: maybe itself
    if name in torch_api.SAME_DEVICE_FUNCTIONS:
        hosts = [v for v in inputs if is_host(v)]
        if hosts and all(kinds(v) <= HOST_KINDS | {Kind.UNKNOWN} for v in inputs):
            # `torch.cat((acc, t.cpu()))`: a CUDA `acc` would raise, so past the call every
            # input was on the host (and the result is new, pageable memory).
            inputs = hosts
    result = combine(inputs, call, f"torch.{name}(...)")
    return non_scalar(result, call) if name in torch_api.NON_SCALAR_RESULT_FUNCTIONS else result


def _load(ctx: Context, name: str, call: cst.Call, args: list[Value], first: Value) -> Value:
    """``torch.load(f, map_location="cpu")``: host tensors in pageable memory."""
    location = keyword_args(call).get("map_location")
    if location is not None and classify_device(location.value, ctx.names.torch_function) is DeviceClass.HOST:
        return loaded(call, "torch.load(...)")
    return UNKNOWN  # saved devices are restored: the tensors may be anywhere


def _table() -> dict[str, TorchHandler]:
    table: dict[str, TorchHandler] = {}
    families: list[tuple[frozenset[str], TorchHandler]] = [
        (frozenset({"tensor"}), _tensor),
        (torch_api.PINNABLE_FACTORIES, _factory),
        (torch_api.PINNABLE_LIKE_FACTORIES, _like_factory),
        (torch_api.UNPINNABLE_DATA_FACTORIES, _as_tensor),
        (torch_api.MEMORY_SHARING_FACTORIES, _memory_sharing),
        (torch_api.COMBINING_FUNCTIONS, _combining),
        (frozenset({"load"}), _load),
    ]
    for names, handler in families:  # earlier families win where names overlap
        for name in names:
            table.setdefault(name, handler)
    return table


TORCH_FUNCTIONS: dict[str, TorchHandler] = _table()

_EMPTY_DATA_FACTORIES = frozenset({"tensor"}) | torch_api.UNPINNABLE_DATA_FACTORIES


def torch_call(ctx: Context, name: str, call: cst.Call, arg_values: list[Value]) -> Value:
    """The value of ``torch.<name>(...)``."""
    keywords = keyword_args(call)
    if "out" in keywords:
        return ctx.value_of(keywords["out"].value)  # the result *is* `out`
    positional_values = [v for arg, v in zip(call.args, arg_values) if arg.keyword is None and not arg.star]
    first = positional_values[0] if positional_values else UNKNOWN
    if name in _EMPTY_DATA_FACTORIES and is_empty_data(call):
        return UNKNOWN  # `torch.tensor([])`: no bytes to copy, nothing to pin or wait for
    handler = TORCH_FUNCTIONS.get(name)
    if handler is None:
        return UNKNOWN  # a torch function pinlint knows nothing about
    return handler(ctx, name, call, arg_values, first)


# ---------------------------------------------------------------------------- tensor methods
def _holds_true(ctx: Context) -> Callable[[cst.BaseExpression], bool]:
    """``non_blocking=nb`` counts when ``nb`` is ``True`` on every path (a local bound to it, or a
    parameter whose default is ``True``)."""
    return lambda node: is_true_value(ctx.value_of(node))


def _maybe_non_blocking(
    ctx: Context,
    call: cst.Call,
    args: list[cst.BaseExpression],
    position: int,
    copy: tuple[cst.BaseExpression, Value, cst.Call, str, cst.BaseExpression | None, cst.BaseExpression | None],
) -> None:
    """``non_blocking=nb`` where ``nb`` is a parameter without a default: the copy is
    non_blocking for callers that pass ``True`` (they report it, see ``forward_arguments``)."""
    node = non_blocking_argument(call, args, position)
    if type(node) is not cst.Name:
        return
    value = ctx.value_of(node)
    if len(value) == 1 and next(iter(value)).parameter == node.value:
        ctx.events.conditional_copy(node.value, *copy, ctx.statement, ctx.loops)


def _unguarded(
    ctx: Context,
    value: Value,
    call: cst.Call,
    args: list[cst.BaseExpression],
    position: int,
    device: cst.BaseExpression | None = None,
) -> Value:
    """``value`` without the origins that reach here only where the copy's ``non_blocking=flag``
    is false (``if pin: t = t.pin_memory()`` then ``t.to(dev, non_blocking=pin)``), or only where
    its target device is no accelerator (``if dev.type == "cuda": t = t.pin_memory()``)."""
    guarded = ctx.flag_guarded
    if not guarded:
        return value
    node = non_blocking_argument(call, args, position)
    keys = {node.value} if type(node) is cst.Name else set()
    target = dotted(device) if device is not None else None
    if target is not None:
        keys.add(f"device:{target}")
    if not keys:
        return value
    kept = frozenset(o for o in value if not keys & guarded.get(o, set()))
    if kept == value:
        return value
    return kept or UNKNOWN


MethodHandler = Callable[[Context, str, cst.BaseExpression, Value, cst.Call], Value]


def _to(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    args = positional(call)
    keywords = keyword_args(call)
    if args is None:
        return UNKNOWN  # `x.to(*args, **kw)`: the target is not visible
    device: cst.BaseExpression | None = keywords["device"].value if "device" in keywords else None
    if type(device) is cst.Name and device.value == "None":
        device = None  # `.to(device=None, dtype=...)`: no device, a cast
    nb_position = 2
    if device is None and args:
        if ctx.names.is_dtype(args[0]) or only(ctx.value_of(args[0]), Kind.DTYPE):
            nb_position = 1  # `.to(dtype, non_blocking)`: a cast, not a copy
        else:
            device = args[0]
            if is_tensor(ctx.value_of(args[0])):
                nb_position = 1  # `.to(other_tensor, non_blocking)`
    is_non_blocking = non_blocking(call, args, nb_position, _holds_true(ctx))
    if not is_non_blocking and device is not None:
        flag = non_blocking_argument(call, args, nb_position)
        is_non_blocking = flag is not None and true_when_host_to_device(flag, receiver_node, device)
    if device is None:
        return cast(receiver, call, "a dtype cast")  # dtype-only cast: a new host tensor (or itself)
    other_value = ctx.value_of(device)
    if type(device) is cst.Attribute and device.attr.value == "device" and is_host(ctx.value_of(device.value)):
        other_value = ctx.value_of(device.value)  # `.to(u.device)` of a host tensor `u` (or of itself): the host
    if is_tensor(other_value):
        if is_host(other_value):
            target = DeviceClass.HOST
        elif only(other_value, Kind.DEVICE):
            target = DeviceClass.ACCELERATOR
        else:
            target = DeviceClass.UNKNOWN  # `.to(other)` where other's device varies by path
    else:
        target = classify_device(device, ctx.names.torch_function)
        if target is DeviceClass.UNKNOWN and other_value == HOST_DEVICE:
            target = DeviceClass.HOST  # `dev = "cpu"` (or `torch.device("cpu")`) on every path
    if target is DeviceClass.HOST:
        if is_host(receiver):
            return receiver  # already on the host: .to("cpu") returns self
        if is_non_blocking:
            # A non_blocking D2H copy lands in pinned memory, filled later (PIN004 tracks it).
            return d2h.copied_to_host(ctx, call, receiver)  # type: ignore[arg-type]
        if not receiver or kinds(receiver) <= {Kind.PYDATA, Kind.NUMPY}:
            return UNKNOWN  # not a tensor we know: `.to` is someone else's method
        return to_host(receiver, call, '.to("cpu")')  # a D2H copy lands in pageable memory
    if target is DeviceClass.OTHER:
        return UNKNOWN  # e.g. "meta": no memory at all
    if is_non_blocking:
        receiver = _unguarded(ctx, receiver, call, args, nb_position, device)
        ctx.events.copy(receiver_node, receiver, call, ".to", device, None, ctx.statement, ctx.loops)
        views.strided_copy(ctx, call, ".to", receiver_node, None)  # type: ignore[arg-type]
    else:
        _maybe_non_blocking(ctx, call, args, nb_position, (receiver_node, receiver, call, ".to", device, None))
        if (
            receiver
            and all(o.kind is Kind.PAGEABLE for o in receiver)
            and other_value
            and all(o.whole_parameter for o in other_value)
            and "device" not in keywords
        ):
            # `.to(t)` of a tensor parameter `t` (t's device and dtype): a device tensor here, and
            # for a call passing a host tensor, pageable host memory (this host tensor, or a cast).
            return allocated_on(other_value, call, "`.to(<tensor>)`", "", False, like_tensor=True)
    return DEVICE


def _cuda(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    args = positional(call)
    if args is None:
        return DEVICE  # `.cuda(*args)`: a device tensor either way; the flag is not visible
    keywords = keyword_args(call)
    device = keywords["device"].value if "device" in keywords else (args[0] if args else None)
    if non_blocking(call, args, 1, _holds_true(ctx)):
        receiver = _unguarded(ctx, receiver, call, args, 1)
        ctx.events.copy(receiver_node, receiver, call, ".cuda", device, None, ctx.statement, ctx.loops)
        views.strided_copy(ctx, call, ".cuda", receiver_node, None)  # type: ignore[arg-type]
    else:
        _maybe_non_blocking(ctx, call, args, 1, (receiver_node, receiver, call, ".cuda", device, None))
    return DEVICE


def _copy(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    args = positional(call)
    if not args:
        return receiver  # `dst.copy_(*args)` or no source: nothing visible is copied
    if not is_host(receiver) and any(o.kind in HOST_KINDS for o in receiver):
        # Host memory on some path, a device's on another (`self.buf` chosen by a flag): which
        # path copies to a device is decided at run time, perhaps by the test that also chose
        # the source. Not a host-to-device copy we can stand behind.
        return receiver
    if non_blocking(call, args, 1, _holds_true(ctx)) and not is_host(receiver):
        # The destination is not provably host memory: a host-to-device copy.
        source = _unguarded(ctx, ctx.value_of(args[0]), call, args, 1)
        ctx.events.copy(args[0], source, call, ".copy_", None, receiver_node, ctx.statement, ctx.loops)
        views.strided_copy(ctx, call, ".copy_", args[0], receiver_node)  # type: ignore[arg-type]
    elif not is_host(receiver) and not non_blocking(call, args, 1, _holds_true(ctx)):
        _maybe_non_blocking(ctx, call, args, 1, (args[0], ctx.value_of(args[0]), call, ".copy_", None, receiver_node))
    elif ctx.events.wants_d2h and non_blocking(call, args, 1, _holds_true(ctx)):
        # Into provably host memory from a source that may be on a device: filled later (PIN004).
        d2h.copied_into_host(ctx, call, receiver_node, receiver, ctx.value_of(args[0]))  # type: ignore[arg-type]
    return receiver  # copy_ returns its destination


def _pin(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    return PINNED


def _view(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    return receiver  # a view shares the receiver's storage: same origin, same pinnedness


def _transposed(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    if any(o.kind in MAYBE_PINNED_KINDS for o in receiver):
        return UNKNOWN  # a strided view of pinned memory: PIN005's (see `views`), not a new tensor
    # Of pageable memory: what `.to()` copies (gathered first) is pageable, and pinning the
    # construction would not make it asynchronous: a result of its own, as arithmetic's is.
    return derived(receiver, call, f".{method}()")


def _to_host(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    if receiver and kinds(receiver) <= MAYBE_PINNED_KINDS:
        return receiver  # .cpu() of a host tensor returns it unchanged
    if not receiver or kinds(receiver) <= {Kind.PYDATA, Kind.NUMPY}:
        return UNKNOWN  # not a tensor we know: `.cpu` is someone else's method
    return to_host(receiver, call, ".cpu()")


def _new_tensor(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    if method in torch_api.CAST_METHODS or method in torch_api.MAYBE_SAME_MEMORY_METHODS:
        return cast(receiver, call, f".{method}()")
    # Elementwise results keep the receiver's shape (a vector stays one).
    return derived(receiver, call, f".{method}()", elementwise=method in torch_api.ELEMENTWISE_METHODS)


def _numpy(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    if any(o.kind in MAYBE_PINNED_KINDS for o in receiver):
        return PINNED_ARRAY  # shares the (perhaps) pinned tensor's memory
    return NUMPY


def _python_data(
    ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call
) -> Value:
    return PYDATA


def _new_factory(
    ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call
) -> Value:
    device, _ = device_kw(ctx, call)
    if device is DeviceClass.DEFAULT:
        if is_host(receiver):
            return allocated_value(ctx, call, f".{method}(...)", factory=method)
        # Allocates on the receiver's device: a device value, or not known.
        return DEVICE if only(receiver, Kind.DEVICE) else UNKNOWN
    return allocated_value(ctx, call, f".{method}(...)", factory=method)


def _method_table() -> dict[str, MethodHandler]:
    table: dict[str, MethodHandler] = {}
    families: list[tuple[frozenset[str], MethodHandler]] = [
        (frozenset({torch_api.TO_METHOD}), _to),
        (frozenset({torch_api.CUDA_METHOD}), _cuda),
        (frozenset({torch_api.COPY_METHOD}), _copy),
        (frozenset({torch_api.PIN_METHOD}), _pin),
        (torch_api.VIEW_METHODS, _view),
        (torch_api.TRANSPOSING_METHODS, _transposed),
        (torch_api.TO_HOST_METHODS, _to_host),
        (torch_api.NEW_TENSOR_METHODS, _new_tensor),
        (frozenset({"numpy"}), _numpy),
        (torch_api.PYTHON_DATA_METHODS, _python_data),
        (torch_api.PYTHON_NUMBER_METHODS, _python_data),
        (torch_api.PINNABLE_NEW_METHODS, _new_factory),
    ]
    for names, handler in families:  # earlier families win where names overlap
        for name in names:
            table.setdefault(name, handler)
    return table


TENSOR_METHODS: dict[str, MethodHandler] = _method_table()


def method_call(ctx: Context, method: str, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
    """The value of ``receiver.<method>(...)``."""
    handler = TENSOR_METHODS.get(method)
    if handler is None:
        if _returns_self(method) and is_tensor(receiver):
            return receiver  # `t.masked_fill_(m, 1)`: t itself, written in place
        if method == torch_api.SHARED_MEMORY_METHOD and receiver and kinds(receiver) == {Kind.PAGEABLE}:
            # New shared memory, which is not pinned: pinning where t was made would not help.
            return derived(receiver, call, f".{method}()")
        return UNKNOWN  # any other method: unknown provenance
    return handler(ctx, method, receiver_node, receiver, call)


def _returns_self(method: str) -> bool:
    """An in-place method that returns the tensor itself, in its own memory."""
    return method.endswith("_") and not method.endswith("__") and method not in torch_api.IN_PLACE_NOT_SELF
