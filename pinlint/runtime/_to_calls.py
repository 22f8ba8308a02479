"""``Tensor.to`` as the watch reads and simulates it: every spelling normalised, and what
``aten::to`` does on the simulated device."""

from __future__ import annotations

from typing import Any

import torch

from pinlint.runtime._torch_refs import _PRESERVE, _aten_to_copy, _parse_to
from pinlint.runtime.simulate import Simulation, simulated_device


def parse_to_target(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, bool, Any] | None:
    """Normalise every ``Tensor.to`` spelling with the parser ``nn.Module.to`` uses.

    An int device needs an accelerator to resolve; on a CPU-only build it means ``cuda:<int>``.
    """
    try:
        return _parse_to(*args, **kwargs)
    except TypeError:
        return None
    except RuntimeError:
        pass
    args2 = tuple(torch.device("cuda", a) if i == 0 and type(a) is int else a for i, a in enumerate(args))
    kwargs2 = dict(kwargs)
    if type(kwargs2.get("device")) is int:
        kwargs2["device"] = torch.device("cuda", kwargs2["device"])
    try:
        return _parse_to(*args2, **kwargs2)
    except (TypeError, RuntimeError):
        return None


def sim_to(
    sim: Simulation,
    src: torch.Tensor,
    device: torch.device,
    dtype: torch.dtype | None,
    non_blocking: bool,
    memory_format: torch.memory_format | None,
    copy: bool,
) -> torch.Tensor:
    """What ``aten::to`` does, issued as ``_to_copy`` with an explicit device index."""
    target = simulated_device(device)
    if (
        not copy
        and src.device == target
        and (dtype is None or dtype == src.dtype)
        and (memory_format is None or memory_format == _PRESERVE)
    ):
        return src  # aten::to returns self when nothing changes
    kw: dict[str, Any] = {"device": target, "non_blocking": non_blocking}
    if dtype is not None:
        kw["dtype"] = dtype
    if memory_format is not None:
        kw["memory_format"] = memory_format
    with torch.no_grad():  # see simulate.py: autograd on fake CUDA tensors aborts the process
        return _aten_to_copy(sim.fake(src), **kw)
