"""Compile safety, threads, the extra copy entry points, blind spots and the simulated CUDA world,
with real torch on CPU. Every watched block asserts that transfers were observed, so a broken hook
cannot pass."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch")

from pinlint.runtime import Report, simulated_cuda, watch
from pinlint.runtime.model import PIN001, PIN002


def _rows(report: Report) -> list[int]:
    return [t.site.row for t in report.transfers if t.site is not None]


# -- torch.compile -------------------------------------------------------------------------------
def _compiled_body(x: torch.Tensor) -> torch.Tensor:
    # A factory and a dtype cast: both reach the watch's handlers when traced.
    return (x * 2 + torch.ones(4)).to(torch.float64).sum()


@pytest.mark.parametrize("fullgraph", [True, False])
@pytest.mark.parametrize("simulate", [None, "fake"])
def test_compiled_region_is_not_intercepted(fullgraph: bool, simulate: str | None) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_compiled_body, fullgraph=fullgraph, backend="eager")
    with watch(simulate=simulate) as report:  # type: ignore[arg-type]
        out = compiled(torch.ones(4))
        compiled_transfers = report.total
        # An eager copy after it is still recorded: the watch is live. Without simulation the
        # CPU-only build then fails the copy itself; the watch has recorded it first.
        with contextlib.suppress(AssertionError, RuntimeError):
            torch.ones(4).to("cuda", non_blocking=True)
    if simulate is None:
        assert float(out) == 12.0
    assert compiled_transfers == 0  # the compiled region recorded nothing
    assert report.total == 1 and report.transfers[0].api == "Tensor.to"
    assert not report.unclassified


def test_compile_under_watches_compiles_once_more_not_per_watch() -> None:
    torch._dynamo.reset()
    counts: list[int] = []

    def backend(gm: torch.fx.GraphModule, _inputs: list[torch.Tensor]) -> torch.fx.GraphModule:
        counts.append(1)
        return gm

    compiled = torch.compile(_compiled_body, fullgraph=True, backend=backend)
    compiled(torch.ones(4))
    for _ in range(3):
        with watch() as report:
            compiled(torch.ones(4))
            torch.ones(4).to(torch.float16)
        assert report.total == 0
    compiled(torch.ones(4))
    # Dynamo guards on the mode stack: one more graph for "a watch is active", shared by every
    # later watch; fullgraph=True proves there is no graph break.
    assert len(counts) == 2


# -- threads -------------------------------------------------------------------------------------
def _produce(device: str = "cuda") -> None:
    pageable = torch.ones(8)
    pageable.to(device, non_blocking=True)


def test_threads_all_sees_copies_on_new_threads() -> None:
    with watch(simulate="fake", threads="all") as report:
        t = threading.Thread(target=_produce)
        t.start()
        t.join()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda _: _produce(), range(3)))
    assert report.total == 4
    assert all(v.code == PIN001 for v in report.violations)
    assert {t.site.function for t in report.transfers if t.site} == {"_produce"}


def test_threads_current_does_not_see_other_threads() -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _produce("cpu")  # a CPU-only build cannot run a real CUDA copy: keep it on the host
            torch.ones(8).to(torch.float16)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    with watch(simulate="fake") as report:
        t = threading.Thread(target=run)
        t.start()
        t.join()
        _produce()
    assert not errors and report.total == 1  # only the main thread's copy


def test_thread_that_outlives_the_watch_is_left_alone() -> None:
    go, done = threading.Event(), threading.Event()
    results: list[object] = []

    def late() -> None:
        go.wait(5)
        results.append(float(torch.ones(4).sum()))  # after the watch: real values, not fakes
        done.set()

    with watch(simulate="fake", threads="all") as report:
        t = threading.Thread(target=late)
        t.start()
        _produce()
    go.set()
    done.wait(5)
    t.join()
    assert results == [4.0] and report.total == 1


# -- entry points --------------------------------------------------------------------------------
def test_every_entry_point_is_recorded_with_its_line() -> None:
    with watch(simulate="fake") as report:
        x = torch.ones(4)
        pinned = torch.ones(4, pin_memory=True)
        dst = torch.empty(4, device="cuda")
        torch._foreach_copy_([dst, torch.empty(4, device="cuda")], [x, pinned], non_blocking=True)
        torch.ops.aten.copy_.default(dst, x, True)
        torch.ops.aten.copy_(dst, pinned, True)
        torch.ops.aten._to_copy.default(x, device="cuda", non_blocking=True)
        torch.ops.aten._to_copy(pinned, device=torch.device("cuda"), non_blocking=True)
        y = x.type(torch.cuda.FloatTensor, non_blocking=True)
        x.type("torch.cuda.HalfTensor", non_blocking=True)
        x.type(torch.float64)  # a CPU cast: not a transfer
    apis = [t.api for t in report.transfers]
    assert apis == [
        "torch._foreach_copy_",
        "torch._foreach_copy_",
        "aten.copy_",
        "aten.copy_",
        "aten._to_copy",
        "aten._to_copy",
        "Tensor.type",
        "Tensor.type",
    ]
    assert [t.pinned for t in report.transfers] == [
        False,
        True,
        False,
        True,
        False,
        True,
        False,
        False,
    ]
    assert y.device.type == "cuda" and report.transfers[-1].nbytes == 16
    pin001 = [v for v in report.violations if v.code == PIN001]
    assert len(pin001) == 5 and {v.location.row for v in pin001} == {_rows(report)[0] - 3}
    assert "torch._foreach_copy_ x2" in report.observed()


def test_blind_spots_are_counted_and_reported() -> None:
    with watch(simulate="fake") as report:
        x = torch.ones(4)
        x.to("cuda", non_blocking=True)
        dst = torch.empty(4, device="cuda")
        # An aten copy the watch does not classify; the fake backend may refuse it: still seen.
        with contextlib.suppress(Exception):
            torch.ops.aten._copy_from(x, dst, True)
    assert report.total == 1
    assert sum(report.unclassified.values()) == 1
    assert "could not be classified" in report.observed() and "aten._copy_from" in report.observed()
    assert "warning" in report.summary()


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_a_tensor_the_watch_cannot_inspect_is_counted_not_crashed() -> None:
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    with watch() as report:
        try:
            nested.to("cuda", non_blocking=True)
        except (RuntimeError, AssertionError):  # no CUDA here: the copy itself fails, not the watch
            pass
        torch.ones(2).to("meta")
    assert report.total == 0 and sum(report.unclassified.values()) == 1


# -- the simulated CUDA world -----------------------------------------------------------------------
def test_simulated_streams_events_and_queries_do_not_crash() -> None:
    with watch(simulate="fake") as report:
        assert torch.cuda.is_available() and torch.accelerator.is_available()
        assert torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        assert torch.accelerator.current_accelerator() == torch.device("cuda", 0)
        torch.cuda.synchronize()
        torch.cuda.set_device(0)
        side = torch.cuda.Stream()
        event = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(side):
            torch.ones(4, pin_memory=True).to("cuda", non_blocking=True)
            event.record()
        torch.cuda.current_stream().wait_stream(side)
        event.synchronize()
        torch.accelerator.synchronize()
        assert torch.cuda.get_device_name(0)
    assert report.total == 1 and not report.violations
    assert not torch.cuda.is_available()  # restored


def test_dataloader_pin_memory_true_pins_batches() -> None:
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(
        TensorDataset(torch.arange(32.0).reshape(16, 2)),
        batch_size=4,
        shuffle=True,
        pin_memory=True,
    )
    with watch(simulate="fake") as report:
        batches = []
        for (batch,) in loader:
            batches.append(batch)
            batch.to("cuda", non_blocking=True)
    assert report.total == 4 and not report.violations
    # The batches are real tensors (loading is CPU work, run outside FakeTensorMode): all 16 rows.
    assert sum(float(b.sum()) for b in batches) == float(sum(range(32)))


def test_dataloader_without_pin_memory_is_flagged() -> None:
    from torch.utils.data import DataLoader, TensorDataset

    loader = DataLoader(TensorDataset(torch.ones(8, 2)), batch_size=4)
    with watch(simulate="fake") as report:
        for (batch,) in loader:
            batch.to("cuda", non_blocking=True)
    assert report.total == 2 and len(report.violations) == 2


def test_buffers_pinned_before_the_watch_are_known_as_pinned() -> None:
    with simulated_cuda():
        assert torch.cuda.is_available()
        helper = torch.empty(8, pin_memory=torch.cuda.is_available())  # a project's own helper
        direct = torch.ones(8).pin_memory()
        values = float(helper.fill_(1).sum())  # real tensors: values are computed
    pageable = torch.ones(8)
    with watch(simulate="fake") as report:
        helper.to("cuda", non_blocking=True)
        direct.to("cuda", non_blocking=True)
        pageable.to("cuda", non_blocking=True)
    assert values == 8.0 and report.total == 3
    assert [t.pinned for t in report.transfers] == [True, True, False]
    [v] = report.violations
    assert v.code == PIN002 and v.copy_site is not None


def test_pin_memory_that_evaluated_false_says_so() -> None:
    with watch(simulate="fake", patch_cuda_available=False) as report:
        ids = torch.tensor([1, 2], pin_memory=torch.cuda.is_available())
        ids.to("cuda", non_blocking=True)
    [v] = report.violations
    assert v.code == PIN001 and "evaluated to False at run time" in v.message


def test_copy_into_a_size_one_dimension_is_not_staged() -> None:
    with watch(simulate="fake") as report:
        pinned = torch.ones(8, pin_memory=True)
        torch.empty(1, 8, device="cuda").copy_(pinned, non_blocking=True)
        torch.empty(4, 8, device="cuda").copy_(pinned, non_blocking=True)
    assert [t.kind for t in report.transfers] == ["pinned-non-blocking", "pinned-but-staged"]


def test_threads_all_simulated_copies_race_free() -> None:
    """FakeTensorMode shares one in-kernel flag across threads: unserialised, about one block in
    ten of this shape failed with "fake_mode.in_kernel_invocation must be False"."""

    def work(_: int) -> None:
        pageable = torch.ones(8)
        pageable.to("cuda", non_blocking=True)
        (pageable * 2).sum()

    for _ in range(40):
        with watch(simulate="fake", threads="all") as report, ThreadPoolExecutor(4) as pool:
            list(pool.map(work, range(8)))
        assert report.total == 8
