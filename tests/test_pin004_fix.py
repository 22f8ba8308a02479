"""PIN004's unsafe fix (an inserted stream synchronisation) beyond the fixtures: line endings,
indentation, names the line relies on, and a plan without a helper hole going through the fix pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinlint.app import CheckOptions, DiagnosticBuilder
from pinlint.config import Config
from pinlint.core.diagnostics import Applicability
from pinlint.lint import analyze_text
from tests.helpers import lint

SELECT = {"PIN004"}

BASIC = """\
import torch

def f(gpu):
    cpu = gpu.to("cpu", non_blocking=True)
    return cpu.tolist()
"""


def _pin004(text: str):  # type: ignore[no-untyped-def]
    return [d for d in lint(text, select=SELECT).diagnostics if d.code == "PIN004"]


def test_fix_is_unsafe_with_its_reason_and_needs_no_helper() -> None:
    (finding,) = _pin004(BASIC)
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.UNSAFE
    assert "waits here for all work queued on the current stream" in finding.fix.unsafe_reason
    assert "(unsafe: " in finding.fix.explained_message
    # No pin-memory helper is configured (the default `lint` has none): none is needed.
    assert lint(BASIC, select=SELECT, fix=True).stdin_output == BASIC  # unsafe: not applied by --fix
    fixed = lint(BASIC, select=SELECT, fix=True, unsafe=True).stdin_output
    assert fixed == BASIC.replace(
        "    return cpu.tolist()", "    torch.cuda.current_stream().synchronize()\n    return cpu.tolist()"
    )


def test_plan_without_hole_never_learns_the_project() -> None:
    def no_project():  # type: ignore[no-untyped-def]
        raise AssertionError("a fix without a helper hole must not walk the project")

    config = Config(root=Path("/tmp"))
    builder = DiagnosticBuilder(config, CheckOptions(selected=SELECT), no_project)
    analysis = analyze_text(BASIC, _settings())
    (diagnostic,) = builder.diagnostics(Path("/tmp/x.py"), analysis, BASIC)
    assert diagnostic.fix is not None and diagnostic.fix.edits[0].content.strip() == (
        "torch.cuda.current_stream().synchronize()"
    )


def _settings():  # type: ignore[no-untyped-def]
    from pinlint.core.results import AnalysisSettings

    return AnalysisSettings(rules=tuple(sorted(SELECT)))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_keeps_line_endings_and_tab_indentation(newline: str) -> None:
    text = BASIC.replace("    ", "\t").replace("\n", newline)
    fixed = lint(text, select=SELECT, fix=True, unsafe=True).stdin_output
    assert fixed is not None
    assert (
        f'\tcpu = gpu.to("cpu", non_blocking=True){newline}\ttorch.cuda.current_stream().synchronize(){newline}\treturn'
        in fixed
    )


def test_torch_rebound_at_module_level_gets_no_fix() -> None:
    text = BASIC + "\ntorch = None\n"
    (finding,) = _pin004(text)
    assert finding.fix is None
    assert finding.fix_note is not None and "rebound at module level" in finding.fix_note


def test_torch_imported_below_the_read_gets_no_fix() -> None:
    text = """\
gpu = make()
cpu = gpu.to("cpu", non_blocking=True)
print(cpu)
import torch
"""
    found = _pin004(text)
    assert all(d.fix is None for d in found)


def test_two_copies_read_in_one_statement_share_one_inserted_line() -> None:
    text = """\
import torch

def f(a, b):
    x = a.to("cpu", non_blocking=True)
    y = b.to("cpu", non_blocking=True)
    return x.tolist() + y.tolist()
"""
    assert len(_pin004(text)) == 2
    fixed = lint(text, select=SELECT, fix=True, unsafe=True).stdin_output
    assert fixed is not None and fixed.count("synchronize()") == 1
    assert not _pin004(fixed)
