"""The diagnostics of many files built on the worker pool instead of one by one in the parent.

Completing a fix parses the file with ``ast`` and builds its scope model; a run with hundreds of
fixable files (every rule selected) spent as long on that, alone in the parent, as the workers had
on the analysis. The workers get the project's facts and build the same diagnostics the parent
would: the builder is deterministic, and each file's diagnostics depend only on the file, the
configuration, the options and the project.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pinlint.app.options import CheckOptions
from pinlint.config import Config
from pinlint.core.diagnostics import Diagnostic
from pinlint.core.results import FileAnalysis, FileResult

if TYPE_CHECKING:
    from pinlint.app.diagnostic_cache import KeptDiagnostics
    from pinlint.app.engine import DiagnosticBuilder
    from pinlint.fix.project import Project
    from pinlint.runner import WorkerPool

#: Below this many files the parent builds them: sending the project to the workers costs more.
MIN_FILES = 24

Item = tuple[str, FileAnalysis]


def premade_diagnostics(
    results: list[FileResult],
    config: Config,
    options: CheckOptions,
    builder: DiagnosticBuilder,
    kept: KeptDiagnostics | None,
    pool: WorkerPool | None,
) -> dict[str, list[Diagnostic]]:
    """The diagnostics of the files whose fixes need the helper resolved, built on the worker
    pool when there are many (not while fixing: the fix loop rebuilds them file by file)."""
    if pool is None or options.fix or options.diff:
        return {}
    todo = [
        r
        for r in results
        if r.error is None
        and r.analysis is not None
        and r.analysis.syntax_error is None
        and any(f.fix_plan is not None and f.fix_plan.needs_helper for f in r.analysis.findings)
    ]
    if kept is not None and len(todo) >= MIN_FILES:
        todo = [r for r in todo if not kept.has(r)]
    if len(todo) < MIN_FILES:
        return {}
    return build_in_pool(pool, todo, config, options, builder.project)


def build_in_pool(
    pool: WorkerPool, results: list[FileResult], config: Config, options: CheckOptions, project: Project
) -> dict[str, list[Diagnostic]]:
    """Path -> diagnostics for ``results``; {} when the pool cannot do it (the parent then builds
    them itself, as for a small run)."""
    from concurrent.futures.process import BrokenProcessPool

    items: list[Item] = [(r.path, r.analysis) for r in results if r.analysis is not None]
    # The profile is applied afterwards, in the parent; workers need none of it.
    sent = replace(options, profile=None)
    size = max(4, len(items) // (pool.jobs * 4) or 4)
    out: dict[str, list[Diagnostic]] = {}
    try:
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        futures = [pool.pool.submit(_build, (config, sent, project, chunk)) for chunk in chunks]
        for future in futures:
            out.update(future.result())
    except (BrokenProcessPool, OSError, RuntimeError, TypeError, AttributeError):
        # A worker died (a parser crash during the analysis breaks the pool; or one dies now), or
        # something of the run does not pickle (TypeError, AttributeError): the parent builds them.
        return {}
    return out


def _build(args: tuple[Config, CheckOptions, Project, list[Item]]) -> list[tuple[str, list[Diagnostic]]]:
    from pinlint.app.engine import DiagnosticBuilder

    config, options, project, items = args
    builder = DiagnosticBuilder(config, options, project)
    return [(path, builder.diagnostics(Path(path), analysis)) for path, analysis in items]
