"""The analysis of one file meeting the project's other files: the summaries of the files its
imports name, and the findings its analysis makes in them (a tensor an imported helper built,
copied here: that file's finding, with that file's positions and noqa comments)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pinlint import noqa
from pinlint.analysis.source_tokens import SourceTokens
from pinlint.core.results import AnalysisSettings, FileAnalysis
from pinlint.rules import RuleSet

if TYPE_CHECKING:
    from pinlint.analysis.names import FileNames
    from pinlint.analysis.project_modules import SourceFile
    from pinlint.analysis.project_summaries import ForeignFile, ProjectSummaries
    from pinlint.analysis.summaries import FileSummaries


def path_of(project: ProjectSummaries | None) -> str | None:
    return project.modules.path if project is not None else None


def foreign_findings(  # type: ignore[no-untyped-def]
    event, owner: ForeignFile, interpreter, summaries, project, home, rules: RuleSet, result: FileAnalysis
) -> None:
    from pinlint.analysis.positions import CompositePositions
    from pinlint.core.results import ForeignFinding
    from pinlint.rules.base import RuleContext

    other = owner.summaries
    birth = project.parsed_of(owner, event.origin.node)

    def others():  # type: ignore[no-untyped-def]
        own = [summaries.positions_for(p) for p in summaries.all_parsed()]
        foreign = [f.summaries.positions_for(p) for f in project.parsed_files() for p in f.summaries.all_parsed()]
        return own + [p for p in foreign if p is not other.positions_for(birth)]

    positions = CompositePositions(other.positions_for(birth), others)
    ctx = RuleContext(birth.module, positions, interpreter, summaries, project, home)
    for rule in rules.rules:
        if type(event) in rule.listens_to:
            finding = rule.check(event, ctx)
            if finding is None:
                continue
            # The construction's rows are that file's, the copy's this file's: a noqa comment on
            # either suppresses it (as in one file). Kept as that file's finding, its own rows
            # stand in for the copy's.
            copy_codes = noqa.codes_on_rows(summaries.lines, [finding.sink_rows])
            finding = replace(finding, sink_rows=finding.statement_rows)
            codes = noqa.codes_on_rows(owner.file.lines, [finding.statement_rows]) | copy_codes
            if codes:
                finding = replace(finding, noqa_codes=codes)
            result.foreign.append(ForeignFinding(owner.file.path, owner.file.digest, finding))


def project_summaries(  # type: ignore[no-untyped-def]
    path: str | None,
    settings: AnalysisSettings,
    names: FileNames,
    rules: RuleSet,
    deadline: float,
    overlay: dict[str, str] | None,
) -> ProjectSummaries | None:
    """The other files of the project, read only when a call into one of them is met."""
    from pinlint.analysis.budget import SCOPE_STEP_BUDGET
    from pinlint.analysis.interpreter import Interpreter
    from pinlint.analysis.project_modules import ModuleFiles
    from pinlint.analysis.project_summaries import ProjectSummaries
    from pinlint.analysis.summaries import FileSummaries

    assert path is not None and settings.project_root is not None

    def make_summaries(file: SourceFile) -> FileSummaries:
        # The file's names are shared (see project_modules): this run's taught functions go on a copy.
        file_names = replace(file.names, pinned_functions=names.pinned_functions, host_functions=names.host_functions)

        def make(scope, sink, summaries):  # type: ignore[no-untyped-def]
            return Interpreter(
                file_names, scope, sink, budget=SCOPE_STEP_BUDGET, deadline=deadline, summaries=summaries
            )

        summaries = FileSummaries(file_names, file.lines, rules.listened, make, scan=file.scan, parses=file.parses)
        summaries.path = file.path
        # Its calls into further files resolve from where it is (`send_batch` in wrap.py calls
        # `upload` imported there); the depth bound spans files.
        summaries.project = view(file.path)
        return summaries

    def view(file_path: str) -> ProjectSummaries:
        """The project as seen from another of its files: its imports resolve from there; the
        files read and parsed are the analysis's (one summary each; what was read is recorded)."""
        seen = ProjectSummaries(ModuleFiles(settings.project_root, file_path, overlay), make_summaries, wants)
        seen.files = project.files
        seen.modules.consulted = project.modules.consulted
        return seen

    tokens: dict[int, SourceTokens] = {}

    def wants(file_names: FileNames, file_text: str, function_text: str) -> bool:
        if "non_blocking" in function_text:
            return True  # it may copy a parameter
        if "return" not in function_text:
            return False  # it returns None: nothing a caller copies
        found = tokens.get(id(file_names))
        if found is None:
            found = tokens[id(file_names)] = SourceTokens(file_names)
        # It builds a tensor itself. (One that returns what a helper of its own file builds is
        # asked about that helper: `ProjectSummaries._wants_function`.)
        return found.search(function_text)

    project = ProjectSummaries(ModuleFiles(settings.project_root, path, overlay), make_summaries, wants)
    return project
