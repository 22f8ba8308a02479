"""Run the per-file pipeline (read → triage → lint) over many files, in parallel, with a cache.

Workers read files themselves so that reading, too, uses every core; they return small picklable
results. Configuration is resolved once in the parent and handed to workers as one small object.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pinlint import lint, source
from pinlint.core.results import AnalysisSettings, FileAnalysis, FileResult, Timings
from pinlint.core.text import digest

if TYPE_CHECKING:
    from pinlint.cache import Cache


#: The result of a file that holds nothing for pinlint (shared: results are never mutated).
EMPTY = FileAnalysis()


def analyze_bytes(path: str, data: bytes, settings: AnalysisSettings, need_digest: bool = True) -> FileResult:
    rules = lint.rule_set(settings)
    wants_helper = lint.teaches_helper(data)
    triggered = lint.file_triggered(data, rules)
    # The digest keys the cache and guards fixes; a no-cache run needs it only where it may fix.
    result = FileResult(path=path, analysis=None, size=len(data), digest=digest(data) if need_digest or triggered else "")
    if not triggered and not wants_helper:
        result.analysis = EMPTY  # most files: nothing to analyze (shared, never mutated)
        return result
    try:
        decoded = source.decode(data)
    except source.DecodeError as exc:
        if triggered:
            result.error = f"cannot decode: {exc}"
        else:
            result.analysis = FileAnalysis()
        return result
    result.triaged_in = triggered
    if triggered:
        try:
            result.analysis = lint.analyze_text(decoded.text, settings, newline=decoded.newline)
        except RecursionError:
            result.error = "too deeply nested to analyze (recursion limit)"
        return result
    # Not a candidate, but it may teach us the project's pin-memory helper.
    result.analysis = lint.file_facts(decoded.text, decoded.newline)
    return result


#: The flow analysis recurses once per nested expression: a long flat `a + b + ...` chain that
#: CPython compiles fine needs more than Python's default 1000 frames. (Python 3.11+ frames use
#: no C stack for Python-to-Python calls, so this is safe.)
_RECURSION_LIMIT = 12_000 if sys.version_info >= (3, 11) else 4_000


def _process(path: str, settings: AnalysisSettings, need_digest: bool = True) -> FileResult:
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            data = fh.read()
    except OSError as exc:
        return FileResult(path=path, analysis=None, error=f"cannot read: {exc.strerror or exc}")
    result = analyze_bytes(path, data, settings, need_digest)
    result.mtime_ns = info.st_mtime_ns
    return result


Compact = tuple[str, int, int, str]


def _process_chunk(args: tuple[list[str], AnalysisSettings, bool]) -> list[FileResult | Compact]:
    """Results of a worker; files with nothing in them travel back as small tuples (cheaper
    to pickle than dataclasses: they are 97% of a real code base)."""
    paths, settings, need_digest = args
    out: list[FileResult | Compact] = []
    for path in paths:
        result = _process(path, settings, need_digest)
        if result.analysis is EMPTY and result.error is None:
            out.append((result.path, result.size, result.mtime_ns, result.digest))
        else:
            out.append(result)
    return out


def _expand(item: FileResult | Compact) -> FileResult:
    if isinstance(item, FileResult):
        return item
    path, size, mtime_ns, file_digest = item
    return FileResult(path=path, analysis=EMPTY, size=size, mtime_ns=mtime_ns, digest=file_digest)


def _warm_worker() -> None:
    """Worker start-up, while the parent is still discovering files: import libcst here."""
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    import libcst  # noqa: F401


class WorkerPool:
    """Worker processes started before discovery, so that their libcst import overlaps it."""

    def __init__(self, jobs: int) -> None:
        import multiprocessing

        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # pragma: no cover - platforms without fork
            context = multiprocessing.get_context("spawn")
        self.jobs = jobs
        self.pool = context.Pool(processes=jobs, initializer=_warm_worker)

    def close(self) -> None:
        self.pool.terminate()
        self.pool.join()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def run(
    files: list[Path],
    settings: AnalysisSettings,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
    timings: Timings | None = None,
    on_progress: "Callable[[int], None] | None" = None,
    pool: WorkerPool | None = None,
) -> list[FileResult]:
    timings = timings or Timings()
    jobs = jobs or default_jobs()
    started = time.perf_counter()
    results: list[FileResult] = []
    todo: list[str] = []
    if cache is not None:
        for path in files:
            hit = cache.lookup(path)
            if hit is not None:
                results.append(hit)
            else:
                todo.append(str(path))
        timings.cache_hits = len(results)
    else:
        todo = [str(p) for p in files]
    timings.add("cache lookup", time.perf_counter() - started)

    started = time.perf_counter()
    fresh = list(_analyze_all(todo, settings, pool.jobs if pool else jobs, on_progress, cache is not None, pool))
    timings.add("read+triage+analyze", time.perf_counter() - started)
    results.extend(fresh)
    if cache is not None:
        started = time.perf_counter()
        for result in fresh:
            cache.store(result)
        cache.save()
        timings.add("cache save", time.perf_counter() - started)
    timings.files = len(files)
    timings.triaged = sum(1 for r in results if r.triaged_in)
    timings.parsed_lines = sum(r.analysis.parsed_lines for r in results if r.analysis)
    return results


def _analyze_all(
    paths: list[str],
    settings: AnalysisSettings,
    jobs: int,
    on_progress: "Callable[[int], None] | None",
    need_digest: bool,
    pool: WorkerPool | None,
) -> Iterable[FileResult]:
    # Below a few dozen files, starting processes costs more than it saves.
    if jobs <= 1 or len(paths) < 48:
        for path in paths:
            yield _process(path, settings, need_digest)
            if on_progress:
                on_progress(1)
        return
    own = pool is None
    if own:
        # Import libcst once here: forked workers inherit it instead of importing it each.
        import libcst  # noqa: F401

        pool = WorkerPool(jobs)
    assert pool is not None
    chunk = max(8, min(64, len(paths) // (pool.jobs * 8) or 8))
    chunks = [(paths[i : i + chunk], settings, need_digest) for i in range(0, len(paths), chunk)]
    try:
        for batch in pool.pool.imap_unordered(_process_chunk, chunks):
            for item in batch:
                yield _expand(item)
            if on_progress:
                on_progress(len(batch))
    finally:
        if own:
            pool.close()

