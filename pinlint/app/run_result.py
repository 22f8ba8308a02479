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
