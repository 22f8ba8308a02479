"""The host-provenance model: what an expression's value is, as far as one function shows.

A value is a set of possible *origins*, one per path that can produce it (branches and
conditional expressions union their origins). Each origin is one of:

* ``pageable``: a host tensor in ordinary (pageable) memory, born at ``node``. ``pinnable``
  says whether that birth could have taken ``pin_memory=`` (PIN001) or not (PIN002);
* ``pinned``: a host tensor in page-locked memory;
* ``host``: a host tensor whose pinnedness is not known (a parameter after a check that it is
  on the CPU): what is computed from it is pageable, the tensor itself is not flagged;
* ``device``: a tensor on an accelerator;
* ``pydata``: Python data (literals, comprehensions, ``len()``, ``.tolist()``): not a tensor,
  and safe to hand to ``torch.tensor(..., pin_memory=...)``;
* ``numpy``: a numpy array (``torch.tensor(arr, pin_memory=True)`` raises);
* ``unknown``: anything else (parameters, attributes set elsewhere, project calls).

Unknown is never flagged (precision first).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinlint import torch_api

if TYPE_CHECKING:
    import libcst as cst


class Kind(enum.Enum):
    PAGEABLE = "pageable"
    PINNED = "pinned"
    #: On the host, pinned or not (``assert t.is_cpu`` of a parameter).
    HOST = "host"
    DEVICE = "device"
    PYDATA = "pydata"
    NUMPY = "numpy"
    #: A torch dtype object (``torch.float16``): a ``.to(dtype)`` target is no device.
    DTYPE = "dtype"
    UNKNOWN = "unknown"


#: Kinds that are host tensors.
HOST_KINDS = frozenset({Kind.PAGEABLE, Kind.PINNED, Kind.HOST})
#: Kinds that are tensors (``torch.tensor(value, pin_memory=...)`` would raise).
TENSOR_KINDS = frozenset({Kind.PAGEABLE, Kind.PINNED, Kind.HOST, Kind.DEVICE})
#: Tensors and numpy arrays: ``[0] * x`` of one is no repeated list.
ARRAY_KINDS = TENSOR_KINDS | {Kind.NUMPY}
#: Kinds a host tensor that may be pinned has (a cast to its own dtype returns it, pinned or not).
MAYBE_PINNED_KINDS = frozenset({Kind.PINNED, Kind.HOST})
PYDATA_KINDS = frozenset({Kind.PYDATA})


#: A part of an item (``x`` of ``for x, y in loader:``): of a parameter (``"loader[*]"``), or of
#: an attribute unknown in the method that walks it (``"loader[*]"`` of ``self.loader``).
ITEM_PART = "[*]"
#: The items of a dict parameter walked under a test of the key (``if k in wanted:``): some of
#: them are copied, which ones depends on the keys; only a caller whose items are all of one
#: birth can say (``FileSummaries.forward_arguments``).
KEY_TESTED_ITEMS = "{?}"


@dataclass(frozen=True)
class Origin:
    """Equal when kind, birth node (by identity: libcst nodes compare by identity) and facts
    are equal, so that re-walking a loop body yields the same origins."""

    kind: Kind
    #: Where a pageable tensor was born (the expression the finding points at).
    node: cst.CSTNode | None = None
    #: For pageable: could ``pin_memory=`` have been passed at ``node``?
    pinnable: bool = False
    #: For pageable: a short human description of the birth (``torch.from_numpy(...)``).
    what: str = ""
    #: For pinnable ``torch.tensor(data)``: is ``data`` provably Python data (a safe fix)?
    data_is_python: bool = False
    #: For pageable: the torch factory or method that made it (``"tensor"``, ``"zeros"``), ""
    #: for other births (a data loader's batch: the loader's dotted name, as for the loader's
    #: handle). Fix safety reads this, never the display text.
    factory: str = ""
    #: For pageable: provably not 0-dimensional (a size was given, or list data): combined with
    #: an operand of unknown device it stays on the host (a CUDA operand would raise).
    vector: bool = False
    #: For an unknown value that is a parameter of the function analysed: its name (summaries
    #: of which parameters reach a copy read it); ``"bufs[]"``/``"d{}"`` for its items,
    #: ``"loader[*]"`` for a part of one (``x`` of ``for x, y in loader:``), ``"batch.ids"``
    #: for a field of it.
    parameter: str = ""
    #: For an unknown value read from ``self.<attr>`` that nothing in this function or its class
    #: sets (a dataclass field, filled by whoever constructs the object): the attribute's name.
    #: A method that copies it copies what a caller's object holds there (``forward_fields``).
    attribute: str = ""
    #: For an object of a class the project defines (still of unknown kind: no tensor we know):
    #: the class, the file defining it ("" this one), and the fields its construction filled
    #: (a dataclass's or NamedTuple's arguments). Its other attributes are what the class's
    #: methods assign to ``self.<attr>``.
    class_name: str = ""
    class_file: str = ""
    fields: tuple[tuple[str, Value], ...] = ()
    #: For an unknown value computed from the function's parameters (``a[1:] - a[:-1]``): how
    #: (``"derived"``, ``"cast"``, ``"combined"`` or ``"allocated"``, see those functions) and from which input values, so that
    #: a call's summary can replay the computation on the caller's arguments (``replayed``).
    computed: str = ""
    inputs: tuple[Value, ...] = ()
    elementwise: bool = False
    #: How many computations on parameters this one nests (1: on parameters themselves).
    depth: int = 0
    #: For pageable: what a loader read into host memory (``torch.load(f, map_location="cpu")``,
    #: ``safetensors.torch.load_file``), perhaps a dict of tensors: its ``.values()`` and
    #: ``.items()`` are host tensors too.
    loaded: bool = False
    #: For an unknown value bound by an import inside the function (``from safetensors.torch
    #: import load_file``, ``import safetensors.torch as st``): the dotted name it binds.
    imported: str = ""
    #: For an unknown value that is a handle on a file of tensors opened on the host
    #: (``safe_open(path, framework="pt")``): ``"file"``; ``"slice"`` for what its
    #: ``get_slice(name)`` returns. What they read is pageable (see ``torch_api.HOST_FILE_HANDLES``).
    #: ``"loader"`` for a data loader that pins nothing: its batches are pageable (see
    #: ``torch_api.HOST_BATCH_LOADERS``).
    handle: str = ""
    #: For a parameter kept past ``if t.device == home: return t`` (``home`` a parameter too):
    #: ``home``'s name. A caller that passes the host for it copies nothing of a host tensor.
    unless_host: str = ""

    @property
    def whole_parameter(self) -> bool:
        """A parameter itself, not an item of one (``"bufs[]"``: what ``for t in bufs`` gives)
        nor a field of one (``"batch.ids"``)."""
        return (
            bool(self.parameter)
            and not self.parameter.endswith(("[]", "{}", KEY_TESTED_ITEMS, ITEM_PART))
            and "." not in self.parameter
        )

    @property
    def parametric(self) -> bool:
        """The value depends on what a caller passes: a parameter, or computed from one."""
        return bool(self.parameter or self.computed)


Value = frozenset[Origin]

UNKNOWN_ORIGIN = Origin(Kind.UNKNOWN)


def imported(dotted_name: str) -> Value:
    """What an import inside a function binds: no tensor, but known library functions are
    called through it (``st.load_file(path)``)."""
    return frozenset({Origin(Kind.UNKNOWN, imported=dotted_name)})


def self_attribute(attr: str) -> Value:
    """The unknown value of ``self.<attr>`` in a method, marked with the attribute's name."""
    return frozenset({Origin(Kind.UNKNOWN, attribute=attr)})


