"""The check itself: files → runner (read → triage → lint) → diagnostics → (fix) → results.

The CLI (through ``app.check``) and the tests go through ``run_check`` / ``check_stdin``; only
printing is left to the caller.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pinlint import catalog, noqa, runner, source
from pinlint.app import foreign_findings
from pinlint.app.diagnostic_cache import KeptDiagnostics
from pinlint.app.options import CheckOptions, analysis_settings, cache_dir, uses_cache
from pinlint.app.parallel_diagnostics import premade_diagnostics
from pinlint.app.run_result import CheckRun
from pinlint.app.syntax_findings import compile_error_diagnostic, syntax_error, unparsable
from pinlint.config import Config
from pinlint.core.diagnostics import Applicability, Diagnostic, Edit, Fix
from pinlint.core.paths import display_path
from pinlint.core.results import AnalysisSettings, FileAnalysis, FileResult, Finding, FixPlan
from pinlint.core.text import digest
from pinlint.fix.project import Known, Project, find_root, scan

if TYPE_CHECKING:
    from pinlint.fix.helper import FileContext, HelperChoice, HelperResolver

# Completing and applying fixes (pinlint.fix.helper, .loop, ...), and the analysis itself
# (pinlint.lint), are imported where they are used: a warm run whose files all come from the
# cache needs none of them, and their import is a noticeable part of its time.


class DiagnosticBuilder:
    """Findings → Diagnostics: selection, per-file ignores, noqa, and fixes with a real helper."""

    def __init__(self, config: Config, options: CheckOptions, project: Project | Callable[[], Project]) -> None:
        self.config = config
        self.options = options
        self._project = project
        self._resolver: HelperResolver | None = None
        self._line_length: int | None = None
        self.docs = {rule.code: rule for rule in catalog.all_rules()}

    @property
    def project(self) -> Project:
        """Learnt on first use: a run without a fix to complete never walks the project."""
        if callable(self._project):
            self._project = self._project()
        return self._project

    @property
    def resolver(self) -> HelperResolver:
        from pinlint.fix.helper import ConfiguredHelper, HelperResolver

        if self._resolver is None:
            configured = (
                ConfiguredHelper.parse(self.config.pin_memory_helper) if self.config.pin_memory_helper else None
            )
            self._resolver = HelperResolver(self.project, configured)
        return self._resolver

    @property
    def line_length(self) -> int:
        """The project's configured line length (ruff, black, flake8; else 88)."""
        from pinlint.fix.style import line_length

        if self._line_length is None:
            self._line_length = line_length(self.project.root or self.config.root)
        return self._line_length

    def diagnostics(self, path: Path, analysis: FileAnalysis, text: str | None = None) -> list[Diagnostic]:
        """``text`` is the file's text when the caller has it (stdin, the fix loop); otherwise
        the file is read, and only when one of its findings has a fix to complete."""
        if not analysis.findings:
            return []
        ignored = self.config.per_file_ignored(path)
        context: FileContext | None | str = None
        out = []
        for finding in analysis.findings:
            if finding.code not in self.options.selected or finding.code in ignored:
                continue
            if not self.options.ignore_noqa and noqa.suppresses(finding.noqa_codes, finding.code):
                continue
            if finding.fix_plan is not None and finding.fix_plan.needs_helper and context is None:
                context = self._context(path, text)
            out.append(self._diagnostic(path, finding, context))
        return out

    def _context(self, path: Path, text: str | None) -> FileContext | str:
        from pinlint.fix.helper import FileContext

        if text is None:
            try:
                text = source.decode(path.read_bytes()).text
            except (OSError, source.DecodeError) as exc:
                return f"no automatic fix: cannot read the file ({exc})"
        return FileContext.build(path, text, self.project.root)

    def _choice(self, finding: Finding, ctx: FileContext) -> HelperChoice | str:
        from pinlint.fix.scope import byte_column

        plan = finding.fix_plan
        assert plan is not None
        hole = next((e.location for e in plan.edits if e.helper_call), finding.location)
        line = ctx.lines[hole.row - 1] if 0 < hole.row <= len(ctx.lines) else ""
        return self.resolver.resolve(ctx, (hole.row, byte_column(line, hole.column)))

    def _diagnostic(self, path: Path, finding: Finding, context: FileContext | str | None) -> Diagnostic:
        doc = self.docs[finding.code]
        fix: Fix | None = None
        note = finding.fix_note
        plan = finding.fix_plan
        if plan is not None and not plan.needs_helper:
            fix = _planned_fix(plan)  # no helper to resolve: the planned edits are the fix
        elif plan is not None and isinstance(context, str):
            note = context
        elif plan is not None and context is not None:
            choice = self._choice(finding, context)
            if isinstance(choice, str):
                note = choice
            else:
                fix, note = self._fix(plan, choice, context, note)
        return Diagnostic(
            code=finding.code,
            name=doc.name,
            message=finding.message,
            filename=str(path),
            location=finding.location,
            end_location=finding.end_location,
            noqa_row=finding.location.row,
            url=doc.url,
            fix=fix,
            fix_note=note,
            statement_rows=finding.statement_rows,
            sink_rows=finding.sink_rows,
            source_snippet=finding.snippet,
            related=finding.related,
        )

    def _fix(
        self, plan: FixPlan, choice: HelperChoice, ctx: FileContext, note: str | None
    ) -> tuple[Fix | None, str | None]:
        from pinlint.fix.imports import import_edit
        from pinlint.fix.layout import explode_long_calls

        call = choice.render(plan.device_text)
        edits = [Edit(e.content(call), e.location, e.end_location) for e in plan.edits]
        edits = explode_long_calls(ctx.lines, ctx.tree, edits, self.line_length)
        if choice.needs_import is not None:
            edit = import_edit(
                choice.needs_import,
                ctx.text,
                ctx.tree,
                first_party=self.project.first_party,
                line_length=self.line_length,
            )
            if isinstance(edit, str):
                return None, f"no automatic fix: {edit}"
            edits.append(edit)
        applicability = plan.applicability
        reasons = [plan.unsafe_reason] if plan.unsafe_reason else []
        if choice.takes_device is None:
            applicability = min(applicability, Applicability.UNSAFE)
            reasons.append(f"whether `{choice.call_name}` takes the device is not known")
        fix = Fix(
            applicability,
            f"{plan.title}: `pin_memory={call}`",
            tuple(sorted(edits, key=lambda e: (e.location, e.end_location))),
            unsafe_reason="; ".join(reasons) if applicability < Applicability.SAFE else "",
        )
        return fix, note


