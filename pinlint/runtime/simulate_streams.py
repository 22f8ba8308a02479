"""Streams, events and synchronisations of the simulated CUDA world: work completes when issued,
and every synchronisation is counted (PIN004 at run time reports a host read made before one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

SIMULATED_DEVICE_INDEX = 0

#: How many synchronisation calls the simulated world has seen (process-wide, as the device is):
#: a non_blocking device-to-host copy made before the last one is complete (PIN004 at run time).
_sync_epoch = 0


def synchronized() -> None:
    """A synchronisation happened: every copy issued so far is complete."""
    global _sync_epoch
    _sync_epoch += 1


def sync_epoch() -> int:
    return _sync_epoch


def _sync_call(name: str) -> Callable[..., None]:
    """``torch.cuda.synchronize``, ``torch.accelerator.synchronize``: nothing to wait for, but the
    host now knows every copy is done. One function per attribute, as for ``_noop``."""

    def synchronize(*_args: Any, **_kwargs: Any) -> None:
        synchronized()

    synchronize.__name__ = name.rpartition(".")[2]
    synchronize.__qualname__ = f"simulated {name}"
    return synchronize


class FakeEvent:
    """``torch.cuda.Event`` in a simulation: every operation completes at once. ``synchronize()``
    and ``query()`` tell the host the work is done (a synchronisation); ``wait()`` makes a stream
    wait, not the host (not one)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing

    def record(self, stream: Any = None) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass

    def query(self) -> bool:
        synchronized()
        return True

    def synchronize(self) -> None:
        synchronized()

    def elapsed_time(self, end_event: FakeEvent) -> float:
        return 0.0


class FakeStream:
    """``torch.cuda.Stream`` in a simulation: work "completes" when issued, so waits are no-ops."""

    def __init__(self, device: Any = None, priority: int = 0, **_kwargs: Any) -> None:
        self.device = torch.device("cuda", SIMULATED_DEVICE_INDEX)
        self.priority = priority
        self.cuda_stream = 0

    def wait_event(self, event: Any) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass

    def record_event(self, event: FakeEvent | None = None) -> FakeEvent:
        return event if event is not None else FakeEvent()

    def query(self) -> bool:
        synchronized()
        return True

    def synchronize(self) -> None:
        synchronized()

    def __enter__(self) -> FakeStream:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        pass


_DEFAULT_STREAM: FakeStream | None = None


def _default_stream(*_args: Any, **_kwargs: Any) -> FakeStream:
    global _DEFAULT_STREAM
    if _DEFAULT_STREAM is None:
        _DEFAULT_STREAM = FakeStream()
    return _DEFAULT_STREAM


def _stream_context(stream: Any = None) -> Any:
    """``with torch.cuda.stream(s):``: nothing to switch."""
    import contextlib

    return contextlib.nullcontext(stream)