def walked_attribute(attr: str) -> Value:
    """``x`` of ``for x, y in self.<attr>:`` where the attribute is unknown here: a part of an
    item of it, marked so that a caller whose object holds a data loader there can say."""
    return frozenset({Origin(Kind.UNKNOWN, what=f"a batch of `self.{attr}`", attribute=attr + ITEM_PART)})


PINNED_ORIGIN = Origin(Kind.PINNED)
DEVICE_ORIGIN = Origin(Kind.DEVICE)
PYDATA_ORIGIN = Origin(Kind.PYDATA)
NUMPY_ORIGIN = Origin(Kind.NUMPY)
#: The literal ``True`` (Python data that a ``non_blocking=`` argument may hold).
TRUE_ORIGIN = Origin(Kind.PYDATA, what="True")
FALSE_ORIGIN = Origin(Kind.PYDATA, what="False")
DTYPE_ORIGIN = Origin(Kind.DTYPE)
HOST_ORIGIN = Origin(Kind.HOST)
#: ``"cpu"`` or ``torch.device("cpu")`` bound to a name: a copy ``.to(name)`` is no H2D copy.
HOST_DEVICE_ORIGIN = Origin(Kind.PYDATA, what="the host device")
#: ``t.numpy()`` of a pinned tensor: an array over pinned memory (``torch.from_numpy`` of it is
#: the pinned tensor's memory again).
PINNED_ARRAY_ORIGIN = Origin(Kind.UNKNOWN, what="an array over a pinned tensor's memory")
#: The loop variable of ``for f in fields(self):`` (``dataclasses.fields``): ``getattr(self,
#: f.name)`` in the body reads each field in turn (see ``Interpreter._loop``).
FIELD_ITEM_ORIGIN = Origin(Kind.UNKNOWN, what="an item of dataclasses.fields()")
#: Its ``.name``: ``k = f.name`` then ``getattr(self, k)`` reads each field too.
FIELD_NAME_ORIGIN = Origin(Kind.UNKNOWN, what="the name of a dataclass field")

