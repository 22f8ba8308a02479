"""Diagnostics built on the worker pool are the ones the parent builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinlint.app import parallel_diagnostics
from pinlint.cli import main

FILE = """import torch
from pkg.platform import is_pin_memory_available


def step{i}(n, device):
    ids = torch.tensor([n, {i}], dtype=torch.int64).to(device, non_blocking=True)
    return torch.tensor([{i}], device=device), ids
"""


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, ["check", ".", "--no-cache", "--select", "PIN", *args], catch_exceptions=False)
    return result.output


def test_pool_built_diagnostics_equal_the_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "platform.py").write_text("def is_pin_memory_available(device):\n    return True\n")
    for i in range(60):  # enough files for the runner to use its workers
        (pkg / f"m{i:02}.py").write_text(FILE.format(i=i))
    monkeypatch.chdir(tmp_path)
    calls: list[int] = []
    real = parallel_diagnostics.build_in_pool

    def counting(pool, results, *rest):  # type: ignore[no-untyped-def]
        calls.append(len(results))
        return real(pool, results, *rest)

    monkeypatch.setattr(parallel_diagnostics, "build_in_pool", counting)
    parallel = _run("-j", "2", "--output-format", "json")
    assert calls == [60]  # every file's fixes were completed on the pool
    serial = _run("-j", "1", "--output-format", "json")
    assert calls == [60]  # one process: built in the parent
    assert json.loads(parallel) == json.loads(serial)
    assert {d["code"] for d in json.loads(serial)} == {"PIN001", "PIN003"}
    assert all(d["fix"] for d in json.loads(serial))
    assert _run("-j", "2") == _run("-j", "1")  # the full report too
