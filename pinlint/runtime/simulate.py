"""``simulate="fake"``: run CUDA-targeted code on a CPU-only build.

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
* A small, consistent CUDA world (``push_world``): ``torch.cuda`` / ``torch.accelerator`` queries
  say one device to user code (and to ``torch.utils.data``, which decides like user code), the truth
  to torch's other internals (FakeTensorMode relies on it); ``synchronize``/``set_device`` are
  no-ops, streams and events are fakes that complete at once (a synchronisation call is counted:
  PIN004's host reads before one are reported). The DataLoader's iterator runs
  outside FakeTensorMode (loading is CPU work), so its batches are real and pinned through the
  watch. The patches are process-wide and reference-counted; code that bound a function before the
  watch (``from torch.cuda import is_available``) is not reached.
* Pinning is remembered process-wide (``PINNED``), so buffers pinned under ``simulated_cuda()``
  before a watch (fixtures, import time) are pinned for every later simulation.
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
from pinlint.runtime.simulate_streams import (
    SIMULATED_DEVICE_INDEX,
    FakeEvent,
    FakeStream,
    _default_stream,
    _stream_context,
    _sync_call,
)


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

    def values(self) -> list[Any]:
        """The values whose storage is still alive."""
        return [value for ref, value in self._entries.values() if not ref.expired()]

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
#: (owner object, attribute name, original value) of every patched attribute, while patched.
_originals: list[tuple[Any, str, Any]] = []

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
#: torch code that decides like user code: the DataLoader asks ``torch.accelerator`` whether to pin.
_TORCH_USER_DIRS = (os.path.join(_TORCH_DIR, "utils", "data") + os.sep,)
SIMULATED_DEVICE_NAME = "pinlint simulated CUDA"


def _caller_is_torch(depth: int = 2) -> bool:
    """True when the caller is torch's own machinery (FakeTensorMode asks whether CUDA exists and,
    told yes, would constant-fold small ``_to_copy`` calls by running the real CUDA op)."""
    caller = sys._getframe(depth).f_code.co_filename
    return caller.startswith(_TORCH_DIR) and not caller.startswith(_TORCH_USER_DIRS)


def _query(name: str, simulated: Any) -> Callable[..., Any]:
    """A device query that answers ``simulated`` to user code and the truth to torch's internals."""

    def query(*args: Any, **kwargs: Any) -> Any:
        if _caller_is_torch():
            return _original(name)(*args, **kwargs)
        return simulated

    query.__name__ = name.rpartition(".")[2]
    query.__qualname__ = f"simulated {name}"
    return query


def _original(name: str) -> Any:
    for owner, attr, value in _originals:
        if f"{owner.__name__}.{attr}" == name:
            return value
    raise KeyError(name)


def _noop(name: str) -> Callable[..., None]:
    """``synchronize``, ``set_device``, ...: nothing to wait for or select in a simulation. One
    function per attribute: torch.compile keys its handlers by function and refuses duplicates."""

    def noop(*_args: Any, **_kwargs: Any) -> None:
        return None

    noop.__name__ = name.rpartition(".")[2]
    noop.__qualname__ = f"simulated {name}"
    return noop


def _device_name(*_args: Any, **_kwargs: Any) -> str:
    return SIMULATED_DEVICE_NAME


def _simulated_world() -> list[tuple[Any, str, Any]]:
    """Every attribute a simulation replaces: a small, consistent CUDA world with one device."""
    cuda, acc = torch.cuda, getattr(torch, "accelerator", None)
    cuda0 = torch.device("cuda", SIMULATED_DEVICE_INDEX)
    return [
        (cuda, "is_available", _query("torch.cuda.is_available", True)),
        (cuda, "device_count", _query("torch.cuda.device_count", 1)),
        (cuda, "current_device", _query("torch.cuda.current_device", SIMULATED_DEVICE_INDEX)),
        (cuda, "get_device_name", _device_name),
        (cuda, "set_device", _noop("torch.cuda.set_device")),
        (cuda, "synchronize", _sync_call("torch.cuda.synchronize")),
        (cuda, "current_stream", _default_stream),
        (cuda, "default_stream", _default_stream),
        (cuda, "Stream", FakeStream),
        (cuda, "Event", FakeEvent),
        (cuda, "stream", _stream_context),
        (acc, "is_available", _query("torch.accelerator.is_available", True)),
        (acc, "device_count", _query("torch.accelerator.device_count", 1)),
        (acc, "current_accelerator", _query("torch.accelerator.current_accelerator", cuda0)),
        (
            acc,
            "current_device_index",
            _query("torch.accelerator.current_device_index", SIMULATED_DEVICE_INDEX),
        ),
        (acc, "set_device_index", _noop("torch.accelerator.set_device_index")),
        (acc, "synchronize", _sync_call("torch.accelerator.synchronize")),
    ]


