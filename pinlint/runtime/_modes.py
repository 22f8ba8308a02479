"""The torch function modes that route calls to a ``Session``: one that only pins (simulated
pinning for a watch), one that records. Imported only when a watch starts (imports torch)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from torch.overrides import TorchFunctionMode

from pinlint.runtime import simulate
from pinlint.runtime._torch_refs import _FACTORIES, _IS_PINNED, _PIN, _is_compiling, _Tensor


class PinMode(TorchFunctionMode):
    """Simulated pinning without a watch (``simulated_cuda()``): ``pin_memory=True`` factories,
    ``.pin_memory()`` and ``.is_pinned()`` answer from the process-wide registry; tensors stay real
    and nothing is recorded. For buffers made before a watch: fixtures, import time."""

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if _is_compiling():
            return func(*args, **kwargs)
        src = args[0] if args else None
        if func is _PIN and isinstance(src, _Tensor) and src.device.type == "cpu":
            return simulate.pin_memory(src)
        if func is _IS_PINNED and isinstance(src, _Tensor) and src.device.type == "cpu":
            return simulate.is_pinned(src)
        entry = _FACTORIES.get(func)
        if entry is not None and entry[1] and kwargs.get("pin_memory"):
            return simulate.pinned_factory(func, args, kwargs)
        return func(*args, **kwargs)


Handler = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]


class _WatchMode(TorchFunctionMode):
    """Dispatches to a handler only for the few functions of interest; everything else passes
    through with one dict lookup (the hot path: every torch call in the block comes here)."""

    def __init__(self, handlers: dict[Any, Handler]) -> None:
        super().__init__()
        self._handlers = handlers
        #: False once the watch has ended: threads that entered it may outlive it (threads="all").
        self.active = True
        #: Sees every other call while a non_blocking device-to-host copy is pending (PIN004's
        #: host reads); None otherwise, so the hot path pays one attribute test.
        self.fallback: Handler | None = None

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        __tracebackhide__ = True
        # Under torch.compile, Dynamo traces this method: pass through untouched, so the compiled
        # region has no graph break and no recompile. Its copies are the compiler's business.
        if _is_compiling() or not self.active:
            return func(*args, **kwargs) if kwargs else func(*args)
        handler = self._handlers.get(func)
        if handler is None:
            fallback = self.fallback
            if fallback is not None:
                return fallback(func, args, kwargs or {})
            if kwargs:
                return func(*args, **kwargs)
            return func(*args)
        return handler(func, args, kwargs or {})


class _SerialWatchMode(_WatchMode):
    """A simulated watch over several threads: FakeTensorMode is not thread-safe (while one thread
    runs a kernel on fake tensors, the mode's shared ``in_kernel_invocation`` flag makes another
    thread's fake op fail), so every torch call of the block holds one lock. Simulated runs compute
    no values; serialising them costs little and keeps what each thread does."""

    def __init__(self, handlers: dict[Any, Handler]) -> None:
        super().__init__(handlers)
        self._lock = threading.RLock()  # re-entrant: a handler calls torch again

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        __tracebackhide__ = True
        if _is_compiling() or not self.active:
            return super().__torch_function__(func, types, args, kwargs)
        with self._lock:
            return super().__torch_function__(func, types, args, kwargs)
