"""The stand-in itself: PyTorch's refusals kept, pinning simulated, races seen (in forked children)."""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
import pytest
import torch

from tests.fixsafety import harness, standin


def _in_child(fn: Any) -> Any:
    """Run ``fn`` under a fresh stand-in in a forked child (the patches are process-wide)."""

    def job(_: object) -> Any:
        s = standin.install(tempfile.gettempdir())
        try:
            value = fn(s)
        except Exception as e:  # noqa: BLE001 - the exception is the result
            value = f"{type(e).__name__}: {e}"
        s.synchronize("the end")
        return {"value": value, "races": s.races}

    return harness._map(job, [None], 1)[0]


def _real_error(fn: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        fn()
    return f"RuntimeError: {info.value}"


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.tensor(np.zeros(3), pin_memory=True),
        lambda: torch.tensor(torch.zeros(3), pin_memory=True),
        lambda: torch.tensor(np.arange(2), requires_grad=False, pin_memory=True),
    ],
    ids=["numpy", "tensor", "numpy-int"],
)
def test_refusals_are_pytorchs_own(make: Any) -> None:
    real = _real_error(make)
    assert "Can't pin tensor constructed from" in real
    assert _in_child(lambda s: make())["value"] == real


def test_the_no_allocator_error_is_what_is_simulated_away() -> None:
    assert standin.NO_ALLOCATOR in _real_error(lambda: torch.zeros(2, pin_memory=True))


def test_pinning_is_marked_on_storage_so_views_count() -> None:
    def body(s: standin.Standin) -> Any:
        x = torch.tensor([1, 2, 3], pin_memory=True)
        y = torch.zeros(2).pin_memory()
        return [x.is_pinned(), x[1:].is_pinned(), y.is_pinned(), torch.zeros(2).is_pinned()]

    assert _in_child(body)["value"] == [True, True, True, False]


def test_write_after_async_copy_from_pinned_is_a_race() -> None:
    def body(s: standin.Standin) -> Any:
        x = torch.zeros(3, pin_memory=True)
        y = x.to("cpu", non_blocking=True)
        x += 1
        return y.tolist()

    out = _in_child(body)
    assert out["value"] == [0.0, 0.0, 0.0]  # the "device" copy is a copy, as on a GPU
    assert len(out["races"]) == 1


def _pageable(s: standin.Standin) -> None:
    x = torch.zeros(3)
    x.to("cpu", non_blocking=True)  # staged synchronously from pageable memory
    x.add_(1)


def _synchronized(s: standin.Standin) -> None:
    x = torch.zeros(3, pin_memory=True)
    x.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    x.add_(1)


def _fresh_per_iteration(s: standin.Standin) -> None:
    for i in range(3):
        torch.full((2,), i, pin_memory=True).to("cpu", non_blocking=True)


def _blocking(s: standin.Standin) -> None:
    x = torch.zeros(3, pin_memory=True)
    x.to("cpu")
    x.add_(1)


def _dtype_cast(s: standin.Standin) -> None:
    x = torch.zeros(3, pin_memory=True)
    x.to(torch.float16, non_blocking=True)
    x.add_(1)


@pytest.mark.parametrize("body", [_pageable, _synchronized, _fresh_per_iteration, _blocking, _dtype_cast])
def test_no_race(body: Any) -> None:
    assert _in_child(body)["races"] == []


def test_copy_into_device_tensor_then_write_is_a_race_but_into_pinned_host_is_not() -> None:
    def body(s: standin.Standin) -> Any:
        src = torch.ones(2, pin_memory=True)
        torch.zeros(2, pin_memory=True).copy_(src, non_blocking=True)
        src.add_(1)
        return len(s.pending)

    assert _in_child(body) == {"value": 0, "races": []}

    def body2(s: standin.Standin) -> Any:
        src = torch.ones(2, pin_memory=True)
        torch.zeros(2, device="cpu").copy_(src, non_blocking=True)
        src.add_(1)

    assert len(_in_child(body2)["races"]) == 1