def _planned_fix(plan: FixPlan) -> Fix:
    """The fix of a plan without a helper hole, as planned."""
    edits = sorted(
        (Edit(e.content(""), e.location, e.end_location) for e in plan.edits),
        key=lambda e: (e.location, e.end_location),
    )
    unsafe_reason = plan.unsafe_reason if plan.applicability < Applicability.SAFE else ""
    return Fix(plan.applicability, plan.title, tuple(edits), unsafe_reason=unsafe_reason)


def run_settings(config: Config, options: CheckOptions, root: Path | None) -> AnalysisSettings:
    """The analysis settings of a run (the result cache's key): module names are computed under
    the project root, so it is one of them."""
    return replace(analysis_settings(config, options.selected), project_root=str(root) if root else None)


def run_check(
    files: list[Path],
    config: Config,
    options: CheckOptions,
    on_progress=None,  # type: ignore[no-untyped-def]
    pool: runner.WorkerPool | None = None,
    requested: list[str] | None = None,
) -> CheckRun:
    """``requested``: the paths the user named (a directory holding the project root means
    every file of the project is in the run)."""
    run = CheckRun()
    root = find_root(config.root, config.path, files)
    settings = run_settings(config, options, root)
    cache = None
    if uses_cache(options):
        from pinlint.cache import Cache

        cache = Cache(cache_dir(config, options), settings)
    results = runner.run(
        files, settings, jobs=options.jobs, cache=cache, timings=run.timings, on_progress=on_progress, pool=pool
    )
    started = time.perf_counter()
    outside: list[FileResult] = []
    if root is not None and not _covers(requested, root):
        # Part of the project: the files outside the run that import from it may report here.
        exclude = [*config.exclude, *config.extend_exclude]
        covered = [os.path.abspath(p) for p in requested or [] if os.path.isdir(p)]
        outside = foreign_findings.importers(
            root, results, settings, exclude, cache, options.jobs, covered, config.respect_gitignore
        )
    received_from = foreign_findings.route(results, outside)
    run.timings.add("other files", time.perf_counter() - started)
    started = time.perf_counter()

    def load_project() -> Project:
        # The workers already read the run's files: their facts are not read again.
        known = {
            os.path.abspath(r.path): (r.size, r.mtime_ns, r.digest, r.analysis.project_facts, r.analysis.module)
            for r in results
            if r.analysis is not None and r.error is None
        }
        project = _project(config, options, root, known)
        if project.root is None:
            # No project around the files: the files of the run that mention the helper teach it.
            for result in results:
                if result.analysis is not None and _mentions_helper(result.analysis):
                    facts = result.analysis.project_facts
                    if facts is not None:
                        project.add(Path(result.path), facts, result.analysis.module)
        return project

    builder = DiagnosticBuilder(config, options, load_project)
    kept = KeptDiagnostics(config, options, settings, builder) if uses_cache(options) else None
    premade = premade_diagnostics(results, config, options, builder, kept, pool)

    def build(result: FileResult) -> list[Diagnostic]:
        assert result.analysis is not None
        made = premade.pop(result.path, None)
        return made if made is not None else builder.diagnostics(Path(result.path), result.analysis)

    for result in sorted(results, key=lambda r: r.path):
        if result.error is not None:
            run.errors.append((result.path, result.error))
            continue
        assert result.analysis is not None
        analysis = result.analysis
        if (
            not analysis.findings
            and analysis.syntax_error is None
            and not analysis.over_budget
            and analysis.skipped is None
        ):
            continue  # most files: nothing to report
        if result.analysis.syntax_error is not None:
            # A finding, not a stderr note: every format carries it and the run is never "clean".
            run.diagnostics.append(syntax_error(Path(result.path), None, result.analysis.syntax_error))
            continue
        _note_budget(run, result.path, result.analysis)
        if kept is not None and result.analysis.findings:
            diagnostics = kept.diagnostics(result, build)
        else:
            diagnostics = build(result)
        rewritten = False
        if (options.fix or options.diff) and any(d.fix for d in diagnostics):
            diagnostics = _fix_file(
                Path(result.path), result, diagnostics, settings, builder, options, run, received_from.get(result.path)
            )
            rewritten = options.fix
        if rewritten and result.analysis.findings:
            diagnostics.extend(unparsable(Path(result.path), None))  # where the error is now
        elif result.analysis.compile_error is not None:
            # Found by the worker: a file with findings is compiled whole, so that a syntax
            # error outside the functions that were parsed is reported too.
            diagnostics.append(compile_error_diagnostic(Path(result.path), result.analysis.compile_error))
        run.diagnostics.extend(diagnostics)
    if kept is not None:
        kept.save()
    run.diagnostics.sort(key=lambda d: d.sort_key())
    _apply_profile(run, config, options)
    run.timings.add("report", time.perf_counter() - started)
    return run


