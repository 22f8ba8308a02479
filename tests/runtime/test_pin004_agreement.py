"""PIN004 agreement: on simulated CUDA the watch reports a host read of a non_blocking
device-to-host copy's destination before any synchronisation at the file, line and column where
``pinlint check`` reports it, and each synchronised twin is clean in both."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import DataDependentOutputException  # noqa: E402

from pinlint.runtime import Report, watch  # noqa: E402
from pinlint.runtime.model import PIN004, UNSYNCED_READ  # noqa: E402
from tests.helpers import lint  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "data" / "pin004_program.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pin004_program", PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pin004_program"] = module
    spec.loader.exec_module(module)
    return module


def _call(fn, gpu: torch.Tensor) -> None:  # type: ignore[no-untyped-def]
    params = list(inspect.signature(fn).parameters)
    args = {"gpu": gpu, "gpus": [gpu, gpu + 1, gpu + 2], "other": gpu + 1}
    # A value read of a fake tensor raises once the watch has seen it (see docs/runtime.md).
    with contextlib.suppress(DataDependentOutputException):
        fn(*(args[p] for p in params))


def _run(names: list[str]) -> Report:
    module = _load()
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        for name in names:
            _call(getattr(module, name), gpu)
    return report


def _functions(prefix: str) -> list[str]:
    return [name for name in vars(_load()) if name.startswith(prefix)]


def _flagged_rows() -> set[int]:
    lines = PROGRAM.read_text().splitlines()
    return {i for i, line in enumerate(lines, 1) if line.rstrip().endswith("# flagged")}


def test_static_and_runtime_agree_on_pin004() -> None:
    static = {
        (d.filename, d.location.row, d.location.column)
        for d in lint(PROGRAM.read_text(), select={PIN004}, filename=str(PROGRAM)).diagnostics
        if d.code == PIN004
    }
    report = _run(_functions("flagged_") + _functions("ok_"))
    assert report.d2h_total >= len(_functions("flagged_"))  # the hook saw the copies
    runtime = {(d.filename, d.location.row, d.location.column) for d in report.diagnostics() if d.code == PIN004}
    assert {row for _f, row, _c in static} == _flagged_rows()  # the program says what is flagged
    assert runtime == static
    assert all(v.kind == UNSYNCED_READ for v in report.violations if v.code == PIN004)


#: Twins whose copy never is in flight (blocking, or into pageable memory).
NOTHING_PENDING = {"ok_copy_into_pageable", "ok_blocking_to"}


def test_every_synchronised_twin_is_clean_at_run_time() -> None:
    for name in _functions("ok_"):
        report = _run([name])
        # Never pass vacuously: the copy was seen (and kept pending until the synchronisation).
        assert (report.d2h_total == 0) == (name in NOTHING_PENDING), name
        assert [v for v in report.violations if v.code == PIN004] == [], name


def test_report_names_the_copy_and_the_read() -> None:
    report = _run(["flagged_tolist"])
    (violation,) = [v for v in report.violations if v.code == PIN004]
    assert violation.copy_site is not None and violation.copy_site.row == violation.location.row - 1
    assert "before any synchronisation call" in violation.message
    assert violation.to_diagnostic().extra["runtime"]["direction"] == "device-to-host"
