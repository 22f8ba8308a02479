"""What a check found, fixed and could not do (``CheckRun``): the engine fills it, callers print it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pinlint.core.diagnostics import Diagnostic
from pinlint.core.results import Timings


@dataclass
class CheckRun:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    dropped: list[tuple[Diagnostic, str]] = field(default_factory=list)
    #: (path, message): files that could not be checked or written.
    errors: list[tuple[str, str]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    #: (path, message): files skipped by the watchdog (always shown).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: (path, message): scopes whose analysis hit its step budget (shown with -v).
    over_budget: list[tuple[str, str]] = field(default_factory=list)
    #: Findings ``--hot-only`` dropped (their site ran fewer than ``min_runs`` times).
    profile_dropped: int = 0
    #: For stdin: the (possibly fixed) source.
    stdin_output: str | None = None
    timings: Timings = field(default_factory=Timings)

    def merge(self, part: CheckRun) -> None:
        """Adds another run's results (another configuration's group of files) to this one."""
        self.diagnostics.extend(part.diagnostics)
        self.fixed.extend(part.fixed)
        self.dropped.extend(part.dropped)
        self.errors.extend(part.errors)
        self.diffs.update(part.diffs)
        self.skipped.extend(part.skipped)
        self.over_budget.extend(part.over_budget)
        self.profile_dropped += part.profile_dropped
        for phase, seconds in part.timings.phases.items():
            self.timings.add(phase, seconds)
        self.timings.files += part.timings.files
        self.timings.triaged += part.timings.triaged
        self.timings.cache_hits += part.timings.cache_hits
        self.timings.parsed_lines += part.timings.parsed_lines
