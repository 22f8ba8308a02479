"""Findings one file's analysis made in another file: a helper imported from ``helpers.py``
builds the tensor that ``serve.py`` copies, so the finding is ``helpers.py``'s (where the fix
goes). The run hands each to its file, whichever worker found it.

A file of the run receives them also from project files outside the run (``pinlint check
helpers.py``, pre-commit's staged files): those importers are analysed too (through the result
cache), so that a one-file run reports what a whole-project run reports for that file.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pinlint.core.results import AnalysisSettings, FileAnalysis, FileResult, Finding, ForeignFinding
from pinlint.safeio import MAX_SOURCE_BYTES, read_regular

if TYPE_CHECKING:
    from pinlint.cache import Cache


def route(results: list[FileResult], outside: list[FileResult] = ()) -> dict[str, list[str]]:  # type: ignore[assignment]
    """Give the foreign findings (of ``results`` and of ``outside``, files not in the run) to
    their files, replacing those results; returns, for each file that received some, the files
    whose analyses found them."""
    finders = sorted(
        (r for r in [*results, *outside] if r.analysis is not None and r.analysis.foreign), key=lambda r: r.path
    )
    if not finders:
        return {}
    wanted = {f.path for r in finders for f in r.analysis.foreign}  # type: ignore[union-attr]
    names = tuple({os.path.basename(p) for p in wanted})
    by_path: dict[str, int] = {}
    for i, result in enumerate(results):
        # The name's end first (a string test): most files of a run receive nothing.
        if result.path.endswith(names) and result.analysis is not None and result.error is None:
            by_path[os.path.abspath(result.path)] = i
    incoming: dict[int, list[ForeignFinding]] = {}
    sources: dict[int, list[str]] = {}
    for result in finders:
        assert result.analysis is not None
        for foreign in result.analysis.foreign:
            index = by_path.get(foreign.path)
            if index is None:
                continue  # a file outside the run: not reported
            target = results[index]
            if target.digest and target.digest != foreign.digest:
                continue  # it changed between the two reads: the next run sees it right
            incoming.setdefault(index, []).append(foreign)
            sources.setdefault(index, [])
            if result.path not in sources[index]:
                sources[index].append(result.path)
    out: dict[str, list[str]] = {}
    for index, foreigns in incoming.items():
        target = results[index]
        assert target.analysis is not None
        own = {(f.code, f.location) for f in target.analysis.findings}
        added: list[Finding] = []
        for foreign in foreigns:
            key = (foreign.finding.code, foreign.finding.location)
            if key not in own:  # one finding per construction, whichever copy reached it
                own.add(key)
                added.append(foreign.finding)
        if not added:
            continue
        compile_error = target.analysis.compile_error
        if not target.analysis.findings and compile_error is None:
            # Its own analysis found nothing, so it was not compiled whole: a file with findings
            # reports a syntax error anywhere in it beside them.
            compile_error = _compile_error(target.path)
        analysis = replace(
            target.analysis,
            findings=[*target.analysis.findings, *added],
            received=target.analysis.received + len(added),
            compile_error=compile_error,
        )
        results[index] = replace(target, analysis=analysis, digest=target.digest or foreigns[0].digest)
        out[target.path] = sources[index]
    return out


def _compile_error(path: str) -> tuple[int, int, int, int, str] | None:
    from pinlint import source
    from pinlint.core.syntax import checked

    try:
        decoded = source.decode(read_regular(path, MAX_SOURCE_BYTES))
    except (OSError, source.DecodeError):
        return None  # unreadable now: the next run reports it
    return checked(decoded.text, path)[1]


def importers(
    root: Path,
    results: list[FileResult],
    settings: AnalysisSettings,
    exclude: list[str],
    cache: Cache | None,
    jobs: int | None,
    covered: list[str] = (),  # type: ignore[assignment]
    respect_gitignore: bool = True,
) -> list[FileResult]:
    """The results of the project files outside the run that report into a file of the run
    (cached ones from the result cache; the others analysed now). Only files that mention a
    function of a run file, and ``non_blocking`` or torch (a caller the second triage may keep), are
    analysed: no other file can. ``covered``:
    directories the run holds whole (their files are not looked for again)."""
    from pinlint import runner
    from pinlint.analysis.source_tokens import may_build_tensors

    run_paths = {os.path.abspath(r.path) for r in results}
    readable = [r for r in results if r.error is None and r.analysis is not None]
    others = _project_files(root, [r.path for r in readable], run_paths, exclude, covered, respect_gitignore)
    if not others:
        return []  # the run holds every file that could import its files
    # Read again here (only a run on part of the project asks): which files of the run may build
    # a host tensor another file's copy receives, and the names they define.
    texts = [_read(r.path) for r in readable]
    mention = _mention(set().union(*(_functions(data) for data in texts if may_build_tensors(data))))
    if mention is None:
        return []
    found: list[FileResult] = []
    todo: list[Path] = []
    for path in others:
        reports = cache.reports_elsewhere(path) if cache is not None else None
        if reports is not None:
            hit = cache.lookup(Path(path)) if reports and cache is not None else None
            if hit is not None and hit.analysis is not None and hit.analysis.foreign:
                found.append(hit)
            if not reports or hit is not None:
                continue
        try:
            data = read_regular(path, MAX_SOURCE_BYTES)
        except OSError:
            continue
        if _may_report(data, mention):
            todo.append(Path(path))
    if todo:
        fresh = runner.run(todo, settings, jobs=jobs, cache=cache)
        found.extend(r for r in fresh if r.analysis is not None and r.analysis.foreign)
    return found


def importer_paths(root: Path, path: Path, text: str, exclude: list[str], respect_gitignore: bool = True) -> list[str]:
    """The project files that may report into ``path`` when its content is ``text`` (stdin with
    ``--stdin-filename``, whose buffer may differ from the file on disk)."""
    from pinlint.analysis.source_tokens import may_build_tensors

    data = text.encode("utf-8")
    if not may_build_tensors(data):
        return []
    mention = _mention(_functions(data))
    if mention is None:
        return []
    found = []
    for other in _project_files(
        root, [str(path)], {os.path.abspath(path)}, exclude, respect_gitignore=respect_gitignore
    ):
        if _may_report(_read(other), mention):
            found.append(other)
    return found


def _project_files(
    root: Path,
    targets: list[str],
    run_paths: set[str],
    exclude: list[str],
    covered: list[str] = (),  # type: ignore[assignment]
    respect_gitignore: bool = True,
) -> list[str]:
    """The ``.py`` files outside the run that a run on the whole project would check with this
    root (the same exclusions and ``.gitignore`` rules; not below a nested configuration, whose
    files are checked as a project of their own), and that can import the targets (bounded)."""
    from pinlint.analysis.test_files import in_test_directory, is_test_name
    from pinlint.config import config_here
    from pinlint.discovery import discover
    from pinlint.fix.project import _MAX_FILES

    # Below a directory the run holds whole that is no package, a file's imports resolve from
    # inside it: their importers are in the run. (Below a package they may resolve from above.)
    whole = [c for c in covered if not os.path.isfile(os.path.join(c, "__init__.py"))]
    if whole:
        # As the run spells its paths (relative to where it runs, or absolute): a string test.
        spelled = {os.path.normpath(w) for w in whole} | {os.path.relpath(w) for w in whole}
        prefixes = tuple(s.rstrip(os.sep) + os.sep for s in spelled if s != ".")
        targets = [t for t in targets if not t.startswith(prefixes)] if prefixes else targets
        if not targets:
            return []
    # An import of a namespace directory (no `__init__.py`) resolves from the project root, so
    # importers may be anywhere in it: the whole project is looked through, as a whole run does.
    found = discover(
        [str(root)], root=root, exclude=exclude, respect_gitignore=respect_gitignore, force_exclude=False, project=root
    )
    nested: dict[str, bool] = {}

    def own_project(directory: str) -> bool:
        """``directory`` (below the root) or one above it holds another configuration."""
        if directory in nested:
            return nested[directory]
        if directory == str(root) or not directory.startswith(str(root)):
            answer = False
        else:
            answer = config_here(Path(directory)) is not None or own_project(os.path.dirname(directory))
        nested[directory] = answer
        return answer

    covered_prefixes = tuple(c.rstrip(os.sep) + os.sep for c in covered)
    root_text = str(root)
    # Whether a directory's files are out (tests, or another project's), once per directory: a
    # one-file run asks it of every file of the project (the walk's paths are absolute).
    skipped: dict[str, bool] = {}
    others: list[str] = []
    for path in found.texts:
        if path in run_paths or (covered_prefixes and path.startswith(covered_prefixes)):
            continue  # in the run already
        directory, _, name = path.rpartition(os.sep)
        if is_test_name(name):
            continue  # a test reports only into itself (see test_files)
        skip = skipped.get(directory)
        if skip is None:
            # A test directory, or one checked with its own configuration and root by a whole run.
            skip = skipped[directory] = in_test_directory(directory, root_text) or own_project(directory)
        if skip:
            continue
        others.append(path)
        if len(others) > _MAX_FILES:
            break  # a bound: a huge tree is not read whole for one file
    return others


def _mention(functions: set[str]) -> re.Pattern[bytes] | None:
    """A file calling one of ``functions`` spells its name (``f(``, ``mod.f(``, ``import f as g``)."""
    if not functions:
        return None
    return re.compile(rb"\b(?:" + b"|".join(re.escape(s.encode()) for s in sorted(functions)) + rb")\b")


def _may_report(data: bytes, mention: re.Pattern[bytes]) -> bool:
    """A file that may report into the targets: it names one of them, and copies non_blocking or
    may hand a tensor to a copy one of them makes (the second triage decides, as in a whole run)."""
    return (b"non_blocking" in data or (b"torch" in data and b"import" in data)) and mention.search(data) is not None


def _read(path: str) -> bytes:
    try:
        return read_regular(path, MAX_SOURCE_BYTES)
    except OSError:
        return b""


_TOP_LEVEL_DEF = re.compile(rb"^(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)", re.M)


def _functions(data: bytes) -> set[str]:
    """The module-level functions and classes of a file (what another file can import and call)."""
    return {m.decode("ascii", "replace") for m in _TOP_LEVEL_DEF.findall(data)}


def received(
    analysis: FileAnalysis, path: Path, text: str, sources: list[str], settings: AnalysisSettings
) -> FileAnalysis:
    """``analysis`` of ``path``'s candidate ``text`` (the fix loop's), with the findings the
    ``sources``' analyses make in that text."""
    from pinlint import lint, source

    target = os.path.abspath(path)
    findings = list(analysis.findings)
    seen = {(f.code, f.location) for f in findings}
    added = 0
    for other in sources:
        try:
            decoded = source.decode(read_regular(other, MAX_SOURCE_BYTES))
        except (OSError, source.DecodeError):
            continue
        found = lint.analyze_text(decoded.text, settings, newline=decoded.newline, path=other, overlay={target: text})
        for foreign in found.foreign:
            key = (foreign.finding.code, foreign.finding.location)
            if foreign.path == target and key not in seen:
                seen.add(key)
                findings.append(foreign.finding)
                added += 1
    return replace(analysis, findings=findings, received=added) if added else analysis
