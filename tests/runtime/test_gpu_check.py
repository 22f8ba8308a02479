"""The GPU check: its verdict logic on CPU (made-up numbers), its skip path, and GPU-only tests that
skip with a reason (never pass) without CUDA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pinlint.runtime import gpu_check
from pinlint.runtime.watch import watch

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device (torch.cuda.is_available() is False)")


MiB = gpu_check.MiB


def _sample(host: float | list[float], kernel: float = 50.0, reps: int = 9) -> dict[str, list[float]]:
    hosts = host if isinstance(host, list) else [host] * reps
    return {"host_ms": hosts, "kernel_ms": [kernel] * len(hosts)}


def _row(
    pageable: float | list[float],
    pinned: float | list[float],
    control: float = 49.9,
    kernel: float = 50.0,
) -> dict[str, dict[str, list[float]]]:
    return {
        "pageable .to": _sample(pageable, kernel),
        "pinned .to": _sample(pinned, kernel),
        "pageable copy_": _sample(pageable, kernel),
        "pinned copy_": _sample(pinned, kernel),
        gpu_check.CONTROL: _sample(control, kernel),
    }


def test_host_blocking_verdict_both_halves_hold() -> None:
    v = gpu_check.host_blocking_verdict({64 << 10: _row(0.05, 0.01), 64 * MiB: _row(49.0, 0.02)})
    assert v["kernel_long_enough"] and v["control_blocks"]
    assert v["pinned_returns_early"] and v["pageable_blocks"] and not v["failures"]
    assert v["pageable_blocked"] == ["64MiB pageable .to", "64MiB pageable copy_"]
    assert v["pageable_not_blocked"] == [
        "64KiB pageable .to",
        "64KiB pageable copy_",
    ]  # reported only


def test_pageable_that_does_not_block_fails_with_numbers() -> None:
    v = gpu_check.host_blocking_verdict({16 * MiB: _row(0.3, 0.01)})
    assert v["pinned_returns_early"] and not v["pageable_blocks"]
    assert any("16MiB pageable .to did not block" in f and "0.300" in f and "9 reps" in f for f in v["failures"])


def test_noise_cannot_fake_a_block() -> None:
    # Six stalled repetitions out of nine (a busy machine) are not "blocked": every one must be.
    v = gpu_check.host_blocking_verdict({16 * MiB: _row([40.0] * 6 + [0.2] * 3, 0.01)})
    assert not v["pageable_blocks"]


def test_one_stall_cannot_fail_pinned() -> None:
    v = gpu_check.host_blocking_verdict({16 * MiB: _row(49.0, [0.01] * 8 + [30.0])})
    assert v["pinned_returns_early"]


def test_slow_pinned_fails() -> None:
    v = gpu_check.host_blocking_verdict({64 * MiB: _row(49.0, 30.0)})
    assert not v["pinned_returns_early"]
    assert any("64MiB pinned .to did not return at once" in f for f in v["failures"])


def test_a_short_kernel_proves_nothing() -> None:
    # Idle clocks: the "50 ms" kernel lasted 9 ms. Both halves are unproven, whatever the copies did.
    v = gpu_check.host_blocking_verdict({64 * MiB: _row(8.9, 0.01, control=8.9, kernel=9.0)})
    assert not v["kernel_long_enough"] and not v["pinned_returns_early"] and not v["pageable_blocks"]
    assert any("busy kernel too short" in f for f in v["failures"])


def test_an_ineffective_control_proves_nothing() -> None:
    v = gpu_check.host_blocking_verdict({64 * MiB: _row(49.0, 0.01, control=1.0)})
    assert not v["control_blocks"] and not v["pinned_returns_early"] and not v["pageable_blocks"]


def test_without_a_large_size_the_pageable_half_is_unproven() -> None:
    v = gpu_check.host_blocking_verdict({64 << 10: _row(49.0, 0.01)})
    assert not v["pageable_blocks"] and any("unproven" in f for f in v["failures"])


def test_kinds_verdict() -> None:
    expected = {"a": "Pinned", "b": "Pageable"}
    assert gpu_check.kinds_verdict({"a": ["Pinned"], "b": ["Pageable"]}, expected)["ok"]
    bad = gpu_check.kinds_verdict({"a": ["Pinned", "Pageable"]}, expected)
    assert not bad["ok"] and [m["label"] for m in bad["mismatches"]] == ["a", "b"]


def test_run_verdict_never_passes_vacuously() -> None:
    assert not gpu_check.run_verdict([])["ok"]
    assert gpu_check.run_verdict([{"pinned": True}])["ok"]
    assert not gpu_check.run_verdict([{"pinned": True}, {"pinned": False}])["ok"]
    # A blocking pageable copy is never a finding: allowed when the watch saw one.
    assert gpu_check.run_verdict([{"pinned": True}, {"pinned": False}], blocking_transfers=1)["ok"]


def test_resolve_run_spec() -> None:
    assert gpu_check.resolve_run_spec("json:dumps") is json.dumps
    assert gpu_check.resolve_run_spec("json:JSONEncoder.encode") is json.JSONEncoder.encode
    for bad in ("json", "json:", ":dumps"):
        with pytest.raises(ValueError):
            gpu_check.resolve_run_spec(bad)
    with pytest.raises(AttributeError):
        gpu_check.resolve_run_spec("json:no_such_function")


@pytest.mark.skipif(HAS_CUDA, reason="checks the no-CUDA path")
def test_main_skips_with_status_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.json"
    assert gpu_check.main(["--json", str(out), "--run", "json:dumps"]) == gpu_check.EXIT_SKIPPED == 3
    assert "SKIPPED (not passed): no CUDA device" in capsys.readouterr().out
    assert json.loads(out.read_text())["skipped"] == "no CUDA device"


@pytest.mark.skipif(HAS_CUDA, reason="checks the no-CUDA path")
def test_main_writes_json_into_a_missing_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "dir" / "p.json"
    assert gpu_check.main(["--json", str(out)]) == gpu_check.EXIT_SKIPPED
    assert json.loads(out.read_text())["exit_status"] == 3


def test_main_usage_errors() -> None:
    assert gpu_check.main(["--run", "bad spec"]) == gpu_check.EXIT_USAGE
    assert gpu_check.main(["--no-such-option"]) == gpu_check.EXIT_USAGE


# -- GPU-only ------------------------------------------------------------------------------------
@pytest.mark.gpu
@needs_cuda
def test_gpu_probe_passes(tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    status = gpu_check.main(["--quick", "--json", str(out)])
    doc = json.loads(out.read_text())
    assert status == 0, json.dumps({k: doc.get(k) for k in ("checks", "error")}, indent=1)
    assert len(doc["B_C_memcpy_kinds"]["memcpys"]) >= 1
    verdict = doc["A_host_blocking"]["verdict"]
    assert verdict["pinned_returns_early"] and verdict["pageable_blocks"]


@pytest.mark.gpu
@needs_cuda
def test_real_mode_sees_real_pinning() -> None:
    with watch(simulate=None) as report:
        torch.ones(4).to("cuda", non_blocking=True)
        torch.ones(4, pin_memory=True).to("cuda", non_blocking=True)
        torch.ones(4, 6, pin_memory=True)[:, ::2].to("cuda", non_blocking=True)
    assert len(report.transfers) == 3
    assert [t.kind for t in report.transfers] == [
        "pageable-non-blocking",
        "pinned-non-blocking",
        "pinned-but-staged",
    ]
    torch.cuda.synchronize()


@pytest.mark.gpu
@needs_cuda
def test_run_spec_on_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gpu_hot.py").write_text(
        "import torch\n"
        "def good():\n    torch.ones(1024, pin_memory=True).to('cuda', non_blocking=True)\n"
        "def bad():\n    torch.ones(1024).to('cuda', non_blocking=True)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert gpu_check.main(["--quick", "--run", "gpu_hot:good", "--json", str(tmp_path / "g.json")]) == 0
    assert gpu_check.main(["--quick", "--run", "gpu_hot:bad", "--json", str(tmp_path / "b.json")]) == 1


class _StubTensor:
    def __init__(self, gpu: _StubGPU, pinned: bool) -> None:
        self.gpu, self.pinned = gpu, pinned

    def to(self, _dev: object, dtype: object = None, non_blocking: bool = False) -> _StubTensor:
        if not (self.pinned and non_blocking):
            self.gpu.drain()  # pageable or blocking: the host waits for the stream
        return self

    def copy_(self, src: _StubTensor, non_blocking: bool = False) -> _StubTensor:
        src.to(None, non_blocking=non_blocking)
        return self

    def __getitem__(self, _index: object) -> _StubTensor:
        return self

    def t(self) -> _StubTensor:
        return self


class _StubGPU:
    """A stream with one busy kernel at a time, in wall-clock time: enough physics to run the
    probe's measurement loop (part A) end to end without a GPU."""

    uint8 = half = "dtype"

    def __init__(self, pageable_blocks: bool = True) -> None:
        import types

        self.busy_until = 0.0
        self.pageable_blocks = pageable_blocks
        gpu = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.t = 0.0

            def record(self) -> None:
                self.t = max(time.perf_counter(), gpu.busy_until)

            def elapsed_time(self, end: Event) -> float:
                return (end.t - self.t) * 1e3

            def synchronize(self) -> None:
                gpu.drain()

        def sleep(cycles: int) -> None:
            gpu.busy_until = max(time.perf_counter(), gpu.busy_until) + cycles / 1e9  # 1 GHz
            gpu.last_start = gpu.busy_until - cycles / 1e9

        self.cuda = types.SimpleNamespace(Event=Event, _sleep=sleep, synchronize=self.drain)

    def drain(self) -> None:
        while time.perf_counter() < self.busy_until:
            time.sleep(0.0005)

    def ones(self, *_a: object, pin_memory: bool = False, **_k: object) -> _StubTensor:
        return _StubTensor(self, pinned=pin_memory or not self.pageable_blocks)

    def empty(self, *_a: object, **_k: object) -> _StubTensor:
        return _StubTensor(self, pinned=True)