def _dataloader_patches() -> list[tuple[Any, str, Any]]:
    """Data loading is CPU work: run the DataLoader's iterator outside FakeTensorMode, so its seed
    (``.item()``), samplers and collation compute real values; ``pin_memory=True`` then pins the
    batch through the watch (``Tensor.pin_memory`` is intercepted), as on a CUDA machine."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    orig_init, orig_next = base.__init__, base.__next__

    def __init__(self: Any, loader: Any) -> None:
        with unset_fake_temporarily():
            orig_init(self, loader)

    def __next__(self: Any) -> Any:
        with unset_fake_temporarily():
            return orig_next(self)

    return [(base, "__init__", __init__), (base, "__next__", __next__)]


def push_world() -> None:
    """Enter the simulated CUDA world (process-wide, reference-counted)."""
    global _patch_depth
    with _patch_lock:
        if _patch_depth == 0:
            for owner, attr, value in _simulated_world() + _dataloader_patches():
                if owner is None or attr not in owner.__dict__:
                    continue  # an older torch without it (torch.accelerator is 2.6+)
                _originals.append((owner, attr, owner.__dict__[attr]))
                setattr(owner, attr, value)
        _patch_depth += 1


def pop_world() -> None:
    global _patch_depth
    with _patch_lock:
        _patch_depth -= 1
        if _patch_depth == 0:
            while _originals:
                owner, attr, value = _originals.pop()
                setattr(owner, attr, value)


def world_active() -> bool:
    return _patch_depth > 0


def simulated_device(device: torch.device) -> torch.device:
    """``cuda`` -> ``cuda:0``: the aten ops need an explicit index without a CUDA runtime."""
    if device.index is None:
        return torch.device(device.type, SIMULATED_DEVICE_INDEX)
    return device


#: Simulated pinning, process-wide: buffers pinned under ``simulated_cuda()`` before a watch (in
#: fixtures, at import time) stay pinned for every later simulation.
PINNED = StorageMap()


class Simulation:
    """Entered around the watch's function mode (fake mode first, so it is exited last)."""

    def __init__(self, patch_cuda_available: bool = True) -> None:
        self.pinned = PINNED
        self._patch = patch_cuda_available
        self._fake: Any = None
        self._no_grad: Any = None
        self._fakes: WeakIdKeyDictionary = WeakIdKeyDictionary()

    def __enter__(self) -> Simulation:  # noqa: PYI034 - typing.Self needs Python 3.11
        self._no_grad = torch.no_grad()
        self._no_grad.__enter__()
        try:
            self._fake = FakeTensorMode(allow_non_fake_inputs=True)
            self._fake.__enter__()
        except BaseException:
            self._no_grad.__exit__(None, None, None)
            raise
        if self._patch:
            push_world()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._patch:
                pop_world()
        finally:
            try:
                self._fake.__exit__(*exc)
            finally:
                self._no_grad.__exit__(None, None, None)

    @property
    def fake_mode(self) -> FakeTensorMode:
        return self._fake

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

    # -- pinning (process-wide: see PINNED) -------------------------------------------------
    def is_pinned(self, t: torch.Tensor) -> bool:
        return is_pinned(t)

    def mark_pinned(self, t: torch.Tensor) -> torch.Tensor:
        return mark_pinned(t)

    def pinned_factory(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return pinned_factory(func, args, kwargs)

    def pin_memory(self, t: torch.Tensor) -> torch.Tensor:
        return pin_memory(t)


def is_pinned(t: torch.Tensor) -> bool:
    return bool(PINNED.get(t))


def mark_pinned(t: torch.Tensor) -> torch.Tensor:
    PINNED.add(t, True)
    return t


def pinned_factory(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A ``pin_memory=True`` factory: the real call first (PyTorch's own validation still fires),
    then, on "no pinned allocator", the same call unpinned, marked pinned."""
    try:
        out = func(*args, **kwargs)
    except RuntimeError as exc:
        if not any(s in str(exc) for s in torch_api.NO_PINNED_ALLOCATOR_ERRORS):
            raise
        out = func(*args, **{**kwargs, "pin_memory": False})
    if isinstance(out, torch.Tensor) and out.device.type == "cpu":
        mark_pinned(out)
    return out


def pin_memory(t: torch.Tensor) -> torch.Tensor:
    """``Tensor.pin_memory()``: a pinned copy with the same sizes and strides (as ATen's
    ``_pin_memory``), or the tensor itself when it already is pinned."""
    if is_pinned(t):
        return t
    out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="cpu")
    out.copy_(t)
    return mark_pinned(out)
