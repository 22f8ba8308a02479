"""What a torch handler (``torch_semantics``) sees of the interpreter (``Context``), and the
allocation facts every factory handler shares: ``device=``, ``pin_memory=``, and what memory a
call that accepts ``pin_memory=`` allocates."""

from __future__ import annotations

from typing import Protocol

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.callargs import has_star_kwargs, keyword_args
from pinlint.analysis.devices import RUNTIME_OR_ACCELERATOR, DeviceClass, classify_device
from pinlint.analysis.events import EventSink
from pinlint.analysis.scopes import ScopeNames
from pinlint.analysis.values import (
    DEVICE,
    HOST_DEVICE,
    PINNED,
    UNKNOWN,
    Origin,
    Value,
    allocated_on,
    is_host,
    is_pydata,
    pageable,
    pin_switched,
)


class Context(Protocol):
    """The interpreter state a handler may read."""

    names: ScopeNames
    events: EventSink
    #: A default device may be set (``with torch.device(...)``, ``set_default_device``).
    default_device_unknown: bool
    #: The statement being walked (events read noqa comments on its rows).
    statement: cst.CSTNode
    #: ids of the factory calls evaluated at least once with data that is not provably Python
    #: data (a loop's later iteration may hand `torch.tensor` a numpy array).
    data_not_python: set[int]
    #: Pageable origins that reach a copy only where a flag (or a device test, ``device:<x>``)
    #: says the copy is no asynchronous H2D copy (see ``Evaluator.guard_by_flag``).
    flag_guarded: dict[Origin, set[str]]

    @property
    def loops(self) -> tuple[int, ...]:
        """ids of the loops being walked, innermost last."""
        ...

    def value_of(self, node: cst.BaseExpression) -> Value:
        """The value computed for an already evaluated expression (UNKNOWN if none)."""
        ...

    def list_elements(self, node: cst.BaseExpression) -> Value | None:
        """For a list this function built (``parts.append(t)``): its elements' values."""
        ...

    def is_sequence(self, node: cst.BaseExpression) -> bool:
        """``node`` is a list or tuple: one this function built, or a parameter annotated so."""
        ...

    def parameter_items(self, node: cst.BaseExpression, call: cst.Call) -> Value | None:
        """The items of a list parameter this function only reads, named for its callers."""
        ...

    def container_of(self, node: cst.BaseExpression) -> dict[str, Value] | None:
        """What the list, tuple or dict ``node`` (already evaluated) holds (``.[]``, ``.{}``)."""
        ...

    def known_false(self, node: cst.BaseExpression) -> bool:
        """``node`` (evaluated) is ``False`` on every path: the literal, a local, or a module constant."""
        ...


# ---------------------------------------------------------------------------- shared facts
def device_kw(ctx: Context, call: cst.Call) -> tuple[DeviceClass, cst.Arg | None]:
    arg = keyword_args(call).get("device")
    if arg is None:
        return (DeviceClass.DEFAULT, None)
    found = classify_device(arg.value, ctx.names.torch_function)
    if found is DeviceClass.UNKNOWN and ctx.value_of(arg.value) == HOST_DEVICE:
        return (DeviceClass.HOST, arg)  # `dev = "cpu"` on every path, then `device=dev`
    return (found, arg)


def _pinned_kw(ctx: Context, call: cst.Call) -> bool | None:
    """True: pin_memory=<not known to be false>; False: pin_memory=False, or a name bound to
    ``False`` on every path (``pin = False``, a module constant ``PIN = False``); None: absent."""
    arg = keyword_args(call).get("pin_memory")
    if arg is None:
        return None
    return not ctx.known_false(arg.value)


def _pin_parameter(ctx: Context, call: cst.Call) -> Value | None:
    """``pin_memory=pin`` of a parameter ``pin`` of the function (its callers decide): its value."""
    arg = keyword_args(call).get("pin_memory")
    if arg is None or type(arg.value) is not cst.Name:
        return None
    value = ctx.value_of(arg.value)
    return value if value and all(o.whole_parameter for o in value) else None


