"""PIN005 agreement: on simulated CUDA the watch reports a non-contiguous pinned source as PIN005 on
the line where ``pinlint check`` reports it, and a contiguous view of the same buffer is clean in
both."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pinlint.runtime import STAGED, watch
from tests.helpers import lint

SOURCE = """\
import torch


def upload(max_reqs, max_len, n, device):
    buf = torch.zeros((max_reqs, max_len), dtype=torch.int32, pin_memory=True)
    rows = buf[:n].to(device, non_blocking=True)
    cols = buf[:, :n].to(device, non_blocking=True)
    every_other = buf[::2].to(device, non_blocking=True)
    return rows, cols, every_other
"""


def _load(tmp_path: Path):
    path = tmp_path / "pin005_hot.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("pin005_hot", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pin005_hot"] = module
    spec.loader.exec_module(module)
    return module


def test_runtime_and_static_agree_on_pin005(tmp_path: Path) -> None:
    module = _load(tmp_path)
    with watch(simulate="fake") as report:
        module.upload(4, 16, 3, "cuda")
    assert len(report.transfers) == 3  # the hook saw every copy
    runtime = sorted((v.code, v.location.row) for v in report.violations)
    assert all(v.kind == STAGED for v in report.violations)
    static = sorted((d.code, d.location.row) for d in lint(SOURCE).diagnostics if d.code == "PIN005")
    assert runtime == static == [("PIN005", 7), ("PIN005", 8)]
