"""``watch``: the public entry point, usable as a context manager and as a decorator.

This module does not import torch; entering a watch does (through ``_deps.require_torch``), so
``import pinlint.runtime`` works without torch and fails only when a watch is used.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypeVar

from pinlint.runtime._deps import require_torch
from pinlint.runtime.profiling import ProfileTarget
from pinlint.runtime.report import Report

Simulate = Literal["fake", "auto"] | None
Threads = Literal["current", "all"]
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
    check_host_reads: flag host reads of a non_blocking device-to-host copy's destination before the
        copy is known to be done (PIN004): on simulated CUDA, before any synchronisation call; on
        real CUDA, before the copy's event completed.
    patch_cuda_available: under simulation, simulate a small CUDA world: ``torch.cuda`` and
        ``torch.accelerator`` queries say one device, streams/events/synchronize are no-ops.
    threads: ``"current"`` (the entering thread) or ``"all"``: also threads started while the
        watch is active (a scheduler's producer thread, a DataLoader's pin thread). Simulated, the
        threads' torch calls take turns (FakeTensorMode is not thread-safe).
    profile: a profile file (see docs/runtime.md): when the watch ends, how many times each host
        construction and each host-to-device copy ran, per source position, is added to it (one
        run per watch; the file is created when missing). An existing file is validated here,
        when the watch is made, and a bad one raises :class:`pinlint.profile.ProfileError`.
        ``profile_root``: the folder file names are relative to (default: the project root).
    """

    def __init__(
        self,
        strict: bool = False,
        simulate: Simulate = None,
        *,
        report: Report | None = None,
        skip_dirs: Sequence[str] = (),
        check_contiguous: bool = True,
        check_host_reads: bool = True,
        patch_cuda_available: bool = True,
        max_records: int = 100_000,
        threads: Threads = "current",
        profile: str | os.PathLike[str] | None = None,
        profile_root: str | os.PathLike[str] | None = None,
    ) -> None:
        if simulate not in _SIMULATE_VALUES:
            raise ValueError(f"simulate must be one of None, 'fake', 'auto'; got {simulate!r}")
        if threads not in ("current", "all"):
            raise ValueError(f"threads must be 'current' or 'all'; got {threads!r}")
        self.threads = threads
        self.strict = strict
        self.simulate = simulate
        self.skip_dirs = tuple(skip_dirs)
        self.check_contiguous = check_contiguous
        self.check_host_reads = check_host_reads
        self.patch_cuda_available = patch_cuda_available
        self.max_records = max_records
        self._given_report = report
        self.report: Report | None = report
        self._stack: Any = None
        self._thread: int | None = None
        self.profile = profile
        self.profile_root = profile_root
        self._profile: ProfileTarget | None = None
        if profile is not None:
            from pathlib import Path

            root = Path(profile_root) if profile_root is not None else None
            self._profile = ProfileTarget(profile, root)

    def _settings(self) -> dict[str, Any]:
        return {
            "strict": self.strict,
            "simulate": self.simulate,
            "skip_dirs": self.skip_dirs,
            "check_contiguous": self.check_contiguous,
            "check_host_reads": self.check_host_reads,
            "patch_cuda_available": self.patch_cuda_available,
            "max_records": self.max_records,
            "threads": self.threads,
            "profile": self.profile,
            "profile_root": self.profile_root,
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
        profile_run = _ProfileRun(self._profile, report) if self._profile is not None else None
        if profile_run is not None:
            # Last out: the file is written after the mode and the simulation are gone.
            stack.callback(profile_run.finish)
        try:
            simulation = None
            if mode == "fake":
                simulation = stack.enter_context(Simulation(patch_cuda_available=self.patch_cuda_available))
            session = Session(
                report,
                self.strict,
                simulation,
                self.skip_dirs,
                self.check_contiguous,
                self.check_host_reads,
                serial=self.threads == "all",
            )
            stack.enter_context(session.mode)
            stack.callback(setattr, session.mode, "active", False)  # threads that outlive the watch
            if self.threads == "all":
                _watch_new_threads(session, stack)
        except BaseException:
            stack.close()
            raise
        if profile_run is not None:
            profile_run.entered = True
        self._stack = stack
        self._thread = threading.get_ident()
        self.report = report
        return report

    def __exit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        if stack is None:
            return
        if self._thread != threading.get_ident():
            # Unwind anyway (the process-wide simulation patches must not stay), then complain.
            with contextlib.suppress(Exception):
                stack.__exit__(*exc)
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


class _ProfileRun:
    """One watch's contribution to a profile file: a fresh recorder on the report while the
    watch is active, merged into the file when it ends (each watch is one run)."""

    def __init__(self, target: ProfileTarget, report: Report) -> None:
        self.target = target
        self.report = report
        self.previous = report.profile
        self.entered = False  # a watch whose setup failed is not a run
        target.recorder = type(target.recorder)()
        report.profile = target.recorder

    def finish(self) -> None:
        self.report.profile = self.previous
        if self.entered:
            self.target.write()


def _watch_new_threads(session: Any, stack: contextlib.ExitStack) -> None:
    """Threads started from now on enter the session's mode first thing (``threading.setprofile``
    runs a hook at a new thread's start). Torch modes are thread-local, so threads that were
    already running are not reached; they keep the mode after the watch ends, inactive."""
    previous = threading.getprofile()

    def hook(frame: Any, event: str, arg: Any) -> None:
        sys.setprofile(previous)
        if session.mode.active:
            session.mode.__enter__()

    threading.setprofile(hook)
    stack.callback(threading.setprofile, previous)


@contextlib.contextmanager
def simulated_cuda() -> Iterator[None]:
    """The simulated CUDA world without a watch: device queries, streams and events as in
    ``watch(simulate="fake")``, and ``pin_memory=True`` / ``.pin_memory()`` working on a CPU-only
    build. Tensors stay real and nothing is recorded; buffers pinned here are known as pinned by
    later simulated watches (use it for fixtures and module-level buffers)."""
    require_torch()
    from pinlint.runtime import simulate
    from pinlint.runtime._modes import PinMode

    simulate.push_world()
    try:
        with PinMode():
            yield
    finally:
        simulate.pop_world()
