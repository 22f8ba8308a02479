"""``watch``: the public entry point, usable as a context manager and as a decorator.

This module does not import torch; entering a watch does (through ``_deps.require_torch``), so
``import pinlint.runtime`` works without torch and fails only when a watch is used.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pinlint.runtime._deps import require_torch
from pinlint.runtime.model import Report

Simulate = Literal["fake", "auto"] | None
F = TypeVar("F", bound=Callable[..., Any])

_SIMULATE_VALUES = (None, "fake", "auto")


def resolve_simulate(simulate: Simulate) -> str | None:
    """``"auto"`` = fake when CUDA is absent, real otherwise."""
    if simulate not in _SIMULATE_VALUES:
        raise ValueError(f"simulate must be one of None, 'fake', 'auto'; got {simulate!r}")
    if simulate == "auto":
        torch = require_torch()
        return None if torch.cuda.is_available() else "fake"
    return simulate


class watch:
    """Record every host-to-device copy made in a block (or a decorated function) on this thread.

    ``with watch() as report: ...`` yields a :class:`Report`. As a decorator, each call runs under a
    fresh watch with the same settings, and ``the_watch.report`` is the last call's report.

    strict: raise :class:`PageableNonBlockingCopy` at the first violation, naming the call site.
    simulate: None (observe real copies; needs CUDA for them to run), ``"fake"`` (CPU-only machines:
        FakeTensorMode, simulated CUDA targets and pinning; see ``simulate.py``), or ``"auto"``.
    report: append into an existing Report, e.g. one shared by watches entered in several threads
        (a watch only sees the thread that entered it).
    skip_dirs: more directories whose frames are library code (the call site is the first frame
        outside torch/, pinlint/, contextlib and these).
    check_contiguous: flag pinned sources whose layout stages through pageable memory.
    patch_cuda_available: under simulation, make ``torch.cuda.is_available()`` return True.
    """

    def __init__(
        self,
        strict: bool = False,
        simulate: Simulate = None,
        *,
        report: Report | None = None,
        skip_dirs: Sequence[str] = (),
        check_contiguous: bool = True,
        patch_cuda_available: bool = True,
        max_records: int = 100_000,
    ) -> None:
        if simulate not in _SIMULATE_VALUES:
            raise ValueError(f"simulate must be one of None, 'fake', 'auto'; got {simulate!r}")
        self.strict = strict
        self.simulate = simulate
        self.skip_dirs = tuple(skip_dirs)
        self.check_contiguous = check_contiguous
        self.patch_cuda_available = patch_cuda_available
        self.max_records = max_records
        self._given_report = report
        self.report: Report | None = report
        self._stack: Any = None
        self._thread: int | None = None

    def _settings(self) -> dict[str, Any]:
        return {
            "strict": self.strict,
            "simulate": self.simulate,
            "skip_dirs": self.skip_dirs,
            "check_contiguous": self.check_contiguous,
            "patch_cuda_available": self.patch_cuda_available,
            "max_records": self.max_records,
        }

    def __enter__(self) -> Report:
        if self._stack is not None:
            raise RuntimeError("this watch is already active; create a new watch() to nest one")
        require_torch()
        import contextlib

        from pinlint.runtime._engine import Session
        from pinlint.runtime.simulate import Simulation

        mode = resolve_simulate(self.simulate)
        report = self._given_report if self._given_report is not None else Report(max_records=self.max_records)
        report.simulated = report.simulated or mode == "fake"
        stack = contextlib.ExitStack()
        try:
            simulation = None
            if mode == "fake":
                simulation = stack.enter_context(Simulation(patch_cuda_available=self.patch_cuda_available))
            session = Session(report, self.strict, simulation, self.skip_dirs, self.check_contiguous)
            stack.enter_context(session.mode)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        self._thread = threading.get_ident()
        self.report = report
        return report

    def __exit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        if stack is None:
            return
        if self._thread != threading.get_ident():
            raise RuntimeError("a watch must be exited on the thread that entered it (torch modes are thread-local)")
        stack.__exit__(*exc)

    def __call__(self, fn: F) -> F:
        settings = self._settings()

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            inner = watch(**settings, report=self._given_report)
            try:
                with inner:
                    return fn(*args, **kwargs)
            finally:
                self.report = inner.report

        return wrapper  # type: ignore[return-value]
