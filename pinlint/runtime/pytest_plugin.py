"""pytest plugin for pinlint's runtime companion (entry point ``pytest11: pinlint``).

It is loaded in every pytest run of an environment where torch-pinlint is installed, so it imports
neither torch nor the watch engine at import time, and does nothing unless used:

* ``pinlint_watch`` fixture: the test's call phase runs under ``pinlint.runtime.watch``; the fixture
  value is the :class:`~pinlint.runtime.report.Report`, filled while the test body runs.
* ``@pytest.mark.pinlint(strict=..., simulate=...)``: the same without the fixture; overrides the
  command-line defaults for that test.
* ``--pinlint-runtime=off|warn|strict`` (default ``off``):
    off     only tests that use the fixture or the marker are watched; strict only if the marker says so;
    warn    every test is watched; violations become PinlintRuntimeWarning warnings;
    strict  every test is watched and fails at its first violation (a marker's strict=False wins).
  Tests watched only because of the option run with ``simulate=None`` (observe the real copies,
  never change what the code does); opted-in tests use ``--pinlint-simulate`` (default ``auto``:
  fake on machines without CUDA, real otherwise) unless their marker says otherwise.
* A terminal summary lists violations by call site whenever a watched test saw one.

Only the test's call phase is watched, on the main thread. Fixtures of a simulated test are set up
in the simulated CUDA world (``simulated_cuda()``: real tensors, simulated pinning), so buffers they
pin are known as pinned; with ``--pinlint-simulate=fake`` test modules are imported in it too.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import pytest

from pinlint.runtime.model import PinlintRuntimeWarning, Violation
from pinlint.runtime.report import Report

_MODES = ("off", "warn", "strict")
_SIMULATE_CHOICES = {"auto": "auto", "fake": "fake", "none": None}


@dataclass
class _Plan:
    strict: bool
    simulate: str | None
    report: Report = field(default_factory=Report)


@dataclass
class _State:
    mode: str
    simulate: str | None
    watched: int = 0
    findings: list[tuple[str, Violation]] = field(default_factory=list)
    transfers: int = 0
    #: Torch copies the watches could not classify (blind spots), by entry point.
    unclassified: Counter[str] = field(default_factory=Counter)
    #: ``--pinlint-simulate=fake`` given: modules are imported under simulated CUDA too.
    explicit_fake: bool = False
    #: ``--pinlint-profile=FILE``: every watched test counts into it; written at session end.
    profile: Any = None
    profile_message: str = ""


_STATE = pytest.StashKey[_State]()
_PLAN = pytest.StashKey[_Plan]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pinlint", "pinlint runtime companion (non_blocking H2D copies from pageable memory)")
    group.addoption(
        "--pinlint-runtime",
        choices=_MODES,
        default="off",
        dest="pinlint_runtime",
        help="off: watch only tests using the pinlint_watch fixture or marker (default); "
        "warn: watch every test and warn on violations; strict: watch every test and fail on violations.",
    )
    group.addoption(
        "--pinlint-simulate",
        choices=tuple(_SIMULATE_CHOICES),
        default="auto",
        dest="pinlint_simulate",
        help="simulation for tests that opt in (fixture or marker): auto (fake without CUDA), fake, none.",
    )
    group.addoption(
        "--pinlint-profile",
        default=None,
        dest="pinlint_profile",
        metavar="FILE",
        help="add how many times each host construction and H2D copy ran in the watched tests, per "
        "source position, to this profile file (see `pinlint check --profile`).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "pinlint(strict=None, simulate=None): run the test under pinlint.runtime.watch "
        "(strict: fail at the first pageable non_blocking H2D copy; simulate: None, 'fake' or 'auto').",
    )
    mode = config.getoption("pinlint_runtime", "off") or "off"
    simulate = _SIMULATE_CHOICES[config.getoption("pinlint_simulate", "auto") or "auto"]
    if mode != "off":
        from pinlint.runtime._deps import MissingTorchError, require_torch

        try:
            require_torch()
        except MissingTorchError as exc:
            raise pytest.UsageError(f"--pinlint-runtime={mode}: {exc}") from exc
    state = _State(mode=mode, simulate=simulate, explicit_fake=simulate == "fake")
    profile_path = config.getoption("pinlint_profile", None)
    if profile_path:
        from pinlint.profile import ProfileError
        from pinlint.runtime.profiling import ProfileTarget

        try:
            # Validated now: a bad file stops the run before the tests, not after them.
            state.profile = ProfileTarget(profile_path)
        except ProfileError as exc:
            raise pytest.UsageError(f"--pinlint-profile: {exc}") from None
    config.stash[_STATE] = state


def _plan_for(item: pytest.Item, opted_in: bool) -> _Plan | None:
    existing = item.stash.get(_PLAN, None)
    if existing is not None:
        return existing
    state = item.config.stash[_STATE]
    marker = item.get_closest_marker("pinlint")
    if marker is not None and marker.args:
        raise pytest.UsageError(f"{item.nodeid}: use keyword arguments: @pytest.mark.pinlint(strict=..., simulate=...)")
    opted_in = opted_in or marker is not None or "pinlint_watch" in getattr(item, "fixturenames", ())
    if not opted_in and state.mode == "off":
        return None
    kwargs = marker.kwargs if marker is not None else {}
    strict = bool(kwargs["strict"]) if "strict" in kwargs else state.mode == "strict"
    if "simulate" in kwargs:
        simulate = kwargs["simulate"]
    else:
        simulate = state.simulate if opted_in else None
    plan = _Plan(strict=strict, simulate=simulate)
    if state.profile is not None:
        plan.report.profile = state.profile.recorder
    item.stash[_PLAN] = plan
    return plan


@pytest.fixture
def pinlint_watch(request: pytest.FixtureRequest) -> Report:
    """The Report of this test's watch; it fills while the test body runs."""
    from pinlint.runtime._deps import require_torch

    require_torch()
    plan = _plan_for(request.node, opted_in=True)
    assert plan is not None
    return plan.report


