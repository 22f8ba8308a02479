"""The pytest plugin, exercised with pytester (inline runs, real torch, simulated CUDA).

Every inner test that is watched asserts that transfers were observed.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]

HOT = """import torch

def is_pin_memory_available(device=None):
    return torch.cuda.is_available()

def unpinned(device):
    ids = torch.tensor([1, 2, 3])  # line 7
    return ids.to(device, non_blocking=True)  # line 8

def pinned(device):
    ids = torch.tensor([1, 2, 3], pin_memory=is_pin_memory_available(device))
    return ids.to(device, non_blocking=True)
"""


def _plugin_args() -> list[str]:
    """Load the plugin explicitly unless the installed entry point already does."""
    installed = any(ep.value == "pinlint.runtime.pytest_plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "pinlint.runtime.pytest_plugin"]


@pytest.fixture(scope="module", autouse=True)
def _warm_torch_imports() -> None:
    """Inline pytester runs restore sys.modules afterwards; torch modules that a simulated watch
    imports lazily (FakeTensorMode pulls in torch._inductor pieces) would then be imported again,
    and re-registering their operator libraries fails. Import them once, out here."""
    from pinlint.runtime import watch

    with watch(simulate="fake") as report:
        torch.tensor([1, 2, 3]).to("cuda", non_blocking=True)
        torch.ones(2, pin_memory=True).to("cuda", non_blocking=True)
        torch.empty(2, device="cuda").copy_(torch.ones(2), non_blocking=True)
    assert len(report.transfers) == 3


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(hot=HOT)
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*_plugin_args(), "-p", "no:cacheprovider", *args)


def test_plugin_module_and_runtime_package_do_not_import_torch() -> None:
    code = "import sys, pinlint.runtime, pinlint.runtime.pytest_plugin, pinlint.runtime.cli; print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_inert_by_default(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
        import torch
        from torch.overrides import _get_current_function_mode_stack

        def test_no_mode_is_pushed():
            assert _get_current_function_mode_stack() == []
            assert torch.ones(2).to(torch.float64).dtype == torch.float64
        """
    )
    result = run(project, "--strict-markers")
    result.assert_outcomes(passed=1)
    assert "pinlint runtime" not in result.stdout.str()


def test_fixture_reports_and_summarises(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_fix="""
        import hot

        def test_unpinned(pinlint_watch):
            hot.unpinned("cuda")
            assert len(pinlint_watch.transfers) >= 1
            [v] = pinlint_watch.violations
            assert (v.code, v.location.row, v.copy_site.row) == ("PIN001", 7, 8)

        def test_pinned(pinlint_watch):
            hot.pinned("cuda")
            assert len(pinlint_watch.transfers) >= 1
            pinlint_watch.assert_clean()
        """
    )
    result = run(project)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*pinlint runtime: non_blocking H2D copies from pageable memory*",
            "hot.py:7: PIN001 pageable-non-blocking (copy at hot.py:8) x1 in 1 test(s): test_fix.py::test_unpinned",
            "pinlint runtime: 1 violation(s) at 1 site(s) in 2 watched test(s)",
        ]
    )


def test_strict_marker_fails_at_the_call_site(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_strict="""
        import pytest
        import hot

        @pytest.mark.pinlint(strict=True)
        def test_strict(pinlint_watch):
            try:
                hot.unpinned("cuda")
            finally:
                assert len(pinlint_watch.transfers) >= 1

        @pytest.mark.pinlint(strict=True)
        def test_strict_clean(pinlint_watch):
            hot.pinned("cuda")
            assert len(pinlint_watch.transfers) >= 1
        """
    )
    result = run(project, "--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *PageableNonBlockingCopy: *hot.py:8: Tensor.to(non_blocking=True) to cuda:0 from pageable host memory [[]PIN001]: the source was built by `torch.tensor` at *hot.py:7 without pin_memory=; pin it there"
        ]
    )


def test_marker_without_fixture_is_watched(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_marker="""
        import pytest
        import hot

        @pytest.mark.pinlint(simulate="fake")
        def test_marked():
            hot.unpinned("cuda")
        """
    )
    result = run(project)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["hot.py:7: PIN001 *test_marker.py::test_marked"])


