"""The GPU check: its verdict logic on CPU (made-up numbers), its skip path, and GPU-only tests that
skip with a reason (never pass) without CUDA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pinlint.runtime import gpu_check  # noqa: E402
from pinlint.runtime.watch import watch  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device (torch.cuda.is_available() is False)")


def _row(pageable: float, pinned: float, control: float = 50.0) -> dict[str, float]:
    return {
        "pageable .to": pageable, "pinned .to": pinned, "pageable copy_": pageable, "pinned copy_": pinned,
        "pageable .to blocking (control)": control,
    }


def test_host_blocking_verdict_physics_holds() -> None:
    v = gpu_check.host_blocking_verdict({"64KiB": _row(0.05, 0.01), "64MiB": _row(49.0, 0.02)}, 50.0)
    assert v["sleep_effective"] and v["pinned_returns_early"] and v["pageable_blocks_somewhere"]
    assert v["pageable_blocked"] == ["64MiB pageable .to", "64MiB pageable copy_"]


def test_host_blocking_verdict_slow_pinned_fails() -> None:
    v = gpu_check.host_blocking_verdict({"64MiB": _row(49.0, 30.0)}, 50.0)
    assert not v["pinned_returns_early"]
    assert v["slow_pinned"] == ["64MiB pinned .to: 30.000 ms", "64MiB pinned copy_: 30.000 ms"]


def test_host_blocking_verdict_needs_an_effective_sleep() -> None:
    v = gpu_check.host_blocking_verdict({"64MiB": _row(0.1, 0.01, control=1.0)}, 50.0)
    assert not v["sleep_effective"] and not v["pinned_returns_early"]


def test_kinds_verdict() -> None:
    expected = {"a": "Pinned", "b": "Pageable"}
    assert gpu_check.kinds_verdict({"a": ["Pinned"], "b": ["Pageable"]}, expected)["ok"]
    bad = gpu_check.kinds_verdict({"a": ["Pinned", "Pageable"]}, expected)
    assert not bad["ok"] and [m["label"] for m in bad["mismatches"]] == ["a", "b"]


def test_run_verdict_never_passes_vacuously() -> None:
    assert not gpu_check.run_verdict([])["ok"]
    assert gpu_check.run_verdict([{"pinned": True}])["ok"]
    assert not gpu_check.run_verdict([{"pinned": True}, {"pinned": False}])["ok"]


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
    assert status == 0, json.dumps(doc.get("checks"), indent=1)
    assert len(doc["B_C_memcpy_kinds"]["memcpys"]) >= 1


@pytest.mark.gpu
@needs_cuda
def test_real_mode_sees_real_pinning() -> None:
    with watch(simulate=None) as report:
        torch.ones(4).to("cuda", non_blocking=True)
        torch.ones(4, pin_memory=True).to("cuda", non_blocking=True)
        torch.ones(4, 6, pin_memory=True)[:, ::2].to("cuda", non_blocking=True)
    assert len(report.transfers) == 3
    assert [t.kind for t in report.transfers] == ["pageable-non-blocking", "pinned-non-blocking", "pinned-but-staged"]
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
