"""The analysis never hangs: its step count grows linearly with nesting depth, copies per
function and branches; a scope past its budget is reported, not analysed; the watchdog skips a
file rather than hanging the run. Steps are counted, not timed, so these are deterministic."""

from __future__ import annotations

import libcst as cst
import pytest

from pinlint.analysis import budget
from pinlint.analysis.events import DeviceConstruction, EventSink, SinkHit
from pinlint.analysis.interpreter import Interpreter
from pinlint.analysis.names import scan_names
from pinlint.core.results import AnalysisSettings
from pinlint.lint import analyze_text

SETTINGS = AnalysisSettings(rules=("PIN001", "PIN002", "PIN003"))


def nested_loops(depth: int) -> str:
    lines = ["import torch", "", "def f(device, xs):"]
    for d in range(depth):
        lines.append("    " * (d + 1) + f"for i{d} in xs:")
    lines.append("    " * (depth + 1) + "buf = torch.tensor([1, 2, 3])")
    lines.append("    return buf.to(device, non_blocking=True)")
    return "\n".join(lines) + "\n"


def nested_while_with_reads(depth: int) -> str:
    """Each level reads and rebinds what the level inside it produced (loop-carried values)."""
    lines = ["import torch", "", "def f(device, n):", "    acc = torch.zeros(4)"]
    for d in range(depth):
        lines.append("    " * (d + 1) + f"while n > {d}:")
        lines.append("    " * (d + 2) + f"v{d} = acc + 1")
    lines.append("    " * (depth + 1) + "acc = torch.tensor([n])")
    lines.append("    return acc.to(device, non_blocking=True)")
    return "\n".join(lines) + "\n"


def chained_copies(n: int) -> str:
    lines = ["import torch", "", "def f(device):"]
    for i in range(n):
        lines.append(f"    t{i} = torch.tensor([{i}])")
        lines.append(f"    g{i} = t{i}.to(device, non_blocking=True)")
    return "\n".join(lines) + "\n"


def branches(n: int) -> str:
    lines = ["import torch", "", "def f(device, k):", "    t = None"]
    for i in range(n):
        lines.append(f"    {'if' if i == 0 else 'elif'} k == {i}:")
        lines.append(f"        t = torch.tensor([{i}])")
    lines.append("    return t.to(device, non_blocking=True)")
    return "\n".join(lines) + "\n"


def sequential_ifs(n: int) -> str:
    lines = ["import torch", "", "def f(device, k):"]
    for i in range(n):
        lines.append(f"    x{i} = torch.zeros({i + 1})")
        lines.append(f"    if k == {i}:")
        lines.append(f"        x{i} = torch.ones({i + 1})")
        lines.append(f"    x{i}.to(device, non_blocking=True)")
    return "\n".join(lines) + "\n"


def steps(source: str) -> tuple[int, int]:
    """(analysis steps, events) of the single function in ``source``."""
    module = cst.parse_module(source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    interpreter = Interpreter(scan_names(source), function, EventSink(frozenset({SinkHit, DeviceConstruction})))
    interpreter.run()
    return interpreter.steps, len(interpreter.events.events)


@pytest.mark.parametrize(
    ("generator", "small", "large"),
    [
        (nested_loops, 6, 18),
        (nested_while_with_reads, 6, 18),
        (chained_copies, 100, 1000),
        (branches, 100, 1000),
        (sequential_ifs, 100, 1000),
    ],
)
def test_steps_grow_linearly(generator, small: int, large: int) -> None:  # type: ignore[no-untyped-def]
    small_steps, small_events = steps(generator(small))
    large_steps, large_events = steps(generator(large))
    assert small_events and large_events  # the copies were seen: the walk was not cut short
    ratio = large / small
    # Linear, with slack for the fixed cost of the function's header and return.
    assert large_steps <= ratio * small_steps * 1.25, (small_steps, large_steps)


def test_every_nested_loop_still_reaches_the_copy() -> None:
    for depth in (1, 5, 18):
        analysis = analyze_text(nested_loops(depth), SETTINGS)
        assert [f.code for f in analysis.findings] == ["PIN001"], depth


def test_loop_carried_value_reaches_a_copy_early_in_the_body() -> None:
    # The value assigned at the end of the body reaches the copy at its start one iteration later,
    # through two hops: it takes a fixpoint, not a fixed number of passes.
    source = (
        "import torch\n\n"
        "def f(device, xs):\n"
        "    a = b = c = None\n"
        "    for x in xs:\n"
        "        if c is not None:\n"
        "            c.to(device, non_blocking=True)\n"
        "        c = b\n"
        "        b = a\n"
        "        a = torch.zeros(4)\n"
    )
    analysis = analyze_text(source, SETTINGS)
    assert [(f.code, f.location.row) for f in analysis.findings] == [("PIN001", 10)]


def test_scope_over_budget_is_reported_without_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    source = chained_copies(50) + "\n\ndef small(device):\n    return torch.tensor([1]).to(device, non_blocking=True)\n"
    monkeypatch.setattr(budget, "SCOPE_STEP_BUDGET", 200)
    analysis = analyze_text(source, SETTINGS)
    assert [name for _, name, _ in analysis.over_budget] == ["f"]
    assert "200" in analysis.over_budget[0][2]
    # The small function is still analysed: the budget is per scope.
    assert [f.location.row for f in analysis.findings] == [source.splitlines().index("def small(device):") + 2]


def test_watchdog_skips_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import pinlint.lint as lint

    monkeypatch.setattr(lint, "FILE_TIME_LIMIT", -1.0)  # already past: the first check trips it
    analysis = analyze_text(chained_copies(3000), SETTINGS)
    assert analysis.findings == []
    assert analysis.skipped is not None and "longer than" in analysis.skipped


def test_cli_reports_skipped_file_and_over_budget_scope(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from pinlint.cli import main

    (tmp_path / "pyproject.toml").write_text("[tool.pinlint]\n")
    (tmp_path / "big.py").write_text(chained_copies(50))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(budget, "SCOPE_STEP_BUDGET", 200)
    quiet = CliRunner().invoke(main, ["check", "big.py", "--no-cache"])
    assert "not analysed" not in quiet.output  # only with -v
    verbose = CliRunner().invoke(main, ["check", "big.py", "--no-cache", "-v"])
    assert "`f` not analysed (more than 200 analysis steps)" in verbose.output
