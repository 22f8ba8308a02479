"""The torch callables and tables the interception layer compares against, captured at import
(before any mode can wrap them). This module imports torch."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

from pinlint import torch_api

_TB = torch._C.TensorBase
_TO = _TB.to
_CUDA = _TB.cuda
_COPY = _TB.copy_
_PIN = _TB.pin_memory
_IS_PINNED = _TB.is_pinned
_parse_to = torch._C._nn._parse_to
_TYPE = _TB.type
_aten = torch.ops.aten
_aten_to_copy = _aten._to_copy.default
_aten_copy = _aten.copy_.default
_FOREACH_COPY = torch._foreach_copy_
_is_compiling = torch.compiler.is_compiling
_get_dispatch_mode = torch._C._get_dispatch_mode
_FAKE_KEY = torch._C._TorchDispatchModeKey.FAKE


def _on_cuda(device: Any) -> bool:
    return device is not None and str(device).startswith("cuda")


#: How each intercepted copy entry point is named in transfers.
_API = {
    _COPY: "Tensor.copy_",
    _aten_copy: "aten.copy_",
    _aten.copy_: "aten.copy_",
    _aten_to_copy: "aten._to_copy",
    _aten._to_copy: "aten._to_copy",
}


def _opaque_copy_ops() -> dict[Any, str]:
    """aten ops that can move host data to a device but that the watch does not classify: when one
    of them meets a CPU tensor and a device target it is counted as a blind spot, never ignored."""
    ops: dict[Any, str] = {}
    for name in (
        "_copy_from",
        "_copy_from_and_resize",
        "copy",
        "to",
        "_foreach_copy",
        "_foreach_copy_",
        "index_put_",
        "lift_fresh_copy",
    ):
        packet = getattr(_aten, name, None)
        if packet is None:
            continue
        ops[packet] = f"aten.{name}"
        for overload in packet.overloads():
            ops[getattr(packet, overload)] = f"aten.{name}.{overload}"
    return ops


_OPAQUE = _opaque_copy_ops()
#: ``Tensor.type("torch.cuda.FloatTensor")``: the legacy type names and their dtypes.
_LEGACY_TYPES = {
    "FloatTensor": torch.float32,
    "DoubleTensor": torch.float64,
    "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16,
    "ByteTensor": torch.uint8,
    "CharTensor": torch.int8,
    "ShortTensor": torch.int16,
    "IntTensor": torch.int32,
    "LongTensor": torch.int64,
    "BoolTensor": torch.bool,
}
_Tensor = torch.Tensor
#: PIN004: the callables that read a host tensor's data into Python -> how a report names them.
_D2H_READS: dict[Any, str] = {getattr(_Tensor, n): f"Tensor.{n}" for n in sorted(torch_api.RUNTIME_D2H_READING_METHODS)}
_D2H_READS.update({getattr(torch, n): f"torch.{n}" for n in sorted(torch_api.RUNTIME_D2H_READING_FUNCTIONS)})
_CPU = _TB.cpu
_ACCELERATORS = frozenset(torch_api.ACCELERATOR_DEVICE_PREFIXES)
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_MODULE_PY = os.path.join(_TORCH_DIR, "nn", "modules", "module.py")
_PRESERVE = torch.preserve_format


def _factory_table() -> dict[Callable[..., Any], tuple[str, bool]]:
    """callable -> (display name, accepts pin_memory=). Names come from torch_api only.

    ``torch.from_numpy``/``torch.frombuffer`` are listed there too but never reach a function mode
    (their bindings do not dispatch ``__torch_function__``); their results have no birth site.
    """
    table: dict[Callable[..., Any], tuple[str, bool]] = {}
    for names, owner, prefix, pinnable in (
        (torch_api.RUNTIME_PINNABLE_FACTORIES, torch, "torch.", True),
        (torch_api.RUNTIME_PINNABLE_METHODS, _TB, "Tensor.", True),
        (torch_api.RUNTIME_UNPINNABLE_FACTORIES, torch, "torch.", False),
        (torch_api.RUNTIME_UNPINNABLE_METHODS, _TB, "Tensor.", False),
    ):
        for name in sorted(names):
            fn = getattr(owner, name, None)
            if fn is not None:
                table.setdefault(fn, (prefix + name, pinnable))
    return table


_FACTORIES = _factory_table()
_DATA_TO_DEVICE = frozenset(f"torch.{n}" for n in torch_api.RUNTIME_DATA_TO_DEVICE_FACTORIES)


def _is_array_like_data(data: Any) -> str:
    """Why ``torch.tensor(data, pin_memory=True)`` would raise, or ""."""
    if isinstance(data, _Tensor):
        return "tensor data"
    if type(data).__module__ == "numpy":
        return "numpy data"
    return ""
