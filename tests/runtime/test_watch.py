"""The real interception and attribution, on CPU, through simulated CUDA targets.

Every test asserts that transfers were observed, so a broken hook cannot pass vacuously.
"""

from __future__ import annotations

import json
import threading

import pytest

torch = pytest.importorskip("torch")

import runtime_hotpaths as hp  # noqa: E402

from pinlint.runtime import (  # noqa: E402
    ASYNC,
    BLOCKING,
    PAGEABLE,
    STAGED,
    PageableNonBlockingCopy,
    Report,
    watch,
)

DEV = "cuda"


def only(report: Report):
    assert len(report.transfers) >= 1
    [t] = report.transfers
    return t


def test_seed_pattern_is_pin001_at_the_factory_line() -> None:
    with watch(simulate="fake") as report:
        out = hp.seed_unpinned(DEV)
    assert len(report.transfers) >= 1
    assert str(out.device) == "cuda:0"  # downstream code kept running on a fake CUDA tensor
    t = only(report)
    assert (t.api, t.non_blocking, t.pinned, t.kind) == ("Tensor.to", True, False, PAGEABLE)
    assert (t.site.filename, t.site.row) == (hp.FILE, hp.line("seed-unpinned"))
    assert t.nbytes == 3 * 8 and t.dtype == "int64" and t.device == "cuda:0"
    [v] = report.violations
    assert v.code == "PIN001" and v.name == "unpinned-non-blocking-copy"
    assert (v.location.filename, v.location.row) == (hp.FILE, hp.line("seed-unpinned"))
    # the span is the factory call: `torch.tensor(...)` starts after "    ids = "
    row, col, end_row, end_col = v.location.span
    src = open(hp.FILE).read().splitlines()[row - 1]
    assert (row, col) == (hp.line("seed-unpinned"), src.index("torch.tensor") + 1)
    assert src[col - 1 : end_col - 1] == "torch.tensor([1, 2, 3], dtype=torch.int64)"


def test_seed_fix_is_clean_and_helper_sees_cuda() -> None:
    assert torch.cuda.is_available() is False
    with watch(simulate="fake") as report:
        assert torch.cuda.is_available() is True  # the project's helper takes the pinned branch
        hp.seed_fixed(DEV)
    assert torch.cuda.is_available() is False  # restored
    t = only(report)
    assert (t.pinned, t.non_blocking, t.kind) == (True, True, ASYNC)
    assert t.birth is not None and t.birth.site.row == hp.line("seed-fixed")
    assert report.violations == []
    report.assert_clean()


def test_birth_site_differs_from_copy_site() -> None:
    with watch(simulate="fake") as report:
        hp.bound_then_copied(DEV)
    t = only(report)
    [v] = report.violations
    assert (v.code, v.location.row, v.copy_site.row) == ("PIN001", hp.line("bound-birth"), hp.line("bound-copy"))
    assert t.birth.factory == "torch.zeros" and t.birth.pinnable


@pytest.mark.parametrize(
    ("fn", "birth", "copy", "api", "factory"),
    [
        (lambda: hp.cuda_method(DEV), "cuda-birth", "cuda-copy", "Tensor.cuda", "torch.ones"),
        (lambda: hp.to_kwargs(DEV), "kwargs-birth", "kwargs-copy", "Tensor.to", "torch.arange"),
        (lambda: hp.to_positional_nb(DEV), "positional-birth", "positional-copy", "Tensor.to", "torch.randn"),
        (hp.to_int_device, "int-birth", "int-copy", "Tensor.to", "torch.full"),
        (lambda: hp.copy_into(DEV), "copy-birth", "copy-copy", "Tensor.copy_", "torch.ones"),
    ],
)
def test_every_spelling_is_seen(fn, birth: str, copy: str, api: str, factory: str) -> None:
    with watch(simulate="fake") as report:
        fn()
    t = only(report)
    assert (t.api, t.site.row, t.non_blocking, t.kind, t.device) == (api, hp.line(copy), True, PAGEABLE, "cuda:0")
    assert t.birth.factory == factory
    [v] = report.violations
    assert (v.code, v.location.row) == ("PIN001", hp.line(birth))