def allocated_value(ctx: Context, call: cst.Call, what: str, *, factory: str, data: Value | None = None) -> Value:
    """The value of a factory call that accepts ``pin_memory=`` (where it allocates)."""
    if has_star_kwargs(call):
        return UNKNOWN  # `**kwargs` may carry device= or pin_memory=
    pinned = _pinned_kw(ctx, call)
    device, arg = device_kw(ctx, call)
    if (
        device is DeviceClass.UNKNOWN
        and arg is not None
        and type(arg.value) is cst.Attribute
        and arg.value.attr.value == "device"
        and is_host(ctx.value_of(arg.value.value))
    ):
        device = DeviceClass.HOST  # `device=host_tensor.device`: where that tensor is, the host
    if device in RUNTIME_OR_ACCELERATOR and not pinned and arg is not None:
        where = ctx.value_of(arg.value)
        if where and all(o.computed == "device_of" for o in where) and len(where) == 1:
            # `device=grid.device` (or a name bound to it), a parameter's device: where a call
            # allocates is where its argument is (a host tensor passed in: a pageable host tensor).
            return allocated_on(
                next(iter(where)).inputs[0], call, what, factory, _vector(ctx, call, factory), like_tensor=True
            )
    if device in RUNTIME_OR_ACCELERATOR and not pinned and arg is not None:
        where = ctx.value_of(arg.value)
        if where and all(o.whole_parameter for o in where):
            # `device=device`, a parameter: where a caller's call allocates is that caller's
            # argument (a helper called with "cpu" builds a pageable host tensor).
            return allocated_on(where, call, what, factory, _vector(ctx, call, factory))
    if device in RUNTIME_OR_ACCELERATOR:
        # A run-time device (`device=dev`) may well be the host, but host-ness then rests on a
        # run-time condition: treated like a device value, so that a sibling path that is
        # host-pageable is not flagged on its own (precision first).
        return DEVICE
    if device is DeviceClass.OTHER:
        return UNKNOWN  # e.g. "meta": no memory at all
    if device is DeviceClass.DEFAULT and ctx.default_device_unknown:
        return UNKNOWN  # a default device may be set: the factory may allocate on it
    switch = _pin_parameter(ctx, call) if pinned else None
    if switch is not None:
        # `pin_memory=pin` of a parameter: a call passing `False` (or leaving a `False`
        # default) gets a pageable host tensor (replayed there); here, not known.
        return pin_switched(switch, call, what, factory, _vector(ctx, call, factory))
    if pinned:
        return PINNED
    data_is_python = data is not None and is_pydata(data)
    if not data_is_python:
        ctx.data_not_python.add(id(call))
    return pageable(
        call,
        pinnable=True,
        what=what,
        data_is_python=data_is_python,
        factory=factory,
        vector=_vector(ctx, call, factory),
    )


def _vector(ctx: Context, call: cst.Call, factory: str) -> bool:
    """The allocation is provably not 0-dimensional: list data, or sizes given."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if factory == "tensor":
        # A list or tuple (even empty: shape (0,)) makes a tensor of one dimension or more.
        return bool(args) and (isinstance(args[0], (cst.List, cst.ListComp, cst.Tuple)) or ctx.is_sequence(args[0]))
    if factory in ("arange", "linspace", "logspace", "randperm", "eye", "tril_indices", "triu_indices"):
        return True
    if factory in torch_api.SIZED_FACTORIES or factory == "empty_strided":
        # A size argument; `torch.zeros(())` is the 0-dim spelling.
        return bool(args) and not (isinstance(args[0], (cst.Tuple, cst.List)) and not args[0].elements)
    if factory == "randint":
        return any(isinstance(a, (cst.Tuple, cst.List)) and a.elements for a in args)
    return False
