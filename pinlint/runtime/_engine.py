"""The interception layer: a TorchFunctionMode that sees ``Tensor.to/.cuda/.copy_`` and the tensor
factories before the C++ binding runs (so it also works on CPU-only builds, where the binding
fails in lazy CUDA init). Imported only when a watch starts: this module imports torch.

TorchFunctionMode is thread-local: a session sees the thread that entered it, and with
``watch(threads="all")`` the threads started while it is active (see watch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from pinlint.runtime import layout
from pinlint.runtime._d2h import HostReads
from pinlint.runtime._messages import strict_message
from pinlint.runtime._modes import _SerialWatchMode, _WatchMode
from pinlint.runtime._to_calls import parse_to_target, sim_to
from pinlint.runtime._torch_refs import (
    _ACCELERATORS,
    _API,
    _CUDA,
    _DATA_TO_DEVICE,
    _FACTORIES,
    _FAKE_KEY,
    _FOREACH_COPY,
    _IS_PINNED,
    _LEGACY_TYPES,
    _MODULE_PY,
    _OPAQUE,
    _PIN,
    _PRESERVE,
    _TO,
    _TORCH_DIR,
    _TYPE,
    _aten,
    _aten_copy,
    _aten_to_copy,
    _get_dispatch_mode,
    _is_array_like_data,
    _on_cuda,
    _Tensor,
)
from pinlint.runtime.model import Birth, PageableNonBlockingCopy, Transfer
from pinlint.runtime.report import Report
from pinlint.runtime.simulate import Simulation, StorageMap, simulated_device
from pinlint.runtime.sites import SiteFinder


class Session:
    """The state of one active watch on one thread."""

    def __init__(
        self,
        report: Report,
        strict: bool,
        simulation: Simulation | None,
        skip_dirs: tuple[str, ...] = (),
        check_contiguous: bool = True,
        check_host_reads: bool = True,
        serial: bool = False,
    ) -> None:
        """``serial``: torch calls from several threads share the session (see _SerialWatchMode)."""
        self.report = report
        self.strict = strict
        self.sim = simulation
        self.check_contiguous = check_contiguous
        #: PIN004: non_blocking device-to-host copies and early host reads (None: not watched).
        self.host_reads = HostReads(self) if check_host_reads else None
        self.births = StorageMap()
        self.sites = SiteFinder(skip_dirs=(_TORCH_DIR, *skip_dirs), module_to_file=_MODULE_PY)
        handlers: dict[Any, Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]] = {
            _TO: self._on_to,
            _CUDA: self._on_cuda,
            _TYPE: self._on_type,
            _FOREACH_COPY: self._on_foreach_copy,
        }
        for fn in _OPAQUE:
            handlers[fn] = self._on_opaque
        for fn in _API:
            handlers[fn] = self._on_copy
        handlers[_aten_to_copy] = handlers[_aten._to_copy] = self._on_to_copy
        for fn in _FACTORIES:
            handlers[fn] = self._on_factory
        if simulation is not None:
            handlers[_PIN] = self._on_pin_memory
            handlers[_IS_PINNED] = self._on_is_pinned
        self.handlers = handlers
        self.mode = (_SerialWatchMode if serial and simulation is not None else _WatchMode)(handlers)

    # -- helpers ---------------------------------------------------------------------------------
    def _pinned(self, t: torch.Tensor) -> bool:
        if self.sim is not None:
            return self.sim.is_pinned(t)
        return bool(_IS_PINNED(t))

    def _record(
        self,
        api: str,
        src: torch.Tensor,
        device: torch.device,
        non_blocking: bool,
        *,
        same_dtype: bool,
        preserve_format: bool = True,
        dst: torch.Tensor | None = None,
    ) -> None:
        __tracebackhide__ = True  # pytest: a strict failure points at the user's line, not here
        try:
            transfer = self._transfer(api, src, device, non_blocking, same_dtype, preserve_format, dst)
        except Exception as exc:  # noqa: BLE001 - never turn a working copy into a crash: count it
            self.report.add_unclassified(f"{api} ({type(exc).__name__}: {exc})"[:200])
            return
        violation = self.report.add(transfer)
        if self.host_reads is not None and not (transfer.non_blocking and transfer.pinned and not transfer.staged):
            # A blocking copy waits for the stream; from pageable memory CUDA may synchronise to
            # stage it (precision: counted as a synchronisation).
            self.host_reads.synchronized()
        if violation is not None and self.strict:
            raise PageableNonBlockingCopy(strict_message(violation), [violation])

    def _transfer(
        self,
        api: str,
        src: torch.Tensor,
        device: torch.device,
        non_blocking: bool,
        same_dtype: bool,
        preserve_format: bool,
        dst: torch.Tensor | None,
    ) -> Transfer:
        site, via = self.sites.find()
        pinned = self._pinned(src)
        sizes, strides = tuple(src.shape), src.stride()
        contiguous = layout.is_contiguous(sizes, strides)
        staged = False
        if pinned and non_blocking and self.check_contiguous and src.numel() > 0:
            if dst is None:
                staged = layout.to_stages_through_pageable(sizes, strides, same_dtype, preserve_format)
            else:
                staged = layout.copy_stages_through_pageable(sizes, strides, tuple(dst.shape), dst.stride(), same_dtype)
        numel = dst.numel() if dst is not None else src.numel()
        return Transfer(
            api=api,
            site=site,
            device=str(simulated_device(device) if self.sim is not None else device),
            non_blocking=bool(non_blocking),
            pinned=pinned,
            contiguous=contiguous,
            staged=staged,
            nbytes=numel * src.element_size(),
            dtype=str(src.dtype).replace("torch.", ""),
            birth=self.births.get(src),
            via=via,
            simulated=self.sim is not None,
        )

    # -- handlers: each gets (func, args, kwargs) and returns what func would -----------------------
    def _on_to(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        src = args[0]
        target = parse_to_target(args[1:], kwargs) if isinstance(src, _Tensor) else None
        if target is None:
            return func(*args, **kwargs)
        device, dtype, non_blocking, memory_format = target
        hr = self.host_reads
        if hr is not None and device is not None and device.type == "cpu" and src.device.type in _ACCELERATORS:
            return hr.to_host(func, args, kwargs, src, bool(non_blocking))
        if device is None or device.type not in _ACCELERATORS:
            if hr is not None and hr.active:
                return hr.on_call(func, args, kwargs)  # a cast on the host reads the data
            return func(*args, **kwargs)
        src_type = src.device.type
        if src_type == "cpu":
            same_dtype = dtype is None or dtype == src.dtype
            preserve = memory_format is None or memory_format == _PRESERVE
            self._record(
                "Tensor.to",
                src,
                device,
                non_blocking,
                same_dtype=same_dtype,
                preserve_format=preserve,
            )
        if self.sim is not None and device.type == "cuda":
            return sim_to(self.sim, src, device, dtype, non_blocking, memory_format, bool(kwargs.get("copy", False)))
        return func(*args, **kwargs)

    def _on_cuda(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        src = args[0]
        rest = args[1:]
        raw_device = rest[0] if rest else kwargs.get("device")
        non_blocking = rest[1] if len(rest) > 1 else kwargs.get("non_blocking", False)
        memory_format = kwargs.get("memory_format")
        try:
            if raw_device is None:
                device = torch.device("cuda")
            elif isinstance(raw_device, int):
                device = torch.device("cuda", raw_device)
            else:
                device = torch.device(raw_device)
        except (RuntimeError, TypeError):
            return func(*args, **kwargs)
        if not isinstance(src, _Tensor) or device.type != "cuda":
            return func(*args, **kwargs)
        if src.device.type == "cpu":
            preserve = memory_format is None or memory_format == _PRESERVE
            self._record(
                "Tensor.cuda",
                src,
                device,
                bool(non_blocking),
                same_dtype=True,
                preserve_format=preserve,
            )
        if self.sim is not None:
            return sim_to(self.sim, src, device, None, bool(non_blocking), memory_format, False)
        return func(*args, **kwargs)

    def _on_copy(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        if len(args) < 2 or not isinstance(args[0], _Tensor) or not isinstance(args[1], _Tensor):
            return func(*args, **kwargs)
        dst, src = args[0], args[1]
        non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        dst_type = dst.device.type
        if dst_type not in _ACCELERATORS:
            hr = self.host_reads
            if hr is not None and dst_type == "cpu":
                if src.device.type in _ACCELERATORS:
                    return hr.copy_to_host(func, args, kwargs, dst, src, non_blocking)
                if hr.active:
                    return hr.on_call(func, args, kwargs)  # host to host: reads the source
            return func(*args, **kwargs)
        if src.device.type == "cpu":
            self._record(
                _API[func],
                src,
                dst.device,
                non_blocking,
                same_dtype=src.dtype == dst.dtype,
                dst=dst,
            )
        if self.sim is not None and dst_type == "cuda":
            with torch.no_grad():  # see simulate.py: autograd on fake CUDA tensors aborts the process
                return _aten_copy(self.sim.fake(dst), self.sim.fake(src), non_blocking)
        return func(*args, **kwargs)

    def _on_to_copy(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``torch.ops.aten._to_copy(src, device=..., non_blocking=...)`` called directly."""
        __tracebackhide__ = True
        src = args[0] if args else None
        raw = kwargs.get("device")
        if not isinstance(src, _Tensor) or raw is None:
            return func(*args, **kwargs)
        device = torch.device("cuda", raw) if type(raw) is int else torch.device(raw)
        if device.type not in _ACCELERATORS:
            return func(*args, **kwargs)
        non_blocking = bool(kwargs.get("non_blocking", False))
        if src.device.type == "cpu":
            dtype, fmt = kwargs.get("dtype"), kwargs.get("memory_format")
            self._record(
                _API[func],
                src,
                device,
                non_blocking,
                same_dtype=dtype is None or dtype == src.dtype,
                preserve_format=fmt is None or fmt == _PRESERVE,
            )
        if self.sim is not None and device.type == "cuda":
            with torch.no_grad():
                return _aten_to_copy(self.sim.fake(src), *args[1:], **{**kwargs, "device": simulated_device(device)})
        return func(*args, **kwargs)

    def _on_type(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``src.type("torch.cuda.FloatTensor", non_blocking=True)``: an H2D copy with a cast."""
        __tracebackhide__ = True
        src = args[0] if args else None
        target = args[1] if len(args) > 1 else kwargs.get("dtype")
        name = (
            target
            if isinstance(target, str)
            else f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', '')}"
        )
        module, _, type_name = name.rpartition(".")
        dtype = _LEGACY_TYPES.get(type_name)
        if not isinstance(src, _Tensor) or module != "torch.cuda" or dtype is None:
            return func(*args, **kwargs)
        non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        device = torch.device("cuda")
        if src.device.type == "cpu":
            self._record("Tensor.type", src, device, non_blocking, same_dtype=dtype == src.dtype)
        if self.sim is not None:
            return sim_to(self.sim, src, device, dtype, non_blocking, None, False)
        return func(*args, **kwargs)

    def _on_foreach_copy(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``torch._foreach_copy_(dsts, srcs, non_blocking=...)``: one transfer per H2D pair."""
        __tracebackhide__ = True
        if len(args) < 2:
            return func(*args, **kwargs)
        dsts, srcs = list(args[0]), list(args[1])
        non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        for dst, src in zip(dsts, srcs):
            if (
                isinstance(dst, _Tensor)
                and isinstance(src, _Tensor)
                and dst.device.type in _ACCELERATORS
                and src.device.type == "cpu"
            ):
                self._record(
                    "torch._foreach_copy_",
                    src,
                    dst.device,
                    non_blocking,
                    same_dtype=src.dtype == dst.dtype,
                    dst=dst,
                )
        if self.sim is not None and any(isinstance(d, _Tensor) and d.device.type == "cuda" for d in dsts):
            with torch.no_grad():
                for dst, src in zip(dsts, srcs):
                    _aten_copy(self.sim.fake(dst), self.sim.fake(src), non_blocking)
            return None
        return func(*args, **kwargs)

    def _on_opaque(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """An aten op that may copy host data to a device, which the watch cannot classify."""
        host = device = False
        for a in (*args, *kwargs.values()):
            for t in a if isinstance(a, (list, tuple)) else (a,):
                if isinstance(t, _Tensor):
                    kind = t.device.type
                    host = host or kind == "cpu"
                    device = device or kind in _ACCELERATORS
                elif isinstance(t, (str, torch.device)):
                    device = device or str(t).partition(":")[0] in _ACCELERATORS
        if host and device:
            self.report.add_unclassified(_OPAQUE[func])
        return func(*args, **kwargs)

    def _on_factory(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name, pinnable = _FACTORIES[func]
        if self.sim is not None and pinnable and kwargs.get("pin_memory"):
            out = self.sim.pinned_factory(func, args, kwargs)
        elif self.sim is not None and _get_dispatch_mode(_FAKE_KEY) is None and _on_cuda(kwargs.get("device")):
            # A thread reached through threads="all" has no FakeTensorMode of its own: CUDA
            # factories run under the simulation's, briefly (CPU tensors there stay real).
            with self.sim.fake_mode:
                out = func(*args, **kwargs)
        elif self.host_reads is not None and self.host_reads.active:
            out = self.host_reads.on_call(func, args, kwargs)  # `torch.cat([x, cpu])` reads cpu
        else:
            out = func(*args, **kwargs)
        if not isinstance(out, _Tensor):
            return out
        out_type = out.device.type
        if out_type == "cpu":
            born = self.births.get(out) is None  # first creator wins: as_tensor(t) returns t's storage
            if born or self.report.profile is not None:
                site, _via = self.sites.find()
                if self.report.profile is not None:
                    # --profile: every call counts, not only the first birth of a storage.
                    self.report.count_construction(name, site, out.numel() * out.element_size())
            if born:
                note = ""
                if name == "torch.tensor" and args:
                    note = _is_array_like_data(args[0])
                if site is not None:
                    pin_false = pinnable and "pin_memory" in kwargs and not kwargs["pin_memory"]
                    self.births.add(out, Birth(name, site, pinnable and not note, note, pin_false))
        elif out_type in _ACCELERATORS and name in _DATA_TO_DEVICE and args:
            data = args[0]
            if not (isinstance(data, _Tensor) and data.device.type != "cpu"):
                # torch.tensor(data, device="cuda"): a blocking pageable copy (PIN003's pattern)
                site, _via = self.sites.find()
                transfer = Transfer(
                    api=name,
                    site=site,
                    device=str(out.device),
                    non_blocking=False,
                    pinned=False,
                    contiguous=True,
                    staged=False,
                    nbytes=out.numel() * out.element_size(),
                    dtype=str(out.dtype).replace("torch.", ""),
                    simulated=self.sim is not None,
                )
                self.report.add(transfer)
                if self.host_reads is not None:
                    self.host_reads.synchronized()  # a blocking copy waits for the stream
        return out

    def _on_pin_memory(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self.sim is not None
        src = args[0]
        if isinstance(src, _Tensor) and src.device.type == "cpu":
            return self.sim.pin_memory(src)
        return func(*args, **kwargs)

    def _on_is_pinned(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self.sim is not None
        src = args[0]
        if isinstance(src, _Tensor) and src.device.type == "cpu":
            return self.sim.is_pinned(src)
        return func(*args, **kwargs)
