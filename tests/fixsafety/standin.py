"""A stand-in for a CUDA machine on a CPU-only torch build, installed in a forked child.

What it models, and why:

* Pinning. ``pin_memory=True`` raises on a CPU build ("no pinned memory allocator"), so the real
  factory is called first (PyTorch's own refusals for numpy and tensor data come before that
  error in torch 2.13, and are kept as they are); only the allocator error is simulated away: the
  factory is re-run with ``pin_memory=False`` and the result's storage is marked pinned.
  ``Tensor.pin_memory()`` and ``Tensor.is_pinned()`` use the same marks, so views count.
* Device memory. The program's device is ``"cpu"`` (passed as a parameter so pinlint cannot prove
  it is the host), so ``x.to(device)`` would return ``x`` itself; on a GPU it is a new tensor.
  A host-to-"device" ``.to`` / ``.cuda`` therefore always copies, and its result (and factories
  called with ``device=``) are marked as device tensors, whose ``.to(device)`` returns self.
* Races. A ``non_blocking`` copy from a pinned source is asynchronous on a GPU: the stand-in
  snapshots the source and its version counter and keeps a strong reference (as the caching host
  allocator keeps the block). At the next synchronization (``torch.cuda.synchronize()`` or the end
  of the program) a changed content or version is a RACE: the GPU could have received other bytes.
  From pageable memory the copy is staged synchronously, so no race is recorded.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef

#: The start of the error torch 2.13 CPU raises for ``pin_memory=True`` (the only one simulated away).
NO_ALLOCATOR = "pin_memory=True requires a CUDA or other accelerator backend"

#: Factories that accept ``pin_memory=``.
TORCH_FACTORIES = [
    *("tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace"),
    *("randint", "rand", "randn", "randperm", "eye", "empty_strided", "scalar_tensor"),
    *("tril_indices", "triu_indices", "zeros_like", "ones_like", "empty_like", "full_like"),
    *("rand_like", "randn_like", "randint_like"),
]
TENSOR_FACTORIES = ("new_zeros", "new_empty", "new_ones", "new_full")


class StorageMarks:
    """A set of storages, held weakly: a freed storage's address can never match a new one."""

    def __init__(self) -> None:
        self._marks: dict[int, StorageWeakRef] = {}

    @staticmethod
    def _storage(t: torch.Tensor) -> Any:
        try:
            return t.untyped_storage()
        except (RuntimeError, NotImplementedError):
            return None

    def add(self, t: torch.Tensor) -> None:
        storage = self._storage(t)
        if storage is not None:
            self._marks[storage._cdata] = StorageWeakRef(storage)

    def __contains__(self, t: object) -> bool:
        if not isinstance(t, torch.Tensor):
            return False
        storage = self._storage(t)
        if storage is None:
            return False
        ref = self._marks.get(storage._cdata)
        if ref is None:
            return False
        if ref.expired():
            del self._marks[storage._cdata]
            return False
        return True


@dataclass
class Pending:
    """A non_blocking copy from pinned memory that has not been synchronized yet."""

    source: torch.Tensor
    snapshot: torch.Tensor
    version: int
    where: str
    api: str


