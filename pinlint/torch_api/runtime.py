"""What the runtime companion intercepts and how it reads it (the static checker does not need these)."""

from __future__ import annotations

from pinlint.torch_api.host import (
    PINNABLE_NEW_METHODS,
)

#: ``Tensor.<name>`` methods seen by the runtime companion as births of pinnable host tensors.
RUNTIME_PINNABLE_METHODS: frozenset[str] = PINNABLE_NEW_METHODS
#: ``Tensor.<name>`` methods that build a new host tensor and have no ``pin_memory=``.
RUNTIME_UNPINNABLE_METHODS: frozenset[str] = frozenset({"new_tensor"})
#: Factories that copy their data argument to the ``device=`` they are given: with an accelerator
#: device this is a *blocking* pageable H2D copy (``tensor_new.cpp`` calls ``.to(device)``), the
#: pattern of PIN003.
RUNTIME_DATA_TO_DEVICE_FACTORIES: frozenset[str] = frozenset({"tensor", "as_tensor", "asarray"})
#: PIN004 at run time: ``Tensor.<name>`` methods that turn a tensor's data into Python values (or
#: text). On a pending device-to-host destination they are host reads; on a device tensor they wait
#: for the stream. ``.numpy()`` and iteration make views (as for ``pinlint check``): not reads.
RUNTIME_D2H_READING_METHODS: frozenset[str] = frozenset(
    {
        "tolist",
        "item",
        "__bool__",
        "__int__",
        "__float__",
        "__index__",
        "__complex__",
        "__repr__",
        "__format__",
        "__contains__",
        "equal",
        "allclose",
        "is_nonzero",
    }
)
#: ``torch.<name>`` functions that answer a Python value from the data of their tensor arguments.
RUNTIME_D2H_READING_FUNCTIONS: frozenset[str] = frozenset({"equal", "allclose", "is_nonzero"})
#: Substrings of the errors a build without a pinned allocator raises for ``pin_memory=True`` and
#: ``.pin_memory()`` (measured on 2.13.0+cpu). Simulation replaces only
#: these errors with a simulated pin, so PyTorch's other validation ("Can't pin tensor constructed
#: from numpy") still fires.
NO_PINNED_ALLOCATOR_ERRORS: tuple[str, ...] = (
    "no pinned memory allocator",
    "Cannot access accelerator device when none is available",
)