def test_tensor_new_method_birth() -> None:
    like = torch.ones(1, dtype=torch.int32)
    with watch(simulate="fake") as report:
        hp.new_zeros_birth(DEV, like)
    t = only(report)
    assert t.birth.factory == "Tensor.new_zeros" and t.dtype == "int32"
    [v] = report.violations
    assert (v.code, v.location.row, v.copy_site.row) == (
        "PIN001",
        hp.line("new-zeros-birth"),
        hp.line("new-zeros-copy"),
    )


@pytest.mark.parametrize(
    ("fn", "birth", "factory"),
    [
        (lambda: hp.as_tensor_source(DEV), "as-tensor-birth", "torch.as_tensor"),
        (lambda: hp.cat_source(DEV), "cat-birth", "torch.cat"),
    ],
)
def test_unpinnable_factory_is_pin002_at_its_birth(fn, birth: str, factory: str) -> None:
    with watch(simulate="fake") as report:
        fn()
    assert len(report.transfers) >= 1
    [v] = report.violations
    assert (v.code, v.name, v.location.row) == ("PIN002", "unpinnable-non-blocking-source", hp.line(birth))
    assert v.transfer.birth.factory == factory and not v.transfer.birth.pinnable


def test_numpy_data_into_torch_tensor_is_pin002() -> None:
    np = pytest.importorskip("numpy")
    with watch(simulate="fake") as report:
        hp.numpy_data_source(DEV, np.arange(3))
    assert len(report.transfers) >= 1
    [v] = report.violations
    assert (v.code, v.location.row, v.copy_site.row) == ("PIN002", hp.line("numpy-birth"), hp.line("numpy-copy"))
    assert v.transfer.birth.note == "numpy data"


def test_unknown_origin_is_pin002_at_the_copy() -> None:
    with watch(simulate="fake") as report:
        hp.arithmetic_source(DEV)
    assert len(report.transfers) >= 1
    [v] = report.violations
    assert v.transfer.birth is None
    assert (v.code, v.location.row) == ("PIN002", hp.line("arith-copy"))


def test_tensor_born_outside_the_watch_has_no_birth() -> None:
    x = torch.ones(3)
    with watch(simulate="fake") as report:
        x.to(DEV, non_blocking=True)
    t = only(report)
    assert t.birth is None and t.kind == PAGEABLE
    assert report.violations[0].code == "PIN002"


def test_pytorch_validation_still_fires_under_simulation() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(RuntimeError, match="Can't pin tensor constructed from numpy"):
        with watch(simulate="fake") as report:
            hp.seed_fixed(DEV)  # a transfer first, so the watch demonstrably worked
            hp.numpy_naive_fix(DEV, np.arange(3))
    assert len(report.transfers) >= 1
    assert torch.cuda.is_available() is False


def test_pinned_sources_are_clean() -> None:
    with watch(simulate="fake") as report:
        hp.pinned_spellings(DEV)
    assert len(report.transfers) == 3
    assert [(t.site.row, t.pinned, t.kind) for t in report.transfers] == [
        (hp.line("pinned-view"), True, ASYNC),
        (hp.line("pin-method"), True, ASYNC),
        (hp.line("pinned-literal"), True, ASYNC),
    ]
    assert report.violations == []


def test_blocking_copies_are_recorded_not_flagged() -> None:
    with watch(simulate="fake") as report:
        hp.blocking_copies(DEV)
    assert [(t.api, t.site.row, t.kind) for t in report.transfers] == [
        ("Tensor.to", hp.line("blocking-to"), BLOCKING),
        ("torch.tensor", hp.line("tensor-device"), BLOCKING),
    ]
    assert report.violations == []


