"""Baselines around a check: ``--write-baseline`` records its findings, ``--baseline`` keeps
only the ones it does not know. A syntax error (PIN000) is never known: it is not recorded, so
it cannot be baselined away."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pinlint.app.request import RequestError
from pinlint.app.run_result import CheckRun
from pinlint.core.syntax import CODE as SYNTAX_CODE


@dataclass
class BaselineWritten:
    recorded: int
    #: Syntax errors found and left out of the file.
    not_recorded: int


def write_baseline_of(run: CheckRun, filename: str, root: Path) -> BaselineWritten:
    """Raises ``RequestError`` when the file cannot be written."""
    from pinlint.baseline import write_baseline

    recorded = [d for d in run.diagnostics if d.code != SYNTAX_CODE]
    try:
        write_baseline(recorded, Path(filename), root)
    except OSError as exc:
        raise RequestError(f"cannot write the baseline {filename}: {exc.strerror or exc}") from exc
    return BaselineWritten(len(recorded), len(run.diagnostics) - len(recorded))


def drop_known(run: CheckRun, filename: str, root: Path) -> None:
    """Leaves in ``run`` the findings the baseline does not hold (and every syntax error).
    Raises ``RequestError`` for a baseline that cannot be read."""
    from pinlint.baseline import BaselineError, filter_new, load_baseline

    try:
        known = load_baseline(Path(filename))
    except BaselineError as exc:
        raise RequestError(str(exc)) from exc
    syntax_errors = [d for d in run.diagnostics if d.code == SYNTAX_CODE]
    new = filter_new([d for d in run.diagnostics if d.code != SYNTAX_CODE], known, root)
    run.diagnostics = sorted([*new, *syntax_errors], key=lambda d: d.sort_key())