import time


@pytest.mark.parametrize("pageable_blocks", [True, False])
def test_part_a_measures_both_halves_on_a_stub_stream(monkeypatch: pytest.MonkeyPatch, pageable_blocks: bool) -> None:
    monkeypatch.setattr(gpu_check, "SLEEP_MS", 25.0)
    monkeypatch.setattr(gpu_check, "MIN_KERNEL_MS", 10.0)
    stub = _StubGPU(pageable_blocks)
    a = gpu_check.part_a(stub, "cuda", 1e6, [16 * MiB], reps=3)
    v = a["verdict"]
    assert v["kernel_long_enough"] and v["control_blocks"], v["failures"]
    assert v["pinned_returns_early"]
    assert v["pageable_blocks"] is pageable_blocks
    sample = a["samples"][str(16 * MiB)]["pinned .to"]
    assert len(sample["host_ms"]) == 3 and min(sample["kernel_ms"]) >= 20.0


@pytest.mark.gpu
@needs_cuda
def test_real_mode_entry_points_and_threads() -> None:
    import threading

    pinned = torch.ones(1024, pin_memory=True)
    pageable = torch.ones(1024)
    dst = torch.empty(1024, device="cuda")
    with watch(simulate=None, threads="all") as report:
        torch._foreach_copy_([dst], [pageable], non_blocking=True)
        torch.ops.aten.copy_.default(dst, pinned, True)
        torch.ops.aten._to_copy.default(pageable, device=torch.device("cuda"), non_blocking=True)
        pinned.type(torch.cuda.FloatTensor, non_blocking=True)
        t = threading.Thread(target=lambda: pageable.to("cuda", non_blocking=True))
        t.start()
        t.join()
    torch.cuda.synchronize()
    assert [t.api for t in report.transfers] == [
        "torch._foreach_copy_",
        "aten.copy_",
        "aten._to_copy",
        "Tensor.type",
        "Tensor.to",
    ]
    assert [t.pinned for t in report.transfers] == [False, True, False, True, False]
