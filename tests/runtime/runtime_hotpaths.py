"""User code for the runtime tests. Lines carrying a ``# L:<name>`` marker are looked up by the tests
(``line("name")``), so assertions are exact rows without hard-coding numbers."""

from __future__ import annotations

import threading
from pathlib import Path

import torch

FILE = str(Path(__file__).resolve())


def line(marker: str) -> int:
    for number, text in enumerate(Path(FILE).read_text().splitlines(), start=1):
        if text.rstrip().endswith(f"# L:{marker}"):
            return number
    raise LookupError(marker)


def is_pin_memory_available(device: object = None) -> bool:
    """The project's own helper, as SGLang writes it."""
    return torch.cuda.is_available()


def seed_unpinned(device: str) -> torch.Tensor:
    ids = torch.tensor([1, 2, 3], dtype=torch.int64).to(device, non_blocking=True)  # L:seed-unpinned
    return ids * 2


def seed_fixed(device: str) -> torch.Tensor:
    ids = torch.tensor(  # L:seed-fixed
        [1, 2, 3], dtype=torch.int64, pin_memory=is_pin_memory_available(device)
    ).to(device, non_blocking=True)
    return ids * 2


def bound_then_copied(device: str) -> torch.Tensor:
    lens_cpu = torch.zeros(4, dtype=torch.int32)  # L:bound-birth
    lens_cpu[0] = 3
    return lens_cpu.to(device, non_blocking=True)  # L:bound-copy


def cuda_method(device: str) -> torch.Tensor:
    x = torch.ones(4, 4)  # L:cuda-birth
    return x.cuda(non_blocking=True)  # L:cuda-copy


def to_kwargs(device: str) -> torch.Tensor:
    x = torch.arange(8)  # L:kwargs-birth
    return x.to(device=device, dtype=torch.half, non_blocking=True)  # L:kwargs-copy


def to_positional_nb(device: str) -> torch.Tensor:
    x = torch.randn(3)  # L:positional-birth
    return x.to(torch.device(device), torch.float64, True)  # L:positional-copy


def to_int_device() -> torch.Tensor:
    x = torch.full((2,), 7)  # L:int-birth
    return x.to(0, non_blocking=True)  # L:int-copy


def copy_into(device: str) -> torch.Tensor:
    buf = torch.empty(4, 4, device=device)
    src = torch.ones(4, 4)  # L:copy-birth
    buf.copy_(src, non_blocking=True)  # L:copy-copy
    return buf


def new_zeros_birth(device: str, like: torch.Tensor) -> torch.Tensor:
    x = like.new_zeros(5)  # L:new-zeros-birth
    return x.to(device, non_blocking=True)  # L:new-zeros-copy


def as_tensor_source(device: str) -> torch.Tensor:
    x = torch.as_tensor([1, 2, 3])  # L:as-tensor-birth
    return x.to(device, non_blocking=True)  # L:as-tensor-copy


def cat_source(device: str) -> torch.Tensor:
    a = torch.ones(2, pin_memory=is_pin_memory_available(device))
    both = torch.cat([a, a])  # L:cat-birth
    return both.to(device, non_blocking=True)  # L:cat-copy


def arithmetic_source(device: str) -> torch.Tensor:
    a = torch.ones(3, pin_memory=is_pin_memory_available(device))
    shifted = a + 1  # arithmetic: a new pageable tensor, not a known factory
    return shifted.to(device, non_blocking=True)  # L:arith-copy


def numpy_data_source(device: str, arr: object) -> torch.Tensor:
    x = torch.tensor(arr)  # L:numpy-birth
    return x.to(device, non_blocking=True)  # L:numpy-copy


def numpy_naive_fix(device: str, arr: object) -> torch.Tensor:
    # What a naive fixer would write for the previous function: raises on a CUDA machine.
    return torch.tensor(arr, pin_memory=is_pin_memory_available(device)).to(device, non_blocking=True)


def pinned_spellings(device: str) -> list[torch.Tensor]:
    p = torch.ones(8, pin_memory=is_pin_memory_available(device))
    view = p[2:6].to(device, non_blocking=True)  # L:pinned-view
    q = torch.ones(4).pin_memory().to(device, non_blocking=True)  # L:pin-method
    r = torch.empty(3, pin_memory=True)
    r_gpu = r.to(device, non_blocking=True)  # L:pinned-literal
    return [view, q, r_gpu]


def blocking_copies(device: str) -> list[torch.Tensor]:
    x = torch.ones(2)
    a = x.to(device)  # L:blocking-to
    b = torch.tensor([1, 2], device=device)  # L:tensor-device
    return [a, b]


def pinned_strided(device: str) -> list[torch.Tensor]:
    p = torch.ones(4, 6, pin_memory=True)
    every_other = p[:, ::2].to(device, non_blocking=True)  # L:strided
    transposed = p.t().to(device, non_blocking=True)  # L:transposed-same-dtype
    transposed_half = p.t().to(device, dtype=torch.half, non_blocking=True)  # L:transposed-half
    contiguous_half = p.to(device, dtype=torch.half, non_blocking=True)  # L:contiguous-half
    return [every_other, transposed, transposed_half, contiguous_half]


def broadcast_copy(device: str) -> torch.Tensor:
    p = torch.ones(4, pin_memory=True)
    dst = torch.empty(3, 4, device=device)
    dst.copy_(p, non_blocking=True)  # L:broadcast-copy
    return dst


def module_to(model: torch.nn.Module, device: str) -> torch.nn.Module:
    return model.to(device, non_blocking=True)  # L:module-to


def loop(device: str, n: int) -> None:
    for _ in range(n):
        torch.tensor([1]).to(device, non_blocking=True)  # L:loop


def in_thread(device: str, box: dict[str, object]) -> None:
    def worker() -> None:
        try:
            box["result"] = torch.ones(2).to(device, non_blocking=True)
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=worker)
    t.start()
    t.join()


def to_meta_and_cpu() -> list[torch.Tensor]:
    x = torch.ones(2)
    return [x.to("meta", non_blocking=True), x.to("cpu", non_blocking=True), x.to(torch.float64, non_blocking=True)]
