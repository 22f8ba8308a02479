"""PIN004 at run time: non_blocking device-to-host copies into pinned host memory, and host reads
of their destination before the copy is known to be done. Imported only when a watch starts (this
module imports torch).

A copy is *pending* from the moment it is issued until

* on simulated CUDA: the next synchronisation, that is a synchronisation call of the simulated
  world (``torch.cuda.synchronize()``, ``Stream``/``Event.synchronize()``, a ``query()``,
  ``torch.accelerator.synchronize()``: ``simulate_streams.sync_epoch``) or a blocking device operation
  the watch sees (a blocking copy to or from a device, a non_blocking host-to-device copy from
  pageable memory, which CUDA may synchronise to stage, a value read of a device tensor);
* on real CUDA: the completion of an event recorded on the copy's stream right after it.

The destination is keyed by storage, so a read through any view of it counts. A *host read* is a
call that turns the data into Python values or text (``.tolist()``, ``.item()``, ``bool()``,
``print``...: ``torch_api.RUNTIME_D2H_READING_METHODS``), or a host computation on it (any other
call whose result does not share the destination's storage: ``cpu[0] > 0``, ``cpu + 1``); views
(indexing, iteration, ``.numpy()``) and metadata (``.shape``) are not reads. Each copy is reported
once, at its first read, as ``pinlint check`` does.

While nothing is pending the watch's mode has no fallback: the hot path pays one attribute test.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from pinlint.runtime import simulate_streams
from pinlint.runtime._torch_refs import _ACCELERATORS, _CPU, _D2H_READS, _Tensor
from pinlint.runtime.model import DeviceToHostCopy, PageableNonBlockingCopy
from pinlint.runtime.simulate import StorageMap
from pinlint.runtime.sites import ReadHint, read_site

if TYPE_CHECKING:
    from pinlint.runtime._engine import Session

#: On real CUDA, how many calls pass between two looks at the pending copies' events (a copy
#: never read would otherwise keep the fallback on for the rest of the watch).
_PRUNE_EVERY = 256


@dataclass
class _Pending:
    copy: DeviceToHostCopy
    #: ``simulate_streams.sync_epoch()`` when the copy was issued.
    epoch: int
    #: Real CUDA: an event recorded on the copy's stream right after it (None when simulated).
    event: Any = None

    def done(self) -> bool:
        if self.event is not None:
            return bool(self.event.query())
        return simulate_streams.sync_epoch() != self.epoch


class HostReads:
    """One session's pending device-to-host copies (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.simulated = session.sim is not None
        #: storage of a destination -> the copies into it not yet known done.
        self.pending = StorageMap()
        self._calls = 0
        #: ``simulate_streams.sync_epoch()`` at the latest copy: once it moves, every copy is done.
        self._epoch = simulate_streams.sync_epoch()

    @property
    def active(self) -> bool:
        return self.session.mode.fallback is not None

    # -- copies ----------------------------------------------------------------------------------
    def to_host(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], src: torch.Tensor, nb: bool) -> Any:
        """``src.to("cpu", ...)`` (or ``.to(host_tensor)``) of a device tensor."""
        __tracebackhide__ = True
        out = func(*args, **kwargs)
        if not nb:
            self.synchronized()  # a blocking copy waits for the stream
        elif isinstance(out, _Tensor):
            if self.session.sim is not None:
                # PyTorch allocates a non_blocking D2H destination in pinned memory (`_to_copy`).
                self.session.sim.mark_pinned(out)
            self._copied(out, src, "Tensor.to")
        return out

    def copy_to_host(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], dst: torch.Tensor, src: torch.Tensor, nb: bool
    ) -> Any:
        """``host.copy_(dev, non_blocking=nb)``."""
        __tracebackhide__ = True
        out = func(*args, **kwargs)
        if nb and self.session._pinned(dst):
            self._copied(dst, src, "Tensor.copy_")
        else:
            # Blocking, or into pageable memory (CUDA returns once the copy is done): it waited.
            self.synchronized()
        return out

    def _copied(self, dst: torch.Tensor, src: torch.Tensor, api: str) -> None:
        session = self.session
        site, via = session.sites.find()
        event = None
        if not self.simulated:
            try:
                event = torch.cuda.Event()
                event.record(torch.cuda.current_stream(src.device))
            except Exception as exc:  # noqa: BLE001 - never break a working copy: count the blind spot
                session.report.add_unclassified(f"{api} to host (no event: {type(exc).__name__})"[:200])
                return
        copy = DeviceToHostCopy(
            api=api,
            site=site,
            device=str(src.device),
            nbytes=dst.numel() * dst.element_size(),
            dtype=str(dst.dtype).replace("torch.", ""),
            simulated=self.simulated,
            via=via,
        )
        session.report.count_d2h()
        entries = self.pending.get(dst)
        if entries is None:
            entries = []
            self.pending.add(dst, entries)
        self._epoch = simulate_streams.sync_epoch()
        entries.append(_Pending(copy, self._epoch, event))
        session.mode.fallback = self.on_call

    def synchronized(self) -> None:
        """A blocking device operation ran: every copy issued before it is done."""
        if self.active:
            simulate_streams.synchronized()
            self._forget_all()

    def _forget_all(self) -> None:
        self.pending = StorageMap()
        self.session.mode.fallback = None

    # -- every other call while a copy is pending -------------------------------------------------
    def on_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        if self.simulated:
            if simulate_streams.sync_epoch() != self._epoch:
                self._forget_all()  # a synchronisation call since the latest copy: none is in flight
                return func(*args, **kwargs)
        else:
            self._calls += 1
            if self._calls % _PRUNE_EVERY == 0 and not self._any_pending_undone():
                self._forget_all()
                return func(*args, **kwargs)
        read, device = self._inputs(args, kwargs)
        how = _D2H_READS.get(func)
        if how is not None:
            if read:
                self._report(func, read, f"`{how}`")
            elif device:
                self.synchronized()  # a value read of a device tensor waits for the stream
            return func(*args, **kwargs)
        if func is _CPU and device:
            self.synchronized()  # `.cpu()` of a device tensor is a blocking copy
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        if read and not _views_of(out, read):
            name = getattr(func, "__name__", None) or repr(func)
            self._report(func, read, f"a host computation, `{name}()`")
        return out

    def _any_pending_undone(self) -> bool:
        return any(not p.done() for entries in self.pending.values() for p in entries)

    def _inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[_Input], bool]:
        """The pending destinations among the call's tensors (with where they were passed), and
        whether a device tensor is among them."""
        read: list[_Input] = []
        device = False
        for position, value in enumerate((*args, *kwargs.values())):
            container = isinstance(value, (list, tuple))
            for element, t in enumerate(value if container else (value,)):
                if not isinstance(t, _Tensor):
                    continue
                kind = t.device.type
                if kind == "cpu":
                    if self.pending.get(t):
                        keyword = position >= len(args)
                        read.append(_Input(None if keyword else position, element if container else None, t))
                elif kind in _ACCELERATORS:
                    device = True
        return read, device

    def _report(self, func: Any, read: list[_Input], how: str) -> None:
        __tracebackhide__ = True
        session = self.session
        site, _via = session.sites.find()
        if site is None:
            return  # the read came from library code only: no user line to point at
        first = read[0]
        where = read_site(site, ReadHint(first.position, first.element, _is_method(func)))
        violations = []
        for entry in read:
            entries = self.pending.get(entry.tensor)
            if not entries:
                continue  # the same destination twice in one call: reported once
            for pending in entries:
                if not pending.done():
                    violations.append(session.report.add_read(pending.copy, where, how))
            entries.clear()  # each copy is reported once, at its first read
        if not self._any_pending_undone():
            self._forget_all()
        if violations and session.strict:
            from pinlint.runtime._messages import strict_message

            raise PageableNonBlockingCopy(strict_message(violations[0]), violations)


@dataclass(frozen=True)
class _Input:
    """A pending destination passed to a call: its argument position (None: by keyword) and its
    index inside a list or tuple argument."""

    position: int | None
    element: int | None
    tensor: torch.Tensor


def _is_method(func: Any) -> bool:
    """``Tensor.add`` (``self`` is the first argument) rather than ``torch.cat``."""
    if isinstance(func, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return True
    return getattr(func, "__qualname__", "").startswith(("Tensor.", "TensorBase.", "_TensorBase."))


def _views_of(out: Any, read: list[_Input]) -> bool:
    """Whether ``out`` is not data computed from the destinations read: a view of one of them (it
    shares the storage), several views (``unbind``), or no tensor at all (``.shape``, ``.numpy()``)."""
    storages = {_storage_key(entry.tensor) for entry in read}
    items = out if isinstance(out, (list, tuple)) else (out,)
    tensors = [t for t in items if isinstance(t, _Tensor)]
    return all(_storage_key(t) in storages for t in tensors)


def _storage_key(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError):  # sparse, nested: no storage
        return None