def _simulating(simulate: str | None) -> bool:
    if simulate == "fake":
        return True
    if simulate != "auto":
        return False
    from pinlint.runtime.watch import resolve_simulate

    return resolve_simulate("auto") == "fake"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """With an explicit ``--pinlint-simulate=fake``, test modules are imported in the simulated
    CUDA world, so module-level pinned buffers exist and are known as pinned."""
    state = collector.config.stash.get(_STATE, None)
    if state is None or not state.explicit_fake or not isinstance(collector, pytest.Module):
        return (yield)
    from pinlint.runtime.watch import simulated_cuda

    with simulated_cuda():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    """Fixtures of a simulated test run in the simulated CUDA world (real tensors, simulated
    pinning): a ``pin_memory=True`` buffer made there is pinned when the test body copies it."""
    try:
        plan = _plan_for(item, opted_in=False)
    except pytest.UsageError:
        plan = None  # reported by the call phase, as a failure of this test
    if plan is None or not _simulating(plan.simulate):
        return (yield)
    from pinlint.runtime.watch import simulated_cuda

    with simulated_cuda():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    plan = _plan_for(item, opted_in=False)
    if plan is None:
        return (yield)
    from pinlint.runtime.watch import watch

    state = item.config.stash[_STATE]
    state.watched += 1
    try:
        with watch(strict=plan.strict, simulate=plan.simulate, report=plan.report):  # type: ignore[arg-type]
            return (yield)
    finally:
        report = plan.report
        state.transfers += report.total
        state.unclassified.update(report.unclassified)
        state.findings.extend((item.nodeid, v) for v in report.violations)
        if report.violations and state.mode == "warn" and not plan.strict:
            warnings.warn(PinlintRuntimeWarning(report.summary()), stacklevel=1)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the profile (one run for the whole session) before the terminal summary."""
    state = session.config.stash.get(_STATE, None)
    if state is None or state.profile is None or state.watched == 0:
        return
    from pinlint.profile import ProfileError

    target = state.profile
    try:
        merged = target.write()
    except (ProfileError, OSError) as exc:
        state.profile_message = f"pinlint runtime: error: cannot write the profile {target.path}: {exc}"
        return
    state.profile_message = (
        f"pinlint runtime: profile: {target.written} site(s) added to {target.path} "
        f"({merged.runs} run(s), {len(merged.entries())} site(s))"
    )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or state.watched == 0:
        return
    from pinlint.core.paths import display_path

    tr = terminalreporter
    if state.profile_message:
        tr.write_line(state.profile_message, red="error" in state.profile_message)
    if state.unclassified:
        kinds = ", ".join(f"{k} x{n}" for k, n in sorted(state.unclassified.items()))
        tr.write_line(
            f"pinlint runtime: warning: {sum(state.unclassified.values())} torch copy call(s) "
            f"could not be classified ({kinds}); they are not checked",
            yellow=True,
        )
    if not state.findings:
        tr.write_line(
            f"pinlint runtime: {state.watched} watched test(s), {state.transfers} H2D transfer(s), no violation"
        )
        return
    title = "non_blocking H2D copies from pageable memory"
    if any(v.code == "PIN004" for _nodeid, v in state.findings):
        title = "non_blocking copies: pageable H2D sources, D2H destinations read too early"
    tr.write_sep("=", f"pinlint runtime: {title}", yellow=True)
    groups: dict[tuple[str, str, int], tuple[Violation, int, set[str]]] = {}
    for nodeid, v in state.findings:
        key = (v.code, v.location.filename, v.location.row)
        prev = groups.get(key)
        if prev is None:
            groups[key] = (v, 1, {nodeid})
        else:
            prev[2].add(nodeid)
            groups[key] = (prev[0], prev[1] + 1, prev[2])
    root = str(config.rootpath)
    for (code, filename, row), (v, count, tests) in sorted(groups.items(), key=lambda kv: kv[0][1:] + (kv[0][0],)):
        path = display_path(filename, root)
        copy = v.copy_site
        copy_note = f" (copy at {display_path(copy.filename, root)}:{copy.row})" if copy and copy != v.location else ""
        tr.write_line(
            f"{path}:{row}: {code} {v.kind}{copy_note} x{count} in {len(tests)} test(s): {', '.join(sorted(tests)[:3])}{' ...' if len(tests) > 3 else ''}"
        )
    tr.write_line(
        f"pinlint runtime: {len(state.findings)} violation(s) at {len(groups)} site(s) in {state.watched} watched test(s)"
    )
