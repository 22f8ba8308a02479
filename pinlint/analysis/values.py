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

from dataclasses import dataclass
from typing import Literal

import libcst as cst

Kind = Literal["pageable", "pinned", "device", "pydata", "numpy", "unknown"]


@dataclass(frozen=True, eq=False)
class Origin:
    kind: Kind
    #: Where a pageable tensor was born (the expression the finding points at).
    node: cst.CSTNode | None = None
    #: For pageable: could ``pin_memory=`` have been passed at ``node``?
    pinnable: bool = False
    #: For pageable: a short human description of the birth (``torch.from_numpy(...)``).
    what: str = ""
    #: For pinnable ``torch.tensor(data)``: is ``data`` provably Python data (a safe fix)?
    data_is_python: bool = False


Value = frozenset[Origin]

UNKNOWN_ORIGIN = Origin("unknown")
PINNED_ORIGIN = Origin("pinned")
DEVICE_ORIGIN = Origin("device")
PYDATA_ORIGIN = Origin("pydata")
NUMPY_ORIGIN = Origin("numpy")

UNKNOWN: Value = frozenset({UNKNOWN_ORIGIN})
PINNED: Value = frozenset({PINNED_ORIGIN})
DEVICE: Value = frozenset({DEVICE_ORIGIN})
PYDATA: Value = frozenset({PYDATA_ORIGIN})
NUMPY: Value = frozenset({NUMPY_ORIGIN})


def pageable(node: cst.CSTNode, *, pinnable: bool, what: str, data_is_python: bool = False) -> Value:
    return frozenset({Origin("pageable", node, pinnable, what, data_is_python)})


def kinds(value: Value) -> set[str]:
    return {origin.kind for origin in value}


def is_host(value: Value) -> bool:
    """Every path gives a host tensor (pageable or pinned)."""
    return bool(value) and kinds(value) <= {"pageable", "pinned"}


def is_tensor(value: Value) -> bool:
    """Every path gives a tensor (so ``torch.tensor(value, pin_memory=...)`` would raise)."""
    return bool(value) and kinds(value) <= {"pageable", "pinned", "device"}


def derived(value: Value, node: cst.CSTNode, what: str) -> Value:
    """A *new* tensor computed from ``value`` on the same device (arithmetic, cast, clone...).

    New host tensors are never pinned, and cannot be pinned at birth (PIN002).
    """
    k = kinds(value)
    if not value or "unknown" in k:
        return UNKNOWN
    if "device" in k:
        return DEVICE if k == {"device"} else UNKNOWN
    if k <= {"pageable", "pinned"}:
        return pageable(node, pinnable=False, what=what)
    return UNKNOWN


def combine(values: list[Value], node: cst.CSTNode, what: str) -> Value:
    """A new tensor computed from several inputs (``torch.cat``, ``a + b``).

    Python numbers and data mixed in are fine (``x + 1``); a device input makes it a device
    value; any unknown input makes it unknown.
    """
    tensors = [v for v in values if not kinds(v) <= {"pydata"}]
    if not tensors:
        return UNKNOWN
    merged = frozenset().union(*tensors)
    return derived(merged, node, what)
