"""PIN004's unsafe fix, proven by running it: every function of the PIN004 fixtures runs before
and after ``--fix --unsafe-fixes`` (the fix made here, checked against the case's ``fixed.diff``)
and computes the same, with real CPU
tensors in the simulated CUDA world (where ``torch.cuda.current_stream().synchronize()`` exists on
a CPU-only build); and under a simulated watch, each function the fix changed has a runtime PIN004
finding before and none after."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import runpy
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy on `Tensor.__array__`

from torch._subclasses.fake_tensor import DataDependentOutputException  # noqa: E402

from pinlint.runtime import Report, simulated_cuda, watch  # noqa: E402
from pinlint.runtime.model import PIN004  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASES = [("pin004_reads", "m.py"), ("pin004_fixes", "m.py"), ("pin004_fixes", "local_import.py")]
#: Functions the watch cannot judge: numpy's copy of the data is invisible to a torch mode (and
#: `.numpy()` of a fake tensor raises).
NOT_SEEN_AT_RUN_TIME = {"numpy_copy"}
#: Arguments by function, where the default for the parameter's name does not exercise the read.
OVERRIDES: dict[str, dict[str, Any]] = {
    "sync_on_one_branch": {"flag": False},  # the branch without a synchronisation
    "one_line_branch": {"flag": True},  # the branch that reads
}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _functions(module: ModuleType) -> dict[str, Any]:
    """Every function of the fixture (``Worker.drain`` as a bound method), by name."""
    found: dict[str, Any] = {}
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            found[name] = value
    worker = getattr(module, "Worker", None)
    if worker is not None:
        instance = worker()
        instance.copy_stream = torch.cuda.Stream()
        found["Worker.drain"] = instance.drain
    return found


def _arguments(name: str, fn: Any, gpu: torch.Tensor, device: str) -> list[Any]:
    defaults = {
        "gpu": gpu,
        "gpus": [gpu * 0, gpu * 0],  # `loop_test`: the test is false at once
        "n": 4,
        "flag": True,
        "stream": torch.cuda.Stream(),
        "device": device,
        "rows": [0, 9],  # the second one raises IndexError, which the fixture catches
        "items": [0, 1],
        "other": torch.ones(2),
        "ctx": SimpleNamespace(copy_stream=contextlib.nullcontext),
    }
    defaults.update(OVERRIDES.get(name, {}))
    return [defaults[p] for p in inspect.signature(fn).parameters]


def _plain(value: Any) -> Any:
    """A comparable form of a result (meta tensors have shapes, no values)."""
    if isinstance(value, torch.Tensor):
        data = None if value.device.type == "meta" else value.tolist()
        return ("tensor", tuple(value.shape), str(value.dtype), data)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if type(value).__module__ == "numpy":
        return ("numpy", value.tolist())
    return value


@pytest.fixture(scope="module")
def fixed_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Each case's files without their markers (``before``) and after ``--fix --unsafe-fixes``
    (``after``); the fix must be the case's ``fixed.diff``, so that these runs test the snapshot."""
    from click.testing import CliRunner

    from pinlint.cli import main
    from tests.test_fixtures import _args, _prepare, unified_diff

    out = {}
    for case in sorted({c for c, _ in CASES}):
        root = tmp_path_factory.mktemp(case)
        before, texts, _ = _prepare(FIXTURES / case, root / "before")
        after, _, _ = _prepare(FIXTURES / case, root / "after")
        args = ["check", ".", "--no-cache", *_args(FIXTURES / case), "--fix", "--unsafe-fixes"]
        here = os.getcwd()
        os.chdir(after)
        try:
            CliRunner().invoke(main, args, catch_exceptions=False)
        finally:
            os.chdir(here)
        diff = "".join(unified_diff(r, texts[r], (after / r).read_text()) for r in sorted(texts))
        assert diff == (FIXTURES / case / "fixed.diff").read_text(), case
        out[case] = (before, after)
    return out


def _pair(fixed_cases: dict[str, tuple[Path, Path]], case: str, file: str) -> tuple[Path, Path]:
    """The file before and after the fix; asserts it changed exactly when ``fixed.diff`` says so
    (``local_import.py`` is a no-fix case), so that no test below passes vacuously."""
    before, after = fixed_cases[case]
    fixed_here = f"+++ b/{file}\n" in (FIXTURES / case / "fixed.diff").read_text()
    assert ((before / file).read_text() != (after / file).read_text()) == fixed_here
    return before / file, after / file


@pytest.mark.parametrize(("case", "file"), CASES, ids=[f"{c}/{f}" for c, f in CASES])
def test_fixed_functions_run_and_compute_the_same(
    case: str, file: str, fixed_cases: dict[str, tuple[Path, Path]]
) -> None:
    original, fixed = _pair(fixed_cases, case, file)
    with simulated_cuda():
        before = _functions(_load(original, f"{case}_before"))
        after = _functions(_load(fixed, f"{case}_after"))
        assert before.keys() == after.keys()
        for name in before:
            gpu = torch.arange(4.0)  # a CPU tensor: `.to("cpu", non_blocking=True)` returns it
            results = []
            for fn in (before[name], after[name]):
                results.append(_plain(fn(*_arguments(name, fn, gpu, "meta"))))
            assert results[0] == results[1], name


def _runtime_reads(fn: Any, name: str) -> list[int]:
    with watch(simulate="fake") as report:
        gpu = torch.zeros(4, device="cuda")
        # A value read of a fake tensor raises once the watch has seen it.
        with contextlib.suppress(DataDependentOutputException):
            fn(*_arguments(name, fn, gpu, "cuda"))
    return _rows(report)


def _rows(report: Report) -> list[int]:
    return [v.location.row for v in report.violations if v.code == PIN004]


@pytest.mark.parametrize(("case", "file"), CASES, ids=[f"{c}/{f}" for c, f in CASES])
def test_fixed_functions_are_clean_at_run_time(case: str, file: str, fixed_cases: dict[str, tuple[Path, Path]]) -> None:
    original, fixed = _pair(fixed_cases, case, file)
    with simulated_cuda():
        before = _functions(_load(original, f"{case}_before"))
        after = _functions(_load(fixed, f"{case}_after"))
    changed = [name for name in before if inspect.getsource(before[name]) != inspect.getsource(after[name])]
    checked = [name for name in changed if name not in NOT_SEEN_AT_RUN_TIME]
    assert checked or original.read_text() == fixed.read_text()  # never pass vacuously
    for name in checked:
        assert _runtime_reads(before[name], name), f"{name}: the original reads too early"
        assert _runtime_reads(after[name], name) == [], f"{name}: the fix synchronises before the read"


def test_fixed_module_level_script_is_clean_at_run_time(fixed_cases: dict[str, tuple[Path, Path]]) -> None:
    original, fixed = _pair(fixed_cases, "pin004_fixes", "script.py")
    for path, expected in ((original, 1), (fixed, 0)):
        with watch(simulate="fake") as report:
            runpy.run_path(str(path))
        assert len(_rows(report)) == expected, path