UNKNOWN: Value = frozenset({UNKNOWN_ORIGIN})
PINNED: Value = frozenset({PINNED_ORIGIN})
HOST: Value = frozenset({HOST_ORIGIN})
DEVICE: Value = frozenset({DEVICE_ORIGIN})
PYDATA: Value = frozenset({PYDATA_ORIGIN})
NUMPY: Value = frozenset({NUMPY_ORIGIN})
TRUE: Value = frozenset({TRUE_ORIGIN})
FALSE: Value = frozenset({FALSE_ORIGIN})
DTYPE: Value = frozenset({DTYPE_ORIGIN})
HOST_DEVICE: Value = frozenset({HOST_DEVICE_ORIGIN})
PINNED_ARRAY: Value = frozenset({PINNED_ARRAY_ORIGIN})
FIELD_ITEM: Value = frozenset({FIELD_ITEM_ORIGIN})
FIELD_NAME: Value = frozenset({FIELD_NAME_ORIGIN})


def is_true(value: Value) -> bool:
    """The value is the literal ``True`` on every path."""
    return value == TRUE


def pin_switched(switch: Value, node: cst.CSTNode, what: str, factory: str, vector: bool) -> Value:
    """A host allocation whose ``pin_memory=`` is a parameter of the function: not known here;
    replayed, pageable for a call that passes ``False`` (or leaves a default of ``False``)."""
    return frozenset(
        {
            Origin(
                Kind.UNKNOWN,
                node,
                what=what,
                factory=factory,
                vector=vector,
                computed="pin_switched",
                inputs=(switch,),
                depth=1,
            )
        }
    )


def pageable(
    node: cst.CSTNode,
    *,
    pinnable: bool,
    what: str,
    data_is_python: bool = False,
    factory: str = "",
    vector: bool = False,
) -> Value:
    return frozenset({Origin(Kind.PAGEABLE, node, pinnable, what, data_is_python, factory, vector)})


def loaded(node: cst.CSTNode, what: str, factory: str = "") -> Value:
    """What a loader read into pageable host memory: a tensor, or a container of them.
    ``factory``: the data loader whose batch it is (``torch.utils.data.DataLoader``), if one."""
    return frozenset({Origin(Kind.PAGEABLE, node, what=what, factory=factory, loaded=True)})


def host_handle(node: cst.CSTNode, kind: str, what: str, factory: str = "") -> Value:
    """A handle on a file of tensors opened on the host (``kind`` "file"), or a slice of one
    (``"slice"``), or a data loader that pins nothing (``"loader"``, ``factory`` its dotted
    name): no tensor yet, but what it reads (gives) is in pageable host memory."""
    return frozenset({Origin(Kind.UNKNOWN, node, what=what, factory=factory, handle=kind)})