def _apply_profile(run: CheckRun, config: Config, options: CheckOptions) -> None:
    """Counts from the runtime profile on each finding, hottest first; ``min_runs`` filters.
    After fixing: fixes are not limited to hot sites (a fix moves the lines a profile names)."""
    if options.profile is None:
        return
    from pinlint.profile_findings import annotate

    run.diagnostics, run.profile_dropped = annotate(run.diagnostics, options.profile, config.root, options.min_runs)


def _note_budget(run: CheckRun, path: str, analysis: FileAnalysis) -> None:
    if analysis.skipped is not None:
        run.skipped.append((path, analysis.skipped))
    for row, name, why in analysis.over_budget:
        where = f"line {row}: " if row else ""
        run.over_budget.append((path, f"{where}`{name}` not analysed ({why}); no findings reported there"))


def _relinter(  # type: ignore[no-untyped-def]
    path: Path, settings: AnalysisSettings, builder: DiagnosticBuilder, sources: list[str] | None = None
):
    """The fix loop's re-lint: the same analysis and selection as the first lint (and, for a
    file other files report into, those files' analyses of the candidate text)."""

    def relint(text: str) -> tuple[list[Diagnostic] | None, str | None]:
        from pinlint import lint

        analysis = lint.analyze_text(text, settings, newline=source.detect_newline(text), path=str(path))
        if analysis.syntax_error is not None:
            return None, analysis.syntax_error[2]
        if sources:
            analysis = foreign_findings.received(analysis, path, text, sources, settings)
        return builder.diagnostics(path, analysis, text), None

    return relint


def _fix(
    text: str,
    path: Path,
    diagnostics: list[Diagnostic],
    settings: AnalysisSettings,
    builder: DiagnosticBuilder,
    options: CheckOptions,
    run: CheckRun,
    sources: list[str] | None = None,
) -> tuple[str, list[Diagnostic], list[Diagnostic]]:
    from pinlint.fix.loop import fix_text

    outcome = fix_text(text, diagnostics, options.unsafe_fixes, _relinter(path, settings, builder, sources))
    run.dropped.extend(outcome.dropped)
    return outcome.text, outcome.remaining, outcome.applied


