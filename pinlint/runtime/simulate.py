"""``simulate="fake"``: run CUDA-targeted code on a CPU-only build (research/runtime.md §3).

* The block runs under ``FakeTensorMode(allow_non_fake_inputs=True)``: tensors created inside are
  fake (shapes, dtypes, devices; no values), so ``torch.empty(4, device="cuda")`` works.
* H2D calls are re-issued by the engine as aten ops with an explicit device index, which bypasses
  the Python binding's lazy CUDA init and device guard that fail on a CPU-only build.
* Pinning is simulated with a registry keyed by storage: ``pin_memory=True`` factories and
  ``.pin_memory()`` mark their result's storage, so views of it count as pinned. The real factory
  call is tried first, so PyTorch's own validation (``Can't pin tensor constructed from numpy``)
  still fires; only the "no pinned allocator on this machine" error is simulated away.
* Autograd is disabled in the block (``torch.no_grad()``): recording an autograd node whose input
  is a fake CUDA tensor aborts the whole process on a CPU-only build (``c10::Error`` "PyTorch is
  not linked with support for cuda devices" thrown from ``InputMetadata``, uncatchable). Code that
  re-enables grad inside the block is not supported; ``.backward()`` raises a normal RuntimeError.
* ``torch.cuda.is_available()`` answers True while a simulation is active, so a project's own
  ``is_pin_memory_available(device)`` helper (typically ``torch.cuda.is_available()``) takes the
  pinned branch, as on a CUDA machine. Calls from inside torch/ still get the truth (FakeTensorMode
  relies on it). The patch is process-wide (other threads see it too) and reference-counted; it
  is undone when the last simulation ends. Code that bound ``is_available`` before the watch
  (``from torch.cuda import is_available``) or that asks ``torch.accelerator`` is not patched.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils.weak import WeakIdKeyDictionary

from pinlint import torch_api

SIMULATED_DEVICE_INDEX = 0


class StorageMap:
    """Maps a tensor's storage to a value, weakly.

    Keyed by the StorageImpl address. Holding a weak reference keeps the StorageImpl's memory (not
    its data) allocated, so an address cannot be reused by a new storage while its key is here;
    expired entries are dropped on lookup and pruned every few thousand inserts.
    """

    _PRUNE_EVERY = 4096

    def __init__(self) -> None:
        self._entries: dict[int, tuple[StorageWeakRef, Any]] = {}
        self._inserts = 0

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _storage(t: torch.Tensor) -> Any:
        try:
            return t.untyped_storage()
        except (RuntimeError, NotImplementedError):  # sparse, nested, ... tensors have no storage
            return None

    def get(self, t: torch.Tensor) -> Any:
        storage = self._storage(t)
        if storage is None:
            return None
        key = storage._cdata
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0].expired():
            del self._entries[key]
            return None
        return entry[1]

    def add(self, t: torch.Tensor, value: Any, replace: bool = True) -> None:
        storage = self._storage(t)
        if storage is None:
            return
        key = storage._cdata
        entry = self._entries.get(key)
        if entry is not None and not entry[0].expired() and not replace:
            return
        self._entries[key] = (StorageWeakRef(storage), value)
        self._inserts += 1
        if self._inserts % self._PRUNE_EVERY == 0:
            self._entries = {k: e for k, e in self._entries.items() if not e[0].expired()}


_patch_lock = threading.Lock()
_patch_depth = 0
_original_is_available: Callable[[], bool] | None = None


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _simulated_is_available() -> bool:
    """True for user code; the truth for torch's own internals. FakeTensorMode itself asks
    ``torch.cuda.is_available()`` (``avoid_device_init``) and, told True, would constant-fold
    ``_to_copy`` of small constants by running the real CUDA op."""
    caller = sys._getframe(1).f_code.co_filename
    if caller.startswith(_TORCH_DIR):
        assert _original_is_available is not None
        return _original_is_available()
    return True


def _push_cuda_available() -> None:
    global _patch_depth, _original_is_available
    with _patch_lock:
        if _patch_depth == 0:
            _original_is_available = torch.cuda.is_available
            torch.cuda.is_available = _simulated_is_available
        _patch_depth += 1


def _pop_cuda_available() -> None:
    global _patch_depth, _original_is_available
    with _patch_lock:
        _patch_depth -= 1
        if _patch_depth == 0 and _original_is_available is not None:
            torch.cuda.is_available = _original_is_available
            _original_is_available = None


def simulated_device(device: torch.device) -> torch.device:
    """``cuda`` -> ``cuda:0``: the aten ops need an explicit index without a CUDA runtime."""
    if device.index is None:
        return torch.device(device.type, SIMULATED_DEVICE_INDEX)
    return device


class Simulation:
    """Entered around the watch's function mode (fake mode first, so it is exited last)."""

    def __init__(self, patch_cuda_available: bool = True) -> None:
        self.pinned = StorageMap()
        self._patch = patch_cuda_available
        self._fake: Any = None
        self._no_grad: Any = None
        self._fakes: WeakIdKeyDictionary = WeakIdKeyDictionary()

    def __enter__(self) -> Simulation:
        self._no_grad = torch.no_grad()
        self._no_grad.__enter__()
        try:
            self._fake = FakeTensorMode(allow_non_fake_inputs=True)
            self._fake.__enter__()
        except BaseException:
            self._no_grad.__exit__(None, None, None)
            raise
        if self._patch:
            _push_cuda_available()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._patch:
                _pop_cuda_available()
        finally:
            try:
                self._fake.__exit__(*exc)
            finally:
                self._no_grad.__exit__(None, None, None)

    def fake(self, t: torch.Tensor) -> torch.Tensor:
        """A real tensor made before the block (or a module's parameter) as a FakeTensor. Without
        this, FakeTensorMode runs an op whose inputs are all real for real, which fails for CUDA."""
        if isinstance(t, FakeTensor):
            return t
        # Memoised: converting costs ~100 µs and hot loops copy the same outside tensor again.
        key = (tuple(t.shape), t.stride(), t.dtype, t.storage_offset())
        hit = self._fakes.get(t)
        if hit is not None and hit[0] == key:
            return hit[1]
        fake = self._fake.from_tensor(t)
        self._fakes[t] = (key, fake)
        return fake

    # -- pinning --------------------------------------------------------------------------------
    def is_pinned(self, t: torch.Tensor) -> bool:
        return bool(self.pinned.get(t))

    def mark_pinned(self, t: torch.Tensor) -> torch.Tensor:
        self.pinned.add(t, True)
        return t

    def pinned_factory(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            out = func(*args, **kwargs)
        except RuntimeError as exc:
            if not any(s in str(exc) for s in torch_api.NO_PINNED_ALLOCATOR_ERRORS):
                raise
            out = func(*args, **{**kwargs, "pin_memory": False})
        if isinstance(out, torch.Tensor) and out.device.type == "cpu":
            self.mark_pinned(out)
        return out

    def pin_memory(self, t: torch.Tensor) -> torch.Tensor:
        """``Tensor.pin_memory()``: a pinned copy with the same sizes and strides (as ATen's
        ``_pin_memory``), or the tensor itself when it already is pinned."""
        if self.is_pinned(t):
            return t
        out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="cpu")
        out.copy_(t)
        return self.mark_pinned(out)