def batches(loader: Value) -> Value:
    """What iterating a data loader that pins nothing gives: its batches, each a container of
    (or one) new pageable host tensors, born at the loader's construction."""
    return frozenset().union(*(loaded(o.node, f"a batch of {o.what}", o.factory) for o in loader))  # type: ignore[arg-type]


def loaded_items(value: Value | None, by_values: bool) -> bool:
    """What a loader read (``value``, pageable on every path) holds pageable host tensors as
    the items a walk of it gives: its values (``by_values``: ``.values()``, ``.items()``, a
    dict parameter's walk), whatever the dict's keys; walked itself (``for t in x:``), only a
    data loader's batch (tuples of tensors, as its samples hold), not a state dict (its keys)."""
    return (
        bool(value)
        and all(o.kind is Kind.PAGEABLE and o.loaded for o in value)  # type: ignore[union-attr]
        and (by_values or all(o.factory in torch_api.HOST_BATCH_LOADERS for o in value))  # type: ignore[union-attr]
    )


def handle_kind(value: Value | None) -> str:
    """The kind of handle ``value`` is on every path ("" when it is not one on some path)."""
    kinds = {o.handle for o in value} if value else {""}
    return next(iter(kinds)) if len(kinds) == 1 else ""


def parameter(node: cst.CSTNode, name: str) -> Value:
    """A parameter's value: unknown, but named (for summaries of what a function copies)."""
    return frozenset({Origin(Kind.UNKNOWN, node, what=f"parameter `{name}`", parameter=name)})


def instance(node: cst.CSTNode, class_name: str, class_file: str, fields: dict[str, Value]) -> Value:
    """A new object of a project class. Parameters of the constructing function stored in its
    fields become plain unknowns: the object may outlive the call, and a caller's summary must
    not mistake them for its own parameters."""
    kept = tuple(
        (name, frozenset(UNKNOWN_ORIGIN if o.parametric else o for o in value)) for name, value in fields.items()
    )
    return frozenset(
        {
            Origin(
                Kind.UNKNOWN,
                node,
                what=f"a `{class_name}` object",
                class_name=class_name,
                class_file=class_file,
                fields=kept,
            )
        }
    )


def is_vector_host(value: Value) -> bool:
    """Every path gives a host tensor that is provably not 0-dimensional."""
    return bool(value) and all(o.kind is Kind.PAGEABLE and o.vector for o in value)


def kinds(value: Value) -> set[Kind]:
    return {origin.kind for origin in value}


def is_host(value: Value) -> bool:
    """Every path gives a host tensor (pageable or pinned)."""
    return bool(value) and kinds(value) <= HOST_KINDS


def is_tensor(value: Value) -> bool:
    """Every path gives a tensor (so ``torch.tensor(value, pin_memory=...)`` would raise)."""
    return bool(value) and kinds(value) <= TENSOR_KINDS


def is_pydata(value: Value) -> bool:
    """Every path gives Python data (an empty value counts: callers check emptiness)."""
    return kinds(value) <= PYDATA_KINDS


def only(value: Value, kind: Kind) -> bool:
    return kinds(value) == {kind}