def _fix_file(
    path: Path,
    result: FileResult,
    diagnostics: list[Diagnostic],
    settings: AnalysisSettings,
    builder: DiagnosticBuilder,
    options: CheckOptions,
    run: CheckRun,
    sources: list[str] | None = None,
) -> list[Diagnostic]:
    from pinlint.fix.apply import unified_diff
    from pinlint.fix.write import ChangedOnDisk, atomic_write

    try:
        data = path.read_bytes()
        decoded = source.decode(data)
    except (OSError, source.DecodeError) as exc:
        run.errors.append((str(path), f"cannot fix: {exc}"))
        return diagnostics
    if digest(data) != result.digest:
        run.errors.append((str(path), "changed on disk since it was checked; not fixed"))
        return diagnostics
    new_text, remaining, applied = _fix(decoded.text, path, diagnostics, settings, builder, options, run, sources)
    if not applied:
        return remaining
    display = _display(path)
    if options.diff:
        run.diffs[str(path)] = unified_diff(decoded.text, new_text, display)
        run.fixed.extend(applied)
        return remaining
    try:
        atomic_write(path, source.encode(new_text, decoded), digest(data))
    except (ChangedOnDisk, OSError) as exc:
        run.errors.append((str(path), f"not fixed: {exc}"))
        return diagnostics
    run.fixed.extend(applied)
    return remaining


def check_stdin(text: str, filename: Path, config: Config, options: CheckOptions) -> CheckRun:
    from pinlint.fix.apply import unified_diff

    run = CheckRun()
    root = find_root(config.root, config.path, [filename])
    settings = run_settings(config, options, root)
    data = text.encode("utf-8")
    result = runner.analyze_bytes(str(filename), data, settings)
    run.stdin_output = text
    if result.error is not None or result.analysis is None:
        run.errors.append((str(filename), result.error or "cannot analyze"))
        return run
    if result.analysis.syntax_error is not None:
        run.diagnostics.append(syntax_error(filename, text, result.analysis.syntax_error))
        return run
    sources: list[str] = []
    if root is not None and filename.name != "-":  # stdin without --stdin-filename is no project file
        # What the project's files that import this one find in it (this text, not the disk's).
        exclude = [*config.exclude, *config.extend_exclude]
        sources = foreign_findings.importer_paths(root, filename, text, exclude, config.respect_gitignore)
        if sources:
            result.analysis = foreign_findings.received(result.analysis, filename, text, sources, settings)
    _note_budget(run, str(filename), result.analysis)
    builder = DiagnosticBuilder(
        config, options, lambda: _project(config, options, find_root(config.root, config.path, [filename]))
    )
    diagnostics = builder.diagnostics(filename, result.analysis, text)
    if (options.fix or options.diff) and any(d.fix for d in diagnostics):
        new_text, diagnostics, applied = _fix(text, filename, diagnostics, settings, builder, options, run, sources)
        run.fixed.extend(applied)
        if options.diff and applied:
            run.diffs[str(filename)] = unified_diff(text, new_text, _display(filename))
        run.stdin_output = new_text
    if result.analysis.findings:
        diagnostics.extend(unparsable(filename, text))
    run.diagnostics = sorted(diagnostics, key=lambda d: d.sort_key())
    _apply_profile(run, config, options)
    return run


def _project(
    config: Config,
    options: CheckOptions,
    root: Path | None,
    known: dict[str, Known] | None = None,
) -> Project:
    """The project's pin-memory idiom, from every file under the project root (not only the
    files of the run: one file, stdin and pre-commit's staged files get the same fixes)."""
    facts_dir = cache_dir(config, options) if options.use_cache else None
    return scan(root, cache_dir=facts_dir, exclude=[*config.exclude, *config.extend_exclude], known=known)


def _covers(requested: list[str] | None, root: Path) -> bool:
    """Every file that could import a file of the run is in the run: a path named is a directory
    holding the project root, or every path named is a directory that is no package (imports of
    the files below one resolve from inside it, so their importers are below it too)."""
    if not requested:
        return False
    for raw in requested:
        path = os.path.abspath(raw)
        if os.path.isdir(path) and (str(root) == path or str(root).startswith(path.rstrip(os.sep) + os.sep)):
            return True
    return all(os.path.isdir(raw) and not os.path.isfile(os.path.join(raw, "__init__.py")) for raw in requested)


def _mentions_helper(analysis: FileAnalysis) -> bool:
    facts = analysis.facts
    return bool(
        facts.bindings
        or facts.defines_helper
        or facts.attribute_calls
        or facts.calls_with_args
        or facts.calls_without_args
    )


def _display(path: Path) -> str:
    """The diff header's name: the real file's (a patch applies to the link's target)."""
    return display_path(path.resolve(), Path.cwd())