class Standin:
    def __init__(self, program_dir: str, pin_all: bool = False) -> None:
        self.program_dir = program_dir
        #: Mark every host tensor the program's factories make as pinned (what a fix of every
        #: construction would do): checks that a program races exactly when it should.
        self.pin_all = pin_all
        self.pinned = StorageMarks()
        self.device = StorageMarks()
        self.pending: list[Pending] = []
        self.races: list[str] = []
        self.async_copies = 0

    # -- bookkeeping -----------------------------------------------------------------------
    def _where(self) -> str:
        """The innermost program frame (file:line) of the current call."""
        for frame in reversed(traceback.extract_stack()):
            if frame.filename.startswith(self.program_dir):
                return f"{frame.filename[len(self.program_dir) :].lstrip('/')}:{frame.lineno}"
        return "?"

    def _record(self, source: torch.Tensor, api: str) -> None:
        self.async_copies += 1
        with torch.no_grad():
            snapshot = source.detach().clone()
        self.pending.append(Pending(source, snapshot, source._version, self._where(), api))

    def synchronize(self, at: str) -> None:
        for p in self.pending:
            cur = p.source.detach()
            if cur.shape != p.snapshot.shape or not _same(cur, p.snapshot):
                self.races.append(f"{p.api} at {p.where}: source changed before {at}")
            elif cur._version != p.version:
                self.races.append(f"{p.api} at {p.where}: source written before {at}")
        self.pending.clear()

    # -- patches ---------------------------------------------------------------------------
    def install(self) -> None:
        for name in TORCH_FACTORIES:
            if hasattr(torch, name):
                setattr(torch, name, self._factory(getattr(torch, name)))
        for name in TENSOR_FACTORIES:
            setattr(torch.Tensor, name, self._factory(getattr(torch.Tensor, name)))
        orig_to = torch.Tensor.to
        orig_copy = torch.Tensor.copy_
        standin = self

        def to(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            has_device, non_blocking = _parse_to(args, kwargs)
            if not has_device or self in standin.device:
                return orig_to(self, *args, **kwargs)
            if len(args) < 4:
                kwargs = {**kwargs, "copy": True}
            return standin._h2d(self, orig_to(self, *args, **kwargs), non_blocking, ".to")

        def cuda(self: torch.Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> torch.Tensor:
            if self in standin.device:
                return self
            out = orig_to(self, "cpu", non_blocking=non_blocking, copy=True, **kwargs)
            return standin._h2d(self, out, non_blocking, ".cuda")

        def copy_(self: torch.Tensor, src: Any, non_blocking: bool = False) -> torch.Tensor:
            out = orig_copy(self, src, non_blocking)
            # A copy into a pinned (host) buffer is a host memcpy: synchronous.
            if non_blocking and src in standin.pinned and self not in standin.pinned:
                standin._record(src, ".copy_")
            return out

        def pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
            if self in standin.pinned:
                return self
            out = self.clone(memory_format=torch.contiguous_format)
            standin.pinned.add(out)
            return out

        def is_pinned(self: torch.Tensor, device: Any = None) -> bool:
            return self in standin.pinned

        torch.Tensor.to = to  # type: ignore[method-assign]
        torch.Tensor.cuda = cuda  # type: ignore[method-assign]
        torch.Tensor.copy_ = copy_  # type: ignore[method-assign]
        torch.Tensor.pin_memory = pin_memory  # type: ignore[method-assign]
        torch.Tensor.is_pinned = is_pinned  # type: ignore[method-assign]
        torch.cuda.synchronize = lambda device=None: self.synchronize("torch.cuda.synchronize()")

    def _h2d(self, source: torch.Tensor, out: torch.Tensor, non_blocking: bool, api: str) -> torch.Tensor:
        self.device.add(out)
        if non_blocking and source in self.pinned:
            self._record(source, api)
        return out

    def _factory(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        standin = self

        @functools.wraps(fn)
        def factory(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("pin_memory"):
                try:
                    # PyTorch's own refusals (numpy, tensor data) come first: let them raise.
                    return fn(*args, **kwargs)
                except RuntimeError as e:
                    if NO_ALLOCATOR not in str(e):
                        raise
                out = fn(*args, **{**kwargs, "pin_memory": False})
                standin.pinned.add(out)
                return out
            out = fn(*args, **kwargs)
            if isinstance(out, torch.Tensor):
                if kwargs.get("device") is not None:
                    standin.device.add(out)
                elif standin.pin_all and "pin_memory" not in kwargs and standin._where() != "?":
                    standin.pinned.add(out)
            return out

        return factory


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return False


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, bool]:
    """(whether the call names a device, non_blocking) for the overloads of ``Tensor.to``."""
    non_blocking = bool(kwargs.get("non_blocking", False))
    if "device" in kwargs and kwargs["device"] is not None:
        has_device = True
        if args and isinstance(args[0], torch.dtype) and len(args) > 1:
            non_blocking = bool(args[1])
        return has_device, non_blocking
    if not args:
        return False, non_blocking
    first = args[0]
    if isinstance(first, torch.dtype):  # to(dtype, non_blocking, copy)
        return False, bool(args[1]) if len(args) > 1 else non_blocking
    if isinstance(first, torch.Tensor):  # to(other, non_blocking, copy)
        return True, bool(args[1]) if len(args) > 1 else non_blocking
    # to(device, dtype, non_blocking, copy)
    return True, bool(args[2]) if len(args) > 2 else non_blocking


def install(program_dir: str, pin_all: bool = False) -> Standin:
    standin = Standin(program_dir, pin_all)
    standin.install()
    sys.modules[__name__].active = standin  # type: ignore[attr-defined]
    return standin
