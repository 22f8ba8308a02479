"""PIN004 at run time beyond the agreement program: what the watch counts as a read, a
synchronisation and a view, that it costs nothing while no copy is pending or when turned off,
strict mode, and the real-CUDA rule (the copy's event) with a stand-in event."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import DataDependentOutputException  # noqa: E402
from torch.overrides import _get_current_function_mode_stack  # noqa: E402

from pinlint.runtime import PageableNonBlockingCopy, Report, watch  # noqa: E402
from pinlint.runtime._modes import _WatchMode  # noqa: E402
from pinlint.runtime.model import PIN004  # noqa: E402

reading = contextlib.suppress(DataDependentOutputException)  # value reads of fake tensors raise


def _mode() -> _WatchMode:
    return next(m for m in _get_current_function_mode_stack() if isinstance(m, _WatchMode))


def _reads(report: Report) -> list[int]:
    return [v.location.row for v in report.violations if v.code == PIN004]


def _line() -> int:
    import sys

    return sys._getframe(1).f_lineno


def test_fallback_only_while_a_copy_is_pending() -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        assert _mode().fallback is None
        cpu = gpu.to("cpu", non_blocking=True)
        assert _mode().fallback is not None  # pending: every call is looked at
        torch.cuda.synchronize()
        cpu.shape  # noqa: B018 - the first call after the synchronisation forgets the copy
        assert _mode().fallback is None
    assert report.d2h_total == 1 and _reads(report) == []


def test_turned_off_nothing_is_tracked() -> None:
    with watch(simulate="fake", check_host_reads=False) as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        assert _mode().fallback is None
        with reading:
            cpu.tolist()
    assert report.d2h_total == 0 and report.violations == []


def test_views_and_metadata_are_not_reads_but_reading_through_a_view_is() -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, 3, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        rows = list(cpu)
        first = cpu[0]
        _ = (cpu.shape, len(cpu), cpu.is_pinned(), cpu.T)  # (`.numpy()` of a fake tensor raises)
        assert _reads(report) == []
        line = _line() + 1
        print(rows[1])  # a row of the destination
    assert _reads(report) == [line] and first is not None


def test_a_host_computation_is_a_read_at_run_time() -> None:
    # `pinlint check` flags only the reads that leave the tensor world; the watch sees the host
    # kernel read the memory.
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        line = _line() + 1
        doubled = cpu * 2
    assert _reads(report) == [line] and doubled is not None
    assert "a host computation" in report.violations[0].message


def test_each_copy_is_reported_once() -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        print(cpu)
        print(cpu)
    assert len(_reads(report)) == 1


def test_event_wait_is_not_a_host_synchronisation() -> None:
    # `event.wait()` makes a stream wait for the event, not the host (pinlint check counts it as
    # a synchronisation only because it cannot tell what `done` is: precision first).
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        done.wait()
        print(cpu)
    assert len(_reads(report)) == 1


@pytest.mark.parametrize(
    "sync",
    [
        lambda gpu: torch.cuda.synchronize(),
        lambda gpu: torch.cuda.current_stream().synchronize(),
        lambda gpu: torch.cuda.default_stream().synchronize(),
        lambda gpu: torch.accelerator.synchronize(),
        lambda gpu: torch.cuda.Stream().synchronize(),
        lambda gpu: gpu.to("cpu"),  # a blocking copy
        lambda gpu: gpu.cpu(),  # `.cpu()`: a blocking copy
        lambda gpu: torch.ones(2).to("cuda", non_blocking=True),  # pageable: CUDA may synchronise
        lambda gpu: torch.tensor([1, 2], device="cuda"),  # a blocking construction
    ],
    ids=["device", "current", "default", "accelerator", "stream", "blocking-to", "cpu", "pageable-h2d", "tensor"],
)
def test_synchronisations(sync: Any) -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        sync(gpu)
        print(cpu)
    assert report.d2h_total == 1 and _reads(report) == []


def test_copy_into_pageable_memory_is_not_pending() -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        host = torch.empty(4)
        host.copy_(gpu, non_blocking=True)
        print(host)
    assert report.d2h_total == 0 and report.violations == []


def test_destination_is_pinned_as_pytorch_pins_it() -> None:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        cpu = gpu.to("cpu", non_blocking=True)
        torch.cuda.synchronize()
        cpu.to("cuda", non_blocking=True)  # back to the device: a pinned source
    assert [t.kind for t in report.transfers] == ["pinned-non-blocking"]


def test_strict_raises_at_the_read() -> None:
    with pytest.raises(PageableNonBlockingCopy, match=r"host read of the destination .*\[PIN004\]"):
        with watch(simulate="fake", strict=True):
            gpu = torch.zeros(4, device="cuda")
            cpu = gpu.to("cpu", non_blocking=True)
            print(cpu)


class _Event:
    """Stands in for ``torch.cuda.Event`` on a CPU-only build: done when told."""

    finished = False

    def record(self, stream: object = None) -> None:
        pass

    def query(self) -> bool:
        return self.finished


@pytest.mark.parametrize("finished", [False, True])
def test_real_cuda_reports_a_read_before_the_copys_event_completed(
    finished: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pinlint.runtime._engine import Session

    monkeypatch.setattr(_Event, "finished", finished)
    monkeypatch.setattr(torch.cuda, "Event", _Event)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: None)
    report = Report()
    session = Session(report, strict=False, simulation=None)
    assert session.host_reads is not None
    src, dst = torch.ones(3), torch.empty(3)  # real CUDA tensors are not available here
    with session.mode:
        session.host_reads._copied(dst, src, "Tensor.to")
        line = _line() + 1
        dst.tolist()
    assert report.d2h_total == 1
    assert _reads(report) == ([] if finished else [line])
    if not finished:
        assert "before the copy's event completed" in report.violations[0].message