def derived(value: Value, node: cst.CSTNode, what: str, *, elementwise: bool = False) -> Value:
    """A *new* tensor computed from ``value`` on the same device (arithmetic, cast, clone...).

    New host tensors are never pinned, and cannot be pinned at birth (PIN002). ``elementwise``
    results keep the input's shape (so its being provably not 0-dimensional). Computed from a
    parameter, it is unknown here and replayed on a caller's argument (``replayed``).
    """
    k = kinds(value)
    if Kind.HOST in k and Kind.UNKNOWN in k:
        # Checked to be on the CPU on some paths only (a check whose exception a `try` may have
        # swallowed): where it is on the host rests on that run-time check, as with `if t.is_cpu:`.
        k = k - {Kind.HOST}
        value = frozenset(_unchecked(o) if o.kind is Kind.HOST else o for o in value)
    if k & HOST_KINDS and k - HOST_KINDS and not k & {Kind.DEVICE, Kind.DTYPE}:
        # A host tensor on some paths, unknown (or None, an array) on the others: path by path,
        # a new host tensor on the first (the copy then has "some path pageable"), unknown on
        # the others.
        # A path where it is Python data (`None`, a number) gives no tensor at all there (or
        # raises): only the host and unknown paths give something to copy.
        other = frozenset(o for o in value if o.kind not in HOST_KINDS and o.kind is not Kind.PYDATA)
        if not other:
            rest: Value = frozenset()
        elif Kind.UNKNOWN in kinds(other):
            rest = derived(other, node, what, elementwise=elementwise)
        else:
            rest = UNKNOWN  # an array on some path
        host = frozenset(o for o in value if o.kind in HOST_KINDS)
        return derived(host, node, what, elementwise=elementwise) | rest
    result = _derived(value, node, what, elementwise)
    if result is UNKNOWN and _replayable([value], node):
        return _computed("derived", [value], node, what, elementwise)
    return result


def _unchecked(origin: Origin) -> Origin:
    """A checked-host origin as it was before the check: a parameter, or plainly unknown."""
    if origin.parameter:
        return Origin(Kind.UNKNOWN, origin.node, what=origin.what, parameter=origin.parameter)
    return UNKNOWN_ORIGIN


def _derived(value: Value, node: cst.CSTNode, what: str, elementwise: bool) -> Value:
    k = kinds(value)
    if not value or Kind.UNKNOWN in k:
        return UNKNOWN  # any unknown input: unknown result
    if Kind.DEVICE in k:
        # On the device on every path, or a mix whose host-ness rests on a run-time condition.
        return DEVICE if k == {Kind.DEVICE} else UNKNOWN
    if k <= HOST_KINDS:
        vector = elementwise and is_vector_host(value)
        return pageable(node, pinnable=False, what=what, vector=vector)
    return UNKNOWN  # Python data or numpy mixed in: no tensor provenance to follow


def allocated_on(
    device: Value, node: cst.CSTNode, what: str, factory: str, vector: bool, like_tensor: bool = False
) -> Value:
    """A factory call allocating on a device the function's parameter names: a device tensor
    here, and for a call that passes the host device, a pageable host tensor (replayed).
    ``like_tensor``: ``device`` is a tensor parameter whose ``.device`` is used (``device=t.device``):
    replayed, a call passing a host tensor allocates on the host."""
    return frozenset(
        {
            Origin(
                Kind.DEVICE,
                node,
                what=what,
                factory=factory,
                vector=vector,
                computed="allocated_like" if like_tensor else "allocated",
                inputs=(device,),
                depth=1,
            )
        }
    )


def device_of(tensor: Value) -> Value:
    """``t.device`` of a parameter ``t``: unknown here; replayed on a call's argument, the host's
    device when that is a host tensor (``device = grid.device`` then ``torch.arange(n,
    device=device)`` allocates where ``grid`` is)."""
    return frozenset(
        {Origin(Kind.UNKNOWN, what="a parameter's device", computed="device_of", inputs=(tensor,), depth=1)}
    )


def to_host(receiver: Value, node: cst.CSTNode, what: str) -> Value:
    """``.cpu()`` / ``.to("cpu")``: a pageable host tensor (a device-to-host copy), except that
    of a host tensor it returns the tensor itself. Of a parameter it is pageable here, and
    replayed on what a call passes (a pinned argument comes back pinned)."""
    if receiver and all(o.whole_parameter for o in receiver):
        return frozenset({Origin(Kind.PAGEABLE, node, what=what, computed="to_host", inputs=(receiver,), depth=1)})
    return pageable(node, pinnable=False, what=what)