def test_pinned_but_staged_layouts() -> None:
    with watch(simulate="fake") as report:
        hp.pinned_strided(DEV)
    assert len(report.transfers) == 4
    kinds = {t.site.row: (t.pinned, t.contiguous, t.kind) for t in report.transfers}
    assert kinds == {
        hp.line("strided"): (True, False, STAGED),
        hp.line("transposed-same-dtype"): (True, False, ASYNC),  # dense: copied directly
        hp.line("transposed-half"): (True, False, STAGED),
        hp.line("contiguous-half"): (True, True, ASYNC),
    }
    assert sorted((v.code, v.kind, v.location.row) for v in report.violations) == [
        ("PIN005", STAGED, hp.line("strided")),
        ("PIN005", STAGED, hp.line("transposed-half")),
    ]


def test_broadcasting_copy_from_pinned_is_staged() -> None:
    with watch(simulate="fake") as report:
        hp.broadcast_copy(DEV)
    t = only(report)
    assert (t.api, t.kind, t.site.row, t.nbytes) == ("Tensor.copy_", STAGED, hp.line("broadcast-copy"), 3 * 4 * 4)


def test_check_contiguous_can_be_disabled() -> None:
    with watch(simulate="fake", check_contiguous=False) as report:
        hp.pinned_strided(DEV)
    assert len(report.transfers) == 4
    assert report.violations == []


def test_module_to_is_attributed_to_the_user_line() -> None:
    model = torch.nn.Linear(4, 3)  # built outside the block (see docs: simulation limits)
    with watch(simulate="fake") as report:
        hp.module_to(model, DEV)
    assert len(report.transfers) == 2  # weight and bias
    assert {(t.via, t.site.row, t.kind) for t in report.transfers} == {("nn.Module.to", hp.line("module-to"), PAGEABLE)}
    assert sorted(t.nbytes for t in report.transfers) == [3 * 4, 4 * 3 * 4]
    assert str(model.weight.device) == "cuda:0"


def test_non_h2d_copies_are_ignored() -> None:
    with watch(simulate="fake") as report:
        hp.to_meta_and_cpu()
        hp.seed_unpinned(DEV)  # the one H2D copy
    t = only(report)
    assert t.site.row == hp.line("seed-unpinned")


def test_strict_raises_at_the_first_violation_with_the_call_site() -> None:
    with pytest.raises(PageableNonBlockingCopy) as info:
        with watch(strict=True, simulate="fake") as report:
            hp.seed_fixed(DEV)  # clean: must not raise
            hp.bound_then_copied(DEV)
            raise AssertionError("strict mode did not stop the block")
    assert len(report.transfers) == 2
    message = str(info.value)
    assert message == (
        f"{hp.FILE}:{hp.line('bound-copy')}: Tensor.to(non_blocking=True) to cuda:0 from pageable host memory [PIN001]: "
        f"the source was built by `torch.zeros` at {hp.FILE}:{hp.line('bound-birth')} without pin_memory=; pin it there"
    )
    assert [v.code for v in info.value.violations] == ["PIN001"]


def test_assert_clean_lists_every_site() -> None:
    with watch(simulate="fake") as report:
        hp.seed_unpinned(DEV)
        hp.cuda_method(DEV)
    assert len(report.transfers) == 2
    with pytest.raises(PageableNonBlockingCopy) as info:
        report.assert_clean()
    text = str(info.value)
    assert f"{hp.FILE}:{hp.line('seed-unpinned')}: PIN001" in text
    assert f"{hp.FILE}:{hp.line('cuda-birth')}: PIN001" in text


def test_decorator_gives_a_fresh_report_per_call() -> None:
    w = watch(simulate="fake")

    @w
    def step(n: int) -> None:
        hp.loop(DEV, n)

    step(2)
    first = w.report
    step(3)
    assert first is not None and w.report is not None and first is not w.report
    assert (len(first.transfers), len(w.report.transfers)) == (2, 3)
    assert torch.cuda.is_available() is False


def test_strict_decorator() -> None:
    @watch(strict=True, simulate="fake")
    def step() -> None:
        hp.seed_unpinned(DEV)

    with pytest.raises(PageableNonBlockingCopy, match=f":{hp.line('seed-unpinned')}: "):
        step()


def test_repeated_violations_are_grouped() -> None:
    with watch(simulate="fake") as report:
        hp.loop(DEV, 5)
    assert len(report.transfers) == 5
    [(v, count)] = report.grouped()
    assert (v.location.row, count) == (hp.line("loop"), 5)
    assert len(report.diagnostics()) == 1
    assert "[x5]" in report.summary()


