"""The whole check: find files → read → triage → analyze → diagnostics → (fix) → results.

The CLI, the flake8 plugin and the tests all go through ``run_check``; only printing is left
to the caller.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from . import catalog, engine, noqa, source
from .analysis.analyzer import HELPER_CALL, FileAnalysis, Finding, analyze_text
from .config import Config
from .diagnostics import Diagnostic, Edit, Fix, Location
from .fix.apply import apply_edits, parses, select_fixes, unified_diff
from .fix.helper import ConfiguredHelper, HelperChoice, ProjectHelpers, resolve
from .fix.write import ChangedOnDisk, atomic_write, digest


@dataclass
class CheckOptions:
    selected: set[str]
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    ignore_noqa: bool = False
    jobs: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


@dataclass
class CheckRun:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    dropped: list[tuple[Diagnostic, str]] = field(default_factory=list)
    #: (path, message): files that could not be checked or written.
    errors: list[tuple[str, str]] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    #: For stdin: the (possibly fixed) source.
    stdin_output: str | None = None
    files_checked: int = 0
    timings: engine.Timings = field(default_factory=engine.Timings)


def uses_cache(options: CheckOptions) -> bool:
    return options.use_cache and not (options.fix or options.diff)


def cache_dir(config: Config, options: CheckOptions) -> Path:
    return options.cache_dir or config.cache_dir or (config.root / ".pinlint_cache")


def analysis_settings(config: Config, selected: set[str]) -> engine.AnalysisSettings:
    return engine.AnalysisSettings(
        device_rule="PIN003" in selected,
        pinned_functions=tuple(sorted(config.pinned_functions)),
        host_functions=tuple(sorted(config.host_functions)),
    )


class Materializer:
    """Findings → Diagnostics: selection, per-file ignores, noqa, and fixes with a real helper."""

    def __init__(self, config: Config, options: CheckOptions, project: ProjectHelpers) -> None:
        self.config = config
        self.options = options
        self.project = project
        self.rules = {rule.code: rule for rule in catalog.all_rules()}

    def diagnostics(self, path: Path, analysis: FileAnalysis) -> list[Diagnostic]:
        if not analysis.findings:
            return []
        ignored = self.config.per_file_ignored(path)
        choice: HelperChoice | str | None = None
        out = []
        for finding in analysis.findings:
            if finding.code not in self.options.selected or finding.code in ignored:
                continue
            if not self.options.ignore_noqa and noqa.suppresses(finding.noqa_codes, finding.code):
                continue
            if finding.fix_plan is not None and choice is None:
                choice = resolve(analysis.facts, self.project, path)
            out.append(self._diagnostic(path, finding, analysis, choice))
        return out

    def _diagnostic(self, path: Path, finding: Finding, analysis: FileAnalysis, choice: HelperChoice | str | None) -> Diagnostic:
        rule = self.rules[finding.code]
        fix: Fix | None = None
        note = finding.fix_note
        plan = finding.fix_plan
        if plan is not None and isinstance(choice, HelperChoice):
            if choice.takes_device is False:
                call = f"{choice.call_name}()"
            else:
                # `.cuda()` without a device copies to the current CUDA device.
                device_arg = plan.device_text if plan.device_text is not None else '"cuda"'
                call = f"{choice.call_name}({device_arg})"
            edits = [Edit(e.content.replace(HELPER_CALL, call), e.location, e.end_location) for e in plan.edits]
            anchor = analysis.facts.import_anchor(choice.import_line.split()[1]) if choice.import_line else None
            if choice.import_line is not None and anchor is not None:
                row = anchor + 2
                edits.append(Edit(choice.import_line + analysis.facts.newline, Location(row, 1), Location(row, 1)))
            applicability = plan.applicability
            if choice.takes_device is None:
                applicability = "unsafe"  # we do not know whether the helper takes the device
            title = plan.title if finding.code == "PIN003" else "Allocate in pinned memory"
            fix = Fix(applicability, f"{title}: `pin_memory={call}`", tuple(sorted(edits, key=lambda e: (e.location, e.end_location))))
        elif plan is not None and isinstance(choice, str):
            note = choice
        return Diagnostic(
            code=finding.code,
            name=rule.name,
            message=finding.message,
            filename=str(path),
            location=finding.location,
            end_location=finding.end_location,
            noqa_row=finding.location.row,
            url=rule.url,
            fix=fix,
            fix_note=note,
            statement_rows=finding.statement_rows,
            sink_rows=finding.sink_rows,
            source_snippet=finding.snippet,
        )


def run_check(
    files: list[Path],
    config: Config,
    options: CheckOptions,
    on_progress=None,  # type: ignore[no-untyped-def]
    pool: engine.WorkerPool | None = None,
) -> CheckRun:
    run = CheckRun()
    settings = analysis_settings(config, options.selected)
    cache = None
    if uses_cache(options):
        from .cache import Cache

        cache = Cache(cache_dir(config, options), settings)
    results = engine.run(
        files, settings, jobs=options.jobs, cache=cache, timings=run.timings, on_progress=on_progress, pool=pool
    )
    run.files_checked = len(results)
    started = time.perf_counter()
    project = _project_helpers(config)
    for result in results:
        if result.analysis is not None:
            project.add(Path(result.path), result.analysis.facts)
    materializer = Materializer(config, options, project)
    for result in sorted(results, key=lambda r: r.path):
        if result.error is not None:
            run.errors.append((result.path, result.error))
            continue
        assert result.analysis is not None
        if result.analysis.syntax_error is not None:
            row, column, message = result.analysis.syntax_error
            run.errors.append((result.path, f"{row}:{column}: cannot parse: {message}"))
            continue
        diagnostics = materializer.diagnostics(Path(result.path), result.analysis)
        if (options.fix or options.diff) and any(d.fix for d in diagnostics):
            diagnostics = _fix_file(Path(result.path), result, diagnostics, settings, materializer, options, run)
        run.diagnostics.extend(diagnostics)
    run.diagnostics.sort(key=lambda d: d.sort_key())
    run.timings.add("report", time.perf_counter() - started)
    return run


def _fix_file(
    path: Path,
    result: engine.FileResult,
    diagnostics: list[Diagnostic],
    settings: engine.AnalysisSettings,
    materializer: Materializer,
    options: CheckOptions,
    run: CheckRun,
) -> list[Diagnostic]:
    try:
        data = path.read_bytes()
        decoded = source.decode(data)
    except (OSError, source.DecodeError) as exc:
        run.errors.append((str(path), f"cannot fix: {exc}"))
        return diagnostics
    if digest(data) != result.digest:
        run.errors.append((str(path), "changed on disk since it was checked; not fixed"))
        return diagnostics
    new_text, remaining, applied = fix_text(decoded.text, path, diagnostics, settings, materializer, options, run)
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


def fix_text(
    text: str,
    path: Path,
    diagnostics: list[Diagnostic],
    settings: engine.AnalysisSettings,
    materializer: Materializer,
    options: CheckOptions,
    run: CheckRun,
) -> tuple[str, list[Diagnostic], list[Diagnostic]]:
    """Apply fixes until none is left (at most a few rounds); verify each round.

    Returns the new text, the diagnostics that remain (positions in the new text) and the
    diagnostics that were fixed.
    """
    applied_all: list[Diagnostic] = []
    current_text = text
    current = diagnostics
    for _round in range(5):
        chosen, edits, dropped = select_fixes(current_text, current, options.unsafe_fixes)
        if not chosen:
            break
        candidate, after, problem = _try_fixes(current_text, edits, len(current) - len(chosen), path, settings, materializer)
        if problem is not None and len(chosen) > 1:
            # Find the culprits: keep the fixes that verify on their own, drop the others.
            good = []
            for diagnostic in chosen:
                assert diagnostic.fix is not None
                _, _, alone = _try_fixes(current_text, list(diagnostic.fix.edits), len(current) - 1, path, settings, materializer)
                if alone is None:
                    good.append(diagnostic)
                else:
                    run.dropped.append((diagnostic, f"fix dropped, {alone}"))
            chosen = good
            edits = [e for d in good for e in d.fix.edits]  # type: ignore[union-attr]
            if not chosen:
                break
            candidate, after, problem = _try_fixes(current_text, edits, len(current) - len(chosen), path, settings, materializer)
        if problem is not None:
            for diagnostic in chosen:
                run.dropped.append((diagnostic, f"fix dropped, {problem}"))
            break
        applied_all.extend(chosen)
        current_text, current = candidate, after
        if dropped and not any(d.fix for d in after):
            break
    return current_text, current, applied_all


def _try_fixes(
    text: str,
    edits: list[Edit],
    allowed: int,
    path: Path,
    settings: engine.AnalysisSettings,
    materializer: Materializer,
) -> tuple[str, list[Diagnostic], str | None]:
    """Apply edits in memory, re-parse and re-lint: (new text, its diagnostics, problem or None)."""
    candidate = apply_edits(text, edits)
    problem = parses(candidate)
    if problem is not None:
        return candidate, [], f"the fixed file would not parse ({problem})"
    analysis = analyze_text(
        candidate,
        device_rule=settings.device_rule,
        newline=source.detect_newline(candidate),
        pinned_functions=settings.pinned_functions,
        host_functions=settings.host_functions,
    )
    if analysis.syntax_error is not None:
        return candidate, [], f"the fixed file would not parse ({analysis.syntax_error[2]})"
    after = materializer.diagnostics(path, analysis)
    if len(after) > allowed:
        return candidate, after, "the fixed file still (or newly) has findings the fix should have removed"
    return candidate, after, None


def check_stdin(text: str, filename: Path, config: Config, options: CheckOptions) -> CheckRun:
    run = CheckRun(files_checked=1)
    settings = analysis_settings(config, options.selected)
    data = text.encode("utf-8")
    result = engine.analyze_bytes(str(filename), data, settings)
    run.stdin_output = text
    if result.error is not None or result.analysis is None:
        run.errors.append((str(filename), result.error or "cannot analyze"))
        return run
    if result.analysis.syntax_error is not None:
        row, column, message = result.analysis.syntax_error
        run.errors.append((str(filename), f"{row}:{column}: cannot parse: {message}"))
        return run
    project = _project_helpers(config)
    project.add(filename, result.analysis.facts)
    materializer = Materializer(config, options, project)
    diagnostics = materializer.diagnostics(filename, result.analysis)
    if (options.fix or options.diff) and any(d.fix for d in diagnostics):
        new_text, diagnostics, applied = fix_text(text, filename, diagnostics, settings, materializer, options, run)
        run.fixed.extend(applied)
        if options.diff and applied:
            run.diffs[str(filename)] = unified_diff(text, new_text, _display(filename))
        run.stdin_output = new_text
    run.diagnostics = sorted(diagnostics, key=lambda d: d.sort_key())
    return run


def _project_helpers(config: Config) -> ProjectHelpers:
    configured = ConfiguredHelper.parse(config.pin_memory_helper) if config.pin_memory_helper else None
    return ProjectHelpers(configured=configured)


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