def cast(receiver: Value, node: cst.CSTNode, what: str) -> Value:
    """A dtype cast: a new host tensor, except that a cast to the dtype the tensor already has
    returns the tensor itself (`t.float()` of a float32 `t`), pinned if it was."""
    if any(o.kind in MAYBE_PINNED_KINDS for o in receiver):
        return UNKNOWN  # the dtype is not known here: the pinned tensor itself, or a pageable copy
    unknown = frozenset(o for o in receiver if o.kind is Kind.UNKNOWN)
    rest = receiver - unknown
    if unknown and kinds(rest) <= HOST_KINDS and _replayable([unknown], node):
        # On a parameter (on some paths): replayed with these rules on what a caller passes.
        cast_rest = derived(rest, node, what, elementwise=True) if rest else frozenset()
        return cast_rest | _computed("cast", [unknown], node, what, True)
    return derived(receiver, node, what, elementwise=True)


def combine(values: list[Value], node: cst.CSTNode, what: str) -> Value:
    """A new tensor computed from several inputs (``torch.cat``, ``a + b``).

    Python numbers and data mixed in are fine (``x + 1``); a device input makes it a device
    value; any unknown input makes it unknown (replayed on a caller's arguments when it is
    a parameter, or computed from one).
    """
    tensors = [v for v in values if not is_pydata(v)]
    if tensors and all(v == tensors[0] for v in tensors):
        # One tensor with itself (`h[1:] - h[:-1]`) or Python numbers: path by path, like one input.
        return derived(tensors[0], node, what, elementwise=True)
    result = _combine(values, node, what)
    if result is UNKNOWN and _replayable(values, node):
        return _computed("combined", values, node, what, False)
    return result


def _combine(values: list[Value], node: cst.CSTNode, what: str) -> Value:
    tensors = [v for v in values if not is_pydata(v)]
    if not tensors:
        return UNKNOWN  # no tensor input: whatever this returns is not a host tensor we know
    hosts = [v for v in tensors if is_vector_host(v)]
    if hosts and all(is_vector_host(v) or kinds(v) == {Kind.UNKNOWN} for v in tensors):
        # `arange(n) + ids * self.block_size`: a non-0-dim host tensor combined with operands of
        # unknown kind. A CUDA operand would raise (only 0-dim CPU tensors mix with CUDA ones),
        # so if this runs, the result is on the host.
        tensors = hosts
    merged = frozenset().union(*tensors)
    return _derived(merged, node, what, elementwise=True)


#: How deeply computations on parameters nest before the result is plainly unknown: a bound on
#: the size of a value (a long chain of arithmetic in a helper is replayed whole).
_MAX_REPLAY_DEPTH = 12


def _computed(how: str, values: list[Value], node: cst.CSTNode, what: str, elementwise: bool) -> Value:
    depth = 1 + max((o.depth for v in values for o in v), default=0)
    return frozenset(
        {
            Origin(
                Kind.UNKNOWN,
                node,
                what=what,
                computed=how,
                inputs=tuple(values),
                elementwise=elementwise,
                depth=depth,
            )
        }
    )


def _replayable(values: list[Value], node: cst.CSTNode) -> bool:
    """Every unknown among ``values`` depends only on the function's parameters (at least one
    does), and the computation at ``node`` is not already among its own inputs (a loop `x = x + a`
    would otherwise grow a new value on every pass)."""
    found = False
    for value in values:
        for origin in value:
            if origin.kind is not Kind.UNKNOWN:
                continue
            if not origin.parametric:
                return False  # an unknown from elsewhere: no caller can make it known
            if origin.computed and (origin.depth >= _MAX_REPLAY_DEPTH or _computes_at(origin, node)):
                return False
            found = True
    return found


def _computes_at(origin: Origin, node: cst.CSTNode) -> bool:
    seen: set[int] = set()
    stack = [origin]
    while stack:
        current = stack.pop()
        if current.node is node:
            return True
        for value in current.inputs:
            for o in value:
                if o.computed and id(o) not in seen:
                    seen.add(id(o))
                    stack.append(o)
    return False