def test_max_records_caps_memory_but_counts() -> None:
    with watch(simulate="fake", max_records=3) as report:
        hp.loop(DEV, 5)
    assert (len(report.transfers), report.total, report.dropped) == (3, 5, 2)


def test_to_json_shape() -> None:
    with watch(simulate="fake") as report:
        hp.bound_then_copied(DEV)
    assert len(report.transfers) >= 1
    doc = json.loads(report.to_json())
    assert doc["simulated"] is True and doc["total_transfers"] == 1
    [t] = doc["transfers"]
    assert t["site"]["row"] == hp.line("bound-copy") and t["birth"]["site"]["row"] == hp.line("bound-birth")
    [v] = doc["violations"]
    assert {"code", "name", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"} <= set(v)
    assert (v["code"], v["location"]["row"], v["copy_site"]["row"], v["count"]) == (
        "PIN001",
        hp.line("bound-birth"),
        hp.line("bound-copy"),
        1,
    )
    assert v["fix"] is None and v["filename"] == hp.FILE


def test_other_threads_are_not_seen() -> None:
    box: dict[str, object] = {}
    with watch(simulate="fake") as report:
        hp.in_thread(DEV, box)
        hp.seed_unpinned(DEV)
    t = only(report)  # the worker thread's copy is not in the report
    assert t.site.row == hp.line("seed-unpinned")
    # ... and it was not simulated either: it failed for real on this CPU-only build
    if not torch.cuda.is_available():
        assert "error" in box


def test_a_shared_report_collects_several_threads() -> None:
    shared = Report()

    def worker() -> None:
        with watch(simulate="fake", report=shared):
            hp.seed_unpinned(DEV)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    with watch(simulate="fake", report=shared):
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        hp.cuda_method(DEV)
    assert len(shared.transfers) == 3
    assert sorted(v.location.row for v in shared.violations) == sorted(
        [hp.line("seed-unpinned"), hp.line("seed-unpinned"), hp.line("cuda-birth")]
    )
    assert torch.cuda.is_available() is False


def test_watch_object_cannot_be_entered_twice() -> None:
    w = watch(simulate="fake")
    with w as report:
        with pytest.raises(RuntimeError, match="already active"):
            w.__enter__()
        hp.seed_unpinned(DEV)
    assert len(report.transfers) == 1


def test_simulate_auto_means_fake_without_cuda() -> None:
    with watch(simulate="auto") as report:
        hp.seed_unpinned(DEV)
    assert len(report.transfers) >= 1
    assert report.simulated is (not torch.cuda.is_available())


def test_bad_simulate_value() -> None:
    with pytest.raises(ValueError, match="simulate"):
        watch(simulate="gpu")  # type: ignore[arg-type]
    with watch(simulate="fake") as report:  # and a good one still works
        hp.seed_unpinned(DEV)
    assert len(report.transfers) == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour of real mode")
def test_real_mode_on_cpu_records_before_the_copy_fails() -> None:
    with pytest.raises((AssertionError, RuntimeError)):
        with watch(simulate=None) as report:
            hp.seed_unpinned(DEV)
    t = only(report)
    assert (t.kind, t.simulated, t.site.row) == (PAGEABLE, False, hp.line("seed-unpinned"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour of real mode")
def test_real_mode_strict_stops_before_the_failing_copy() -> None:
    with pytest.raises(PageableNonBlockingCopy):
        with watch(strict=True) as report:
            hp.seed_unpinned(DEV)
    assert len(report.transfers) == 1


def test_grad_is_disabled_under_simulation_and_restored() -> None:
    assert torch.is_grad_enabled()
    with watch(simulate="fake") as report:
        assert not torch.is_grad_enabled()
        w = torch.ones(3, requires_grad=True)
        w.to(DEV, non_blocking=True)  # would abort the process if autograd recorded a CUDA node
    assert torch.is_grad_enabled()
    assert len(report.transfers) == 1