def test_warn_mode_watches_every_test(project: pytest.Pytester) -> None:
    # An unmarked test runs in observe mode (simulate=None): on a CPU-only build the copy fails
    # after the watch recorded it; on a GPU it runs.
    project.makepyfile(
        test_warn="""
        import pytest
        import torch
        from torch.overrides import _get_current_function_mode_stack
        import hot

        def test_unmarked():
            assert len(_get_current_function_mode_stack()) == 1
            if torch.cuda.is_available():
                hot.unpinned("cuda")
            else:
                with pytest.raises((AssertionError, RuntimeError)):
                    hot.unpinned("cuda")
        """
    )
    result = run(project, "--pinlint-runtime=warn", "-W", "always")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*PinlintRuntimeWarning: pinlint.runtime: 1 H2D transfer(s), 1 violation(s)*",
            "hot.py:7: PIN001 *test_unmarked",
        ]
    )


def test_strict_mode_fails_unmarked_tests_but_marker_can_opt_out(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_strict_mode="""
        import pytest
        import hot

        def test_unmarked():
            hot.unpinned("cuda")

        @pytest.mark.pinlint(strict=False, simulate="fake")
        def test_opted_out(pinlint_watch):
            hot.unpinned("cuda")
            assert len(pinlint_watch.violations) == 1
        """
    )
    result = run(project, "--pinlint-runtime=strict")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_unmarked _*",
            "E *PageableNonBlockingCopy: *hot.py:8: Tensor.to(non_blocking=True) to cuda from pageable host memory [[]PIN001]*",
        ]
    )


def test_simulate_option_none_observes_real_copies(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_real=f"""
        import pytest
        import torch
        import hot

        def test_real(pinlint_watch):
            assert torch.cuda.is_available() is {torch.cuda.is_available()}
            if not torch.cuda.is_available():
                with pytest.raises((AssertionError, RuntimeError)):
                    hot.unpinned("cuda")
            else:
                hot.unpinned("cuda")
            [t] = pinlint_watch.transfers
            assert t.simulated is False
        """
    )
    run(project, "--pinlint-simulate=none").assert_outcomes(passed=1)


def test_marker_positional_args_are_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.pinlint(True)
        def test_bad():
            pass
        """
    )
    result = run(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*UsageError: test_bad.py::test_bad: use keyword arguments*"])


def test_options_are_listed_in_help(project: pytest.Pytester) -> None:
    result = run(project, "--help")
    result.stdout.fnmatch_lines(["*--pinlint-runtime={off,warn,strict}*", "*--pinlint-simulate={auto,fake,none}*"])
    markers = run(project, "--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.pinlint(strict=None, simulate=None)*"])


def test_fixture_and_import_time_pinned_buffers_are_pinned(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_pins="""
        import pytest
        import torch

        MODULE_BUF = torch.empty(8, pin_memory=torch.cuda.is_available())

        @pytest.fixture
        def staging():
            return torch.empty(8, pin_memory=True)

        def test_fixture_buffer(pinlint_watch, staging):
            staging.to("cuda", non_blocking=True)
            assert len(pinlint_watch.transfers) == 1
            pinlint_watch.assert_clean()

        def test_module_buffer(pinlint_watch):
            MODULE_BUF.to("cuda", non_blocking=True)
            assert len(pinlint_watch.transfers) == 1
            pinlint_watch.assert_clean()
        """
    )
    # Import time is covered when the simulation is asked for explicitly.
    run(project, "--pinlint-simulate=fake").assert_outcomes(passed=2)
    # With the default (auto), fixtures are still set up in the simulated world.
    result = run(project, "-k", "fixture_buffer")
    result.assert_outcomes(passed=1)


def test_summary_warns_about_blind_spots(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_blind="""
        import contextlib
        import torch

        def test_blind(pinlint_watch):
            x = torch.ones(4, pin_memory=True)
            x.to("cuda", non_blocking=True)
            with contextlib.suppress(Exception):
                torch.ops.aten._copy_from(x, torch.empty(4, device="cuda"), True)
            assert len(pinlint_watch.transfers) == 1
        """
    )
    result = run(project)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["pinlint runtime: warning: 1 torch copy call(s) could not be classified (aten._copy_from*"]
    )
