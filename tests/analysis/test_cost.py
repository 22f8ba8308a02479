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


def call_chain(n: int) -> str:
    """Each function returns what the next one returns; the last builds the tensor."""
    lines = ["import torch", ""]
    for i in range(n):
        body = f"return f{i + 1}(k)" if i < n - 1 else "return torch.tensor([k])"
        lines += [f"def f{i}(k):", f"    {body}", ""]
    lines += ["def top(device, k):", "    return f0(k).to(device, non_blocking=True)"]
    return "\n".join(lines) + "\n"


def recursion_ring(n: int) -> str:
    """``n`` functions calling each other in a ring, one of them building the tensor."""
    lines = ["import torch", ""]
    for i in range(n):
        lines += [
            f"def r{i}(k):",
            "    if k == 0:",
            "        return torch.tensor([k])",
            f"    return r{(i + 1) % n}(k - 1)",
            "",
        ]
    lines += ["def top(device, k):", "    return r0(k).to(device, non_blocking=True)"]
    return "\n".join(lines) + "\n"


def many_callers(n: int) -> str:
    """``n`` functions handing a host tensor to one function that copies its parameter."""
    lines = ["import torch", "", "def put(t, device):", "    return t.to(device, non_blocking=True)", ""]
    for i in range(n):
        lines += [f"def g{i}(device):", f"    return put(torch.tensor([{i}]), device)", ""]
    return "\n".join(lines) + "\n"


def many_functions(n: int) -> str:
    """``n`` small functions, each with its own pageable copy."""
    lines = ["import torch", ""]
    for i in range(n):
        lines += [
            f"def f{i}(device):",
            f"    t = torch.tensor([{i}])",
            "    return t.to(device, non_blocking=True)",
            "",
        ]
    return "\n".join(lines) + "\n"


def attribute_copies(n: int) -> str:
    """One method filling ``n`` attributes with host tensors and copying each."""
    lines = ["import torch", "", "class Batch:", "    def load(self, device):"]
    for i in range(n):
        lines += [f"        self.b{i} = torch.tensor([{i}])", f"        self.b{i}.to(device, non_blocking=True)"]
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


def file_steps(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(analysis steps of every function the file's analysis interpreted, findings)."""
    import pinlint.analysis.interpreter as interpreter_module

    made: list[Interpreter] = []

    class Counting(Interpreter):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(interpreter_module, "Interpreter", Counting)
    analysis = analyze_text(source, SETTINGS)
    monkeypatch.undo()
    return sum(i.steps for i in made), len(analysis.findings)


@pytest.mark.parametrize(
    ("generator", "small", "large"),
    [(call_chain, 6, 600), (recursion_ring, 6, 600), (many_callers, 6, 60)],
)
def test_steps_across_functions_grow_linearly(
    generator, small: int, large: int, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    small_steps, _ = file_steps(generator(small), monkeypatch)
    large_steps, _ = file_steps(generator(large), monkeypatch)
    # Summaries go a few calls deep at most, so chains and rings cost what their first links do.
    assert large_steps <= large / small * small_steps * 1.25, (small_steps, large_steps)


def test_callers_past_the_bound_are_reported_not_dropped_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    analysis = analyze_text(many_callers(100), SETTINGS)
    assert len(analysis.findings) == 64  # the callers followed
    [(row, name, why)] = analysis.over_budget
    assert (row, name) == (many_callers(100).splitlines().index("def g64(device):") + 1, "g64")
    assert "only the first 64" in why and "36 are not" in why


def fix_work(source: str, tmp_path, monkeypatch: pytest.MonkeyPatch) -> int:  # type: ignore[no-untyped-def]
    """Lines of pinlint's own code run by ``check --fix --unsafe-fixes --diff`` on ``source`` (a
    count, not a time: deterministic; libcst's and the standard library's lines are not
    counted, so that a loop of pinlint's per finding over the file stands out)."""
    import sys
    from pathlib import Path

    from click.testing import CliRunner

    import pinlint
    from pinlint.cli import main

    (tmp_path / "pyproject.toml").write_text(
        '[tool.pinlint]\npin-memory-helper = "mypkg.utils:is_pin_memory_available(device)"\n'
    )
    (tmp_path / "shape.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    package = str(Path(pinlint.__file__).parent)
    lines = 0

    def line(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal lines
        lines += event == "line"
        return line

    def call(frame, event, arg):  # type: ignore[no-untyped-def]
        return line if frame.f_code.co_filename.startswith(package) else None

    sys.settrace(call)
    try:
        ran = CliRunner().invoke(main, ["check", "shape.py", "--no-cache", "--fix", "--unsafe-fixes", "--diff"])
    finally:
        sys.settrace(None)
    assert "Would fix" in ran.output, ran.output[-400:]
    return lines


@pytest.mark.parametrize("generator", [chained_copies, branches, many_functions, attribute_copies])
def test_fix_work_grows_linearly(generator, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # Fix safety, the helper's resolution, the import, choosing non-overlapping fixes, the
    # re-lint and the diff: each per finding or once per file, none per finding times file.
    # Linear code measures within a few percent of 20x; a scan of the file per finding, 20%
    # more or worse at these sizes.
    fix_work(chained_copies(2), tmp_path, monkeypatch)  # warm the run's caches (rule catalog, configuration)
    small_work = fix_work(generator(20), tmp_path, monkeypatch)
    large_work = fix_work(generator(400), tmp_path, monkeypatch)
    assert large_work <= 20 * small_work * 1.1, (small_work, large_work)


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
