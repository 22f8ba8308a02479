"""The host-provenance model: what an expression's value is, as far as one function shows.

A value is a set of possible *origins*, one per path that can produce it (branches and
conditional expressions union their origins). Each origin is one of:

* ``pageable``: a host tensor in ordinary (pageable) memory, born at ``node``. ``pinnable``
  says whether that birth could have taken ``pin_memory=`` (PIN001) or not (PIN002);
* ``pinned``: a host tensor in page-locked memory;
* ``device``: a tensor on an accelerator;
* ``pydata``: Python data (literals, comprehensions, ``len()``, ``.tolist()``): not a tensor,
  and safe to hand to ``torch.tensor(..., pin_memory=...)``;
* ``numpy``: a numpy array (``torch.tensor(arr, pin_memory=True)`` raises);
* ``unknown``: anything else (parameters, attributes set elsewhere, project calls).

Unknown is never flagged (precision first).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


class Kind(enum.Enum):
    PAGEABLE = "pageable"
    PINNED = "pinned"
    DEVICE = "device"
    PYDATA = "pydata"
    NUMPY = "numpy"
    #: A torch dtype object (``torch.float16``): a ``.to(dtype)`` target is no device.
    DTYPE = "dtype"
    UNKNOWN = "unknown"


#: Kinds that are host tensors.
HOST_KINDS = frozenset({Kind.PAGEABLE, Kind.PINNED})
#: Kinds that are tensors (``torch.tensor(value, pin_memory=...)`` would raise).
TENSOR_KINDS = frozenset({Kind.PAGEABLE, Kind.PINNED, Kind.DEVICE})
PYDATA_KINDS = frozenset({Kind.PYDATA})


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
    #: for other births. Fix safety reads this, never the display text.
    factory: str = ""
    #: For pageable: provably not 0-dimensional (a size was given, or list data): combined with
    #: an operand of unknown device it stays on the host (a CUDA operand would raise).
    vector: bool = False
    #: For an unknown value that is a parameter of the function analysed: its name (summaries
    #: of which parameters reach a copy read it).
    parameter: str = ""
    #: For an object of a class the project defines (still of unknown kind: no tensor we know):
    #: the class, the file defining it ("" this one), and the fields its construction filled
    #: (a dataclass's or NamedTuple's arguments). Its other attributes are what the class's
    #: methods assign to ``self.<attr>``.
    class_name: str = ""
    class_file: str = ""
    fields: tuple[tuple[str, Value], ...] = ()


Value = frozenset[Origin]

UNKNOWN_ORIGIN = Origin(Kind.UNKNOWN)
PINNED_ORIGIN = Origin(Kind.PINNED)
DEVICE_ORIGIN = Origin(Kind.DEVICE)
PYDATA_ORIGIN = Origin(Kind.PYDATA)
NUMPY_ORIGIN = Origin(Kind.NUMPY)
#: The literal ``True`` (Python data that a ``non_blocking=`` argument may hold).
TRUE_ORIGIN = Origin(Kind.PYDATA, what="True")
DTYPE_ORIGIN = Origin(Kind.DTYPE)
#: ``"cpu"`` or ``torch.device("cpu")`` bound to a name: a copy ``.to(name)`` is no H2D copy.
HOST_DEVICE_ORIGIN = Origin(Kind.PYDATA, what="the host device")
#: ``t.numpy()`` of a pinned tensor: an array over pinned memory (``torch.from_numpy`` of it is
#: the pinned tensor's memory again).
PINNED_ARRAY_ORIGIN = Origin(Kind.UNKNOWN, what="an array over a pinned tensor's memory")

UNKNOWN: Value = frozenset({UNKNOWN_ORIGIN})
PINNED: Value = frozenset({PINNED_ORIGIN})
DEVICE: Value = frozenset({DEVICE_ORIGIN})
PYDATA: Value = frozenset({PYDATA_ORIGIN})
NUMPY: Value = frozenset({NUMPY_ORIGIN})
TRUE: Value = frozenset({TRUE_ORIGIN})
DTYPE: Value = frozenset({DTYPE_ORIGIN})
HOST_DEVICE: Value = frozenset({HOST_DEVICE_ORIGIN})
PINNED_ARRAY: Value = frozenset({PINNED_ARRAY_ORIGIN})


def is_true(value: Value) -> bool:
    """The value is the literal ``True`` on every path."""
    return value == TRUE


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


def parameter(node: cst.CSTNode, name: str) -> Value:
    """A parameter's value: unknown, but named (for summaries of what a function copies)."""
    return frozenset({Origin(Kind.UNKNOWN, node, what=f"parameter `{name}`", parameter=name)})


def instance(node: cst.CSTNode, class_name: str, class_file: str, fields: dict[str, Value]) -> Value:
    """A new object of a project class. Parameters of the constructing function stored in its
    fields become plain unknowns: the object may outlive the call, and a caller's summary must
    not mistake them for its own parameters."""
    kept = tuple(
        (name, frozenset(UNKNOWN_ORIGIN if o.parameter else o for o in value)) for name, value in fields.items()
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
    results keep the input's shape (so its being provably not 0-dimensional).
    """
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


def combine(values: list[Value], node: cst.CSTNode, what: str) -> Value:
    """A new tensor computed from several inputs (``torch.cat``, ``a + b``).

    Python numbers and data mixed in are fine (``x + 1``); a device input makes it a device
    value; any unknown input makes it unknown.
    """
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
    return derived(merged, node, what, elementwise=True)


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
