"""A planned check run: over the discovered files, group by group (each under its own
configuration, on one worker pool), or over stdin."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from pinlint import runner
from pinlint.app.engine import check_stdin, run_check, run_settings
from pinlint.app.files import FileGroups
from pinlint.app.options import cache_dir, uses_cache
from pinlint.app.request import CheckPlan, RequestError, selected_for
from pinlint.app.run_result import CheckRun
from pinlint.fix.project import find_root


@contextmanager
def worker_pool(plan: CheckPlan) -> Iterator[runner.WorkerPool | None]:
    """A directory usually means many files: the workers start now, so that their libcst import
    overlaps discovery. (pre-commit passes files, and small runs stay in-process.)"""
    pool = None
    jobs = plan.request.jobs or runner.default_jobs()
    if jobs > 1 and any(Path(p).is_dir() for p in plan.request.path_list) and not _warm_cache_likely(plan):
        pool = runner.WorkerPool(jobs)
    try:
        yield pool
    finally:
        if pool is not None:
            pool.close()


def _warm_cache_likely(plan: CheckPlan) -> bool:
    """A cache file for these settings exists: most files will be hits, workers would idle."""
    from pinlint.cache import cache_file

    config, options = plan.config, plan.options
    if not uses_cache(options):
        return False
    root = find_root(config.root, config.path, [Path(p) for p in plan.request.path_list])
    return cache_file(cache_dir(config, options), run_settings(config, options, root)).exists()


def check_files(
    plan: CheckPlan,
    found: FileGroups,
    pool: runner.WorkerPool | None,
    on_progress: Callable[[int], None] | None = None,
) -> CheckRun:
    """Every group under its configuration's selection, merged into one run.

    Leaves in ``plan.options.selected`` every rule any configuration selected: statistics and
    the report name them all."""
    options, base = plan.options, plan.config
    run = CheckRun()
    for group_config, group in found.groups:
        group_options = (
            options if group_config is base else replace(options, selected=selected_for(plan.request, group_config))
        )
        run.merge(
            run_check(
                group, group_config, group_options, on_progress=on_progress, pool=pool, requested=plan.request.path_list
            )
        )
    # The order run_check gives each group: hottest first with a profile, else by place.
    if options.profile is not None:
        run.diagnostics.sort(key=lambda d: (-(d.profile.count if d.profile else 0), *d.sort_key()))
    else:
        run.diagnostics.sort(key=lambda d: d.sort_key())
    options.selected = set().union(
        options.selected, *(selected_for(plan.request, c) for c, _files in found.groups if c is not base)
    )
    run.timings.add("discovery", found.seconds)
    run.errors[:0] = [(path, message) for path, message in found.problems]
    return run


@dataclass
class StdinCheck:
    run: CheckRun
    filename: Path
    #: The text the findings are located in (after --fix, the fixed one): excerpts come from it.
    shown: str


def check_stdin_data(plan: CheckPlan, data: bytes) -> StdinCheck:
    """Raises ``RequestError`` when the bytes are not text in a Python source encoding."""
    from pinlint import source

    try:
        text = source.decode(data).text
    except source.DecodeError as exc:
        raise RequestError(f"stdin: {exc}") from exc
    filename = Path(plan.request.stdin_filename or "-").absolute()
    run = check_stdin(text, filename, plan.config, plan.options)
    shown = run.stdin_output if run.stdin_output is not None and plan.options.fix else text
    return StdinCheck(run, filename, shown)