def replayed(value: Value, argument: Callable[[str], Value | None]) -> Value | None:
    """``value``, a callee's, as a call gives it: each parameter replaced by the caller's
    ``argument`` for it, each computation on parameters redone on those arguments. None when an
    argument is not known (not passed: its default, or passed through ``*args``)."""
    if not any(o.parametric for o in value):
        return value
    out: set[Origin] = set()
    for origin in value:
        if origin.parameter:
            passed = argument(origin.parameter)
            if passed is None:
                return None
            out |= passed
        elif origin.computed:
            inputs = [replayed(v, argument) for v in origin.inputs]
            if any(v is None for v in inputs):
                return None
            known = [v for v in inputs if v is not None]
            if origin.computed == "to_host":
                given = known[0]  # type: ignore[index]
                if given and {o.kind for o in given} <= MAYBE_PINNED_KINDS:
                    out |= given  # already on the host: the tensor itself
                elif any(o.kind in MAYBE_PINNED_KINDS for o in given):
                    out |= UNKNOWN  # itself on some paths, a pageable copy on others
                else:
                    out |= pageable(origin.node, pinnable=False, what=origin.what)
            elif origin.computed == "allocated":
                if known[0] == HOST_DEVICE:  # type: ignore[comparison-overlap]
                    # Not pinnable there: `pin_memory=True` would raise for the callers that
                    # pass an accelerator.
                    out |= pageable(
                        origin.node, pinnable=False, what=origin.what, factory=origin.factory, vector=origin.vector
                    )
                else:
                    out.add(DEVICE_ORIGIN)
            elif origin.computed == "pin_switched":
                given = known[0]  # type: ignore[index]
                if given == FALSE:
                    # Not pinnable there: the call decides, and other calls may pass `True`.
                    out |= pageable(
                        origin.node, pinnable=False, what=origin.what, factory=origin.factory, vector=origin.vector
                    )
                elif given and all(o.whole_parameter for o in given):
                    # Handed a parameter of the calling function: its own callers decide.
                    out |= pin_switched(given, origin.node, origin.what, origin.factory, origin.vector)
                else:
                    out |= UNKNOWN  # pinned, or not known to be unpinned
            elif origin.computed == "device_of":
                given = known[0]  # type: ignore[index]
                host = bool(given) and {o.kind for o in given} <= HOST_KINDS
                out |= HOST_DEVICE if host else UNKNOWN
            elif origin.computed == "allocated_like":
                given = known[0]  # type: ignore[index]
                if given and all(o.whole_parameter for o in given):
                    # Handed a parameter of the calling function: where it allocates is where
                    # that function's own callers' arguments are (replayed again there).
                    out |= allocated_on(
                        given, origin.node, origin.what, origin.factory, origin.vector, like_tensor=True
                    )
                elif given and {o.kind for o in given} <= HOST_KINDS:
                    # On the host's device: not pinnable there (`pin_memory=True` would raise for
                    # the callers that pass an accelerator's tensor).
                    out |= pageable(
                        origin.node, pinnable=False, what=origin.what, factory=origin.factory, vector=origin.vector
                    )
                elif given and {o.kind for o in given} == {Kind.DEVICE}:
                    out.add(DEVICE_ORIGIN)
                else:
                    out |= UNKNOWN  # where the argument is, is not known
            elif origin.computed == "cast":
                out |= cast(known[0], origin.node, origin.what)  # type: ignore[arg-type]
            elif origin.computed == "derived":
                out |= derived(known[0], origin.node, origin.what, elementwise=origin.elementwise)  # type: ignore[arg-type]
            else:
                out |= combine(known, origin.node, origin.what)  # type: ignore[arg-type]
        else:
            out.add(origin)
    return frozenset(out)


def non_scalar(value: Value, node: cst.CSTNode) -> Value:
    """``value`` with its host tensors born at ``node`` known to be not 0-dimensional."""
    return frozenset(
        Origin(o.kind, o.node, o.pinnable, o.what, o.data_is_python, o.factory, True)
        if o.kind is Kind.PAGEABLE and o.node is node and not o.vector
        else o
        for o in value
    )


def construction_data(data: Value) -> str:
    """What a device construction copies: ``"python"`` data (a fix may pin it), a ``"numpy"``
    array or host ``"tensor"`` (``pin_memory=True`` raises for those), or ``"unknown"``."""
    if data and is_pydata(data):
        return "python"
    if data and only(data, Kind.NUMPY):
        return "numpy"
    if is_tensor(data):
        return "tensor"
    return "unknown"
