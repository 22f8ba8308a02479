"""Run the per-file pipeline (read → triage → lint) over many files, in parallel, with a cache.

Workers read files themselves so that reading, too, uses every core; they return small picklable
results. Configuration is resolved once in the parent and handed to workers as one small object.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pinlint import source
from pinlint.core.results import EMPTY, AnalysisSettings, FileAnalysis, FileResult, Timings
from pinlint.core.syntax import checked
from pinlint.core.text import digest
from pinlint.safeio import MAX_SOURCE_BYTES, UnsafeFile, nonblocking_opener, read_fd

if TYPE_CHECKING:
    from pinlint.cache import Cache

T = TypeVar("T")


def analyze_bytes(path: str, data: bytes, settings: AnalysisSettings, need_digest: bool = True) -> FileResult:
    from pinlint import lint  # here, not at the top: a run served by the cache never needs it

    rules = lint.rule_set(settings)
    wants_helper = lint.teaches_helper(data)
    teaches_idiom = lint.mentions_idiom(data)
    triggered = lint.file_triggered(data, rules)
    # Not triggered, but it may hand a tensor to a copy an imported project function makes.
    may_call = not triggered and lint.may_call_copiers(data, rules, settings)
    # The digest keys the cache and guards fixes; a no-cache run needs it only where it may fix.
    result = FileResult(
        path=path, analysis=None, size=len(data), digest=digest(data) if need_digest or triggered else ""
    )
    if not triggered and not may_call and not wants_helper and not teaches_idiom:
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
    # The modules the second triage read: its answer holds while they are unchanged.
    read: dict[str, str] = {}
    if may_call:
        triggered, read = lint.calls_copiers(decoded.text, path, settings)
        if triggered and not result.digest:
            result.digest = digest(data)
    result.triaged_in = triggered
    if triggered:
        try:
            result.analysis = lint.analyze_text(decoded.text, settings, newline=decoded.newline, path=path)
        except RecursionError:
            result.error = "too deeply nested to analyze (recursion limit)"
        except Exception as exc:  # a bug on one file's code: that file is not checked, the run goes on
            if os.environ.get("PINLINT_DEBUG"):
                raise
            result.error = (
                f"not analyzed: a pinlint bug stopped its analysis ({type(exc).__name__}: {exc}); "
                "please report it (PINLINT_DEBUG=1 shows the traceback)"
            )
    elif wants_helper:
        # Not a candidate, but it may teach us the project's pin-memory helper.
        result.analysis = lint.file_facts(decoded.text, decoded.newline)
    else:
        result.analysis = EMPTY
    result.triage_reads = sorted(read.items())
    tree = None
    if result.analysis is not None and result.analysis.findings:
        # Only the functions that could hold a finding were parsed: a file with findings is
        # compiled whole, so that a syntax error elsewhere in it is reported too.
        tree, result.analysis.compile_error = checked(decoded.text, path)
    if teaches_idiom and result.analysis is not None:
        result.analysis = lint.with_project_facts(result.analysis, decoded.text, path, settings.project_root, tree)
    return result


#: The flow analysis recurses once per nested expression: a long flat `a + b + ...` chain that
#: CPython compiles fine needs more than Python's default 1000 frames. (Python 3.11+ frames use
#: no C stack for Python-to-Python calls, so this is safe.)
_RECURSION_LIMIT = 12_000 if sys.version_info >= (3, 11) else 4_000


def _read(path: str) -> tuple[bytes, int] | FileResult:
    """The file's bytes and mtime, or the error result. Bounded, regular files only: a named
    FIFO or a link to /dev/zero is an error for that file, not a hang or a memory blow-up."""
    try:
        with open(path, "rb", opener=nonblocking_opener) as fh:
            data = read_fd(fh.fileno(), path, MAX_SOURCE_BYTES)
            return data, os.fstat(fh.fileno()).st_mtime_ns
    except UnsafeFile as exc:
        return FileResult(path=path, analysis=None, error=f"cannot read: {str(exc).removeprefix(path + ': ')}")
    except OSError as exc:
        return FileResult(path=path, analysis=None, error=f"cannot read: {exc.strerror or exc}")


def _process(
    path: str, settings: AnalysisSettings, need_digest: bool = True, read: tuple[bytes, int] | None = None
) -> FileResult:
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    got = read or _read(path)
    if isinstance(got, FileResult):
        return got
    data, mtime_ns = got
    result = analyze_bytes(path, data, settings, need_digest)
    result.mtime_ns = mtime_ns
    return result


#: Characters that chain an expression (``a.b.c``, ``y and y and ...``, ``- - y``): libcst's native
#: parser recurses once per link and overflows the C stack (a segfault) at a few thousand.
_CHAIN_TOKENS = (b".", b" and ", b" or ", b"not ", b"lambda", b" if ", b"-", b"+", b"~", b"*")
_CHAIN_SUSPECT = 3000


def _may_crash_parser(data: bytes) -> bool:
    """Cheap over-approximation (byte counts): could this file hold a chain deep enough to
    crash the native parser? Such files are analyzed in a child process."""
    total = 0
    for token in _CHAIN_TOKENS:
        total += data.count(token)
        if total > _CHAIN_SUSPECT:
            return True
    return False


def _crashed(path: str, detail: str) -> FileResult:
    return FileResult(path=path, analysis=None, error=f"crashed the parser ({detail}); not analyzed")


class ChildCrashed(Exception):
    """The child process running the call died (a native crash)."""


def call_isolated(result_type: object, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``fn(*args, **kwargs)`` in a forked single-use child; ChildCrashed if the child dies.

    A bare fork, not multiprocessing (flake8 runs plugins in daemonic pool workers, which may
    not have multiprocessing children); the result comes back as plain JSON (datacodec).
    """
    import gc
    import json

    from pinlint import datacodec

    if not hasattr(os, "fork"):  # pragma: no cover - Windows: no isolation, as before
        return fn(*args, **kwargs)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        # No cyclic GC in the child: a collection walks every object inherited from the parent,
        # and each page it touches is copied (copy-on-write). That cost about as much as the
        # analysis of the file itself; the child lives for one file, so its garbage is bounded.
        gc.disable()
        status = 70
        try:
            os.close(read_end)
            payload = json.dumps(datacodec.encode(fn(*args, **kwargs))).encode()
            with os.fdopen(write_end, "wb") as fh:
                fh.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        payload = fh.read()
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise ChildCrashed(f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exit status")
    return datacodec.decode(result_type, json.loads(payload))  # type: ignore[no-any-return]


def may_crash_parser(data: bytes) -> bool:
    return _may_crash_parser(data)


def _process_isolated(path: str, settings: AnalysisSettings, need_digest: bool) -> FileResult:
    """``_process`` in a single-use child: a native crash costs that file, not the run."""
    try:
        return call_isolated(FileResult, _process, path, settings, need_digest)
    except ChildCrashed as exc:
        return _crashed(path, str(exc) or "the child process died")


def _process_guarded(path: str, settings: AnalysisSettings, need_digest: bool) -> FileResult:
    """In-process ``_process``, moving the rare parser-crash suspects into a child (only files
    that libcst will parse: the others are read by text scans and CPython's own parser)."""
    from pinlint import lint

    got = _read(path)
    if isinstance(got, FileResult):
        return got
    rules = lint.rule_set(settings)
    data = got[0]
    triggered = lint.file_triggered(data, rules)
    if (triggered or lint.may_call_copiers(data, rules, settings)) and _may_crash_parser(data):
        # Parsed only if a triage keeps it (the second one asked here only of the rare suspects).
        if triggered or _calls_copiers(data, path, settings):
            return _process_isolated(path, settings, need_digest)
    return _process(path, settings, need_digest, got)


def _calls_copiers(data: bytes, path: str, settings: AnalysisSettings) -> bool:
    from pinlint import lint

    try:
        text = source.decode(data).text
    except source.DecodeError:
        return False
    return lint.calls_copiers(text, path, settings)[0]


#: path, size, mtime_ns, digest, triage reads.
Compact = tuple[str, int, int, str, list[tuple[str, str]]]


def _process_chunk(args: tuple[list[str], AnalysisSettings, bool]) -> list[FileResult | Compact]:
    """Results of a worker; files with nothing in them travel back as small tuples (cheaper
    to pickle than dataclasses: they are 97% of a real code base)."""
    paths, settings, need_digest = args
    out: list[FileResult | Compact] = []
    for path in paths:
        result = _process(path, settings, need_digest)
        if result.analysis is EMPTY and result.error is None:
            out.append((result.path, result.size, result.mtime_ns, result.digest, result.triage_reads))
        else:
            out.append(result)
    return out


def _expand(item: FileResult | Compact) -> FileResult:
    if isinstance(item, FileResult):
        return item
    path, size, mtime_ns, file_digest, reads = item
    return FileResult(path=path, analysis=EMPTY, size=size, mtime_ns=mtime_ns, digest=file_digest, triage_reads=reads)


def _exit_with_parent() -> None:
    """Executor workers hold the parent's pipes and their own queue's write end: if the parent is
    killed (SIGKILL, OOM), nothing tells them. Leave within a fraction of a second instead."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="pinlint-parent-watch", daemon=True).start()


def _warm_worker() -> None:
    """Worker start-up, while the parent is still discovering files: import the analysis and
    libcst here (the parent imports neither unless it analyses a file itself)."""
    _exit_with_parent()
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    import libcst  # noqa: F401

    from pinlint import lint  # noqa: F401


def _mp_context():  # type: ignore[no-untyped-def]
    import multiprocessing

    try:
        return multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return multiprocessing.get_context("spawn")


class WorkerPool:
    """Worker processes started before discovery, so that their libcst import overlaps it.

    A ``ProcessPoolExecutor``, not ``multiprocessing.Pool``: when a worker dies (libcst's native
    parser can segfault on valid Python) the executor raises ``BrokenProcessPool`` instead of
    waiting forever for the lost task.
    """

    def __init__(self, jobs: int) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self.jobs = jobs
        self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_mp_context(), initializer=_warm_worker)
        # Start the workers now (the executor starts them lazily), while discovery runs.
        for _ in range(jobs):
            self.pool.submit(int)

    def close(self) -> None:
        # Like Pool.terminate(): the results are in (or no longer wanted); do not wait for idle
        # workers to notice the shutdown.
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        # With the workers gone nobody reads the task queue: its feeder thread must not wait to
        # flush it at exit (Python < 3.12 joins it and can hang there).
        call_queue = getattr(self.pool, "_call_queue", None)
        if call_queue is not None:
            call_queue.cancel_join_thread()
        manager = getattr(self.pool, "_executor_manager_thread", None)  # (shutdown forgets it)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        if manager is not None:
            # The executor's thread closes its wake-up pipe as it ends; Python < 3.12 still
            # writes to that pipe at exit and prints an ignored "Bad file descriptor" error.
            # Once the thread is gone, nothing is left to wake.
            manager.join(timeout=5)
            if not manager.is_alive():
                from concurrent.futures import process as futures_process

                getattr(futures_process, "_threads_wakeups", {}).pop(manager, None)


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
    on_progress: Callable[[int], None] | None = None,
    pool: WorkerPool | None = None,
) -> list[FileResult]:
    timings = timings or Timings()
    jobs = jobs or default_jobs()
    started = time.perf_counter()
    # Files may have been created or removed since an earlier run in this process (not imported
    # yet: nothing to forget, and a run the cache serves never imports it).
    caller_triage = sys.modules.get("pinlint.analysis.caller_triage")
    if caller_triage is not None:
        caller_triage.forget()
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
    on_progress: Callable[[int], None] | None,
    need_digest: bool,
    pool: WorkerPool | None,
) -> Iterable[FileResult]:
    # Below a few dozen files, starting processes costs more than it saves.
    if jobs <= 1 or len(paths) < 48:
        for path in paths:
            yield _process_guarded(path, settings, need_digest)
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
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    try:
        futures = {pool.pool.submit(_process_chunk, c): c[0] for c in chunks}
        lost: list[str] = []
        for future in as_completed(futures):
            try:
                batch = future.result()
            except BrokenProcessPool:
                lost.extend(futures[future])  # a worker died: every unfinished chunk is lost
                continue
            for item in batch:
                yield _expand(item)
            if on_progress:
                on_progress(len(batch))
        if lost:
            yield from _redo(lost, settings, need_digest, on_progress)
    finally:
        if own:
            pool.close()


def _redo(
    paths: list[str], settings: AnalysisSettings, need_digest: bool, on_progress: Callable[[int], None] | None
) -> Iterable[FileResult]:
    """The files a dead worker took with it: the crash suspects one per child (so that only the
    file that crashes is lost), the others in a fresh pool (one per child if that dies too)."""
    from concurrent.futures.process import BrokenProcessPool

    suspects, others = [], []
    for path in paths:
        got = _read(path)
        (suspects if not isinstance(got, FileResult) and _may_crash_parser(got[0]) else others).append(path)
    isolate = suspects
    yielded: set[str] = set()
    if others:
        retry = WorkerPool(min(default_jobs(), max(1, len(others) // 8)))
        try:
            for batch in retry.pool.map(_process_chunk, [([p], settings, need_digest) for p in others]):
                for item in batch:
                    result = _expand(item)
                    yielded.add(result.path)
                    yield result
                if on_progress:
                    on_progress(len(batch))
        except BrokenProcessPool:
            isolate = [p for p in paths if p not in yielded]  # the guess was wrong
        finally:
            retry.close()
    for path in isolate:
        yield _process_isolated(path, settings, need_digest)
        if on_progress:
            on_progress(1)
