"""The Kineto trace classifier, on synthetic traces (CPU-only builds cannot record GPU memcpys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinlint.runtime import kineto

DATA = Path(__file__).parent / "data"


def test_current_kineto_names_and_links() -> None:
    memcpys = kineto.classify(DATA / "kineto_h2d_trace.json")
    assert len(memcpys) == 3  # H2D only: the DtoH copy and the instant event are not counted
    first, second, third = memcpys
    assert (first.src, first.pinned, first.pageable, first.nbytes, first.annotation) == (
        "Pageable",
        False,
        True,
        67108864,
        "pageable_nb",
    )
    assert (first.runtime_call, first.host_call_dur_us, first.gpu_dur_us) == ("cudaMemcpyAsync", 850, 700)
    assert (second.src, second.pinned, second.annotation, second.host_call_dur_us) == ("Pinned", True, "pinned_nb", 6)
    # the innermost annotation wins ("pinned_nb" lies inside "outer"); a call on another thread has none
    assert third.annotation is None and third.runtime_call == "cudaMemcpyAsync"
    assert kineto.by_annotation(memcpys) == {"pageable_nb": ["Pageable"], "pinned_nb": ["Pinned"], "<none>": ["Pinned"]}


def test_legacy_pagable_spelling_and_categories() -> None:
    [m] = kineto.classify(DATA / "kineto_legacy_pagable.json")  # bare-array chrome trace form
    assert m.name == "Memcpy HtoD (Pagable -> Device)"
    assert (m.src, m.pageable, m.annotation, m.runtime_call, m.nbytes) == (
        "Pageable",
        True,
        "legacy_copy",
        "cudaMemcpyAsync",
        1024,
    )


def test_all_kinds_when_asked() -> None:
    memcpys = kineto.classify(DATA / "kineto_h2d_trace.json", kind=None)
    assert [(m.kind, m.src, m.dst) for m in memcpys][-1] == ("DtoH", "Device", "Pageable")
    assert len(memcpys) == 4


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("Memcpy HtoD (Pageable -> Device)", ("HtoD", "Pageable", "Device")),
        ("Memcpy HtoD (Pinned -> Device)", ("HtoD", "Pinned", "Device")),
        ("Memcpy HtoD (Pagable -> Device)", ("HtoD", "Pageable", "Device")),
        ("Memcpy DtoH (Device -> Pinned)", ("DtoH", "Device", "Pinned")),
        ("Memcpy HtoD (Managed -> Device)", ("HtoD", "Managed", "Device")),
        ("Memset (Device)", None),
        ("cudaMemcpyAsync", None),
    ],
)
def test_parse_memcpy_name(name: str, parsed: tuple[str, str, str] | None) -> None:
    assert kineto.parse_memcpy_name(name) == parsed


def test_dict_input_and_to_dict() -> None:
    trace = json.loads((DATA / "kineto_h2d_trace.json").read_text())
    memcpys = kineto.classify(trace)
    assert len(memcpys) == 3
    d = memcpys[0].to_dict()
    assert d["pinned"] is False and d["annotation"] == "pageable_nb" and d["bytes"] == 67108864


def test_real_cpu_profiler_trace_has_no_memcpy(tmp_path: Path) -> None:
    """The classifier reads a real profiler export: CPU events are there, no GPU memcpy is."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("dtype_copy"):
            torch.ones(1024).to(torch.float64, non_blocking=True)
    path = tmp_path / "cpu.json"
    prof.export_chrome_trace(str(path))
    events = kineto.load_trace(path)["traceEvents"]
    assert any(e.get("cat") == "user_annotation" and e.get("name") == "dtype_copy" for e in events)
    assert kineto.classify(path) == []
