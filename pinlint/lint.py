"""Lint one file's text with a set of rules: triage → parse candidate functions with libcst →
interpret each scope → each selected rule turns the events it listens to into findings → noqa.

This is the only place where analysis meets rules. The output is plain data (no libcst nodes).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from pinlint import noqa, torch_api
from pinlint.analysis.names import FileNames, project_imports, scan_names
from pinlint.analysis.source_tokens import SourceTokens
from pinlint.analysis.test_files import is_test_file
from pinlint.analysis.triage import (
    WHOLE_FILE,
    Segment,
    candidate_segments,
    compile_triggers,
    function_segments,
    segment_text,
)
from pinlint.core.results import EMPTY, AnalysisSettings, FileAnalysis, Finding
from pinlint.core.text import split_lines
from pinlint.fix.helper_facts import helper_facts
from pinlint.fix.module_facts import mentions_idiom  # noqa: F401 - the runner asks lint, not the fixer
from pinlint.lint_project import foreign_findings, path_of, project_summaries
from pinlint.rules import RuleSet, select

if TYPE_CHECKING:
    from pinlint.analysis.project_summaries import ProjectSummaries

_HELPER_BYTES = torch_api.PIN_HELPER_NAME.encode()

#: Wall-clock seconds one file's analysis may take (the step budgets normally stop far sooner).
FILE_TIME_LIMIT = 30.0


def rule_set(settings: AnalysisSettings) -> RuleSet:
    return select(settings.rules)


def file_triggered(data: bytes, rules: RuleSet) -> bool:
    """The byte-level triage: could a selected rule flag anything in this file?"""
    return compile_triggers(rules.triggers).file_matches(data)


def may_call_copiers(data: bytes, rules: RuleSet, settings: AnalysisSettings) -> bool:
    """The byte-level test of the second triage (``calls_copiers``): a file of a project that
    names torch (it builds the tensor it hands on) and imports something."""
    return settings.project_root is not None and rules.follows_copies and b"torch" in data and b"import" in data


def calls_copiers(text: str, path: str, settings: AnalysisSettings) -> tuple[bool, dict[str, str]]:
    """The second triage: does the file call a project function or class, imported from another
    module, that may copy non_blocking? And the files read to decide, with their digests."""
    from pinlint.analysis.caller_triage import calls_project_copier

    assert settings.project_root is not None
    return calls_project_copier(text, path, settings.project_root)


def teaches_helper(data: bytes) -> bool:
    """The file mentions the pin-memory helper: its imports and calls teach the fixer."""
    return _HELPER_BYTES in data


def with_project_facts(
    analysis: FileAnalysis, text: str, path: str, root: str | None, tree: object | None = None
) -> FileAnalysis:
    """``analysis`` with the file's module facts (computed with ``ast`` where the file was read,
    so that the project's idiom costs no second read or parse in the parent)."""
    from pathlib import Path

    from pinlint.fix.project import facts_of_text

    got = facts_of_text(text, Path(path), Path(root) if root is not None else None, tree)  # type: ignore[arg-type]
    if got is None:
        return analysis
    if analysis is EMPTY:
        analysis = FileAnalysis()
    analysis.project_facts, analysis.module = got
    return analysis


def file_facts(text: str, newline: str) -> FileAnalysis:
    """Only the helper facts of a file that triage left out."""
    return FileAnalysis(facts=helper_facts(text, scan_names(text), newline))


def analyze_text(
    text: str,
    settings: AnalysisSettings,
    *,
    newline: str = "\n",
    path: str | None = None,
    overlay: dict[str, str] | None = None,
) -> FileAnalysis:
    """Findings for one file's text. The caller has already applied the byte-level triage.

    With the file's ``path`` (and a project root in ``settings``), calls to functions imported
    from other project files are followed there; ``overlay`` gives texts to read instead of
    some files' (the fix loop's candidate texts)."""
    rules = rule_set(settings)
    lines = split_lines(text)
    names = scan_names(text, lines)
    names.pinned_functions = frozenset(settings.pinned_functions)
    names.host_functions = frozenset(settings.host_functions)
    result = FileAnalysis(facts=helper_facts(text, names, newline))
    cross_file = path is not None and settings.project_root is not None
    # A test's hand-offs into the project are not followed, nor are findings made in other
    # files reported from it (see test_files): the project's functions are read for what they
    # return and pin, as for any file, but only flows inside the test are reported.
    in_test = cross_file and is_test_file(path, settings.project_root)  # type: ignore[arg-type]
    if not rules.rules or not (names.imports_torch or (cross_file and (names.from_imports or names.modules))):
        # A file that never imports torch builds no torch tensors, and without imports from
        # elsewhere in the project it is handed none to copy.
        return result
    fast_rule = _fast_construction_rule(rules)
    if fast_rule is not None:
        # PIN003 needs no flow analysis: functions that only its trigger selects go to the
        # `ast` fast path; the other rules' functions get the full analysis, PIN003 included.
        others = tuple(t for r in rules.rules if r is not fast_rule for t in r.triggers)
        segments = candidate_segments(text, compile_triggers(others), lines) if others else []
    else:
        segments = candidate_segments(text, compile_triggers(rules.triggers), lines)
    if segments or fast_rule is not None:
        depth, row = _max_nesting(text)
        if depth > _MAX_NESTING and (segments or candidate_segments(text, compile_triggers(rules.triggers), lines)):
            # CPython refuses more than 200 nested brackets, and libcst's native parser can
            # overflow the C stack (a crash, not an exception) long before 5,000: report, do not parse.
            result.syntax_error = (
                row,
                1,
                f"too deeply nested to analyze ({depth} levels of brackets; Python allows {_MAX_NESTING})",
            )
            return result
    fast_sites: list[tuple[object, int]] = []
    if fast_rule is not None and segments != [WHOLE_FILE]:
        slow_starts = {segment.start for segment in segments}
        tokens = SourceTokens(names)
        factories = (
            "tensor(",
            "asarray(",
            *(f"{alias}(" for alias, name in names.torch_functions.items() if name in _DATA_FACTORY_NAMES),
        )
        for segment in function_segments(text, compile_triggers(fast_rule.triggers), lines):
            if segment.start in slow_starts:
                continue
            source = segment_text(lines, segment)
            if source is not None and not (tokens.search(source) and any(f in source for f in factories)):
                continue  # no construction can be in it (the slow path finds none there either)
            from pinlint.analysis.fast_constructions import fast_constructions

            sites = fast_constructions(source, segment, lines, names) if source is not None else None
            if sites is None:
                segments.append(segment)  # the full analysis knows more here
            else:
                fast_sites.extend((site, segment.start) for site in sites)
        segments.sort(key=lambda segment: segment.start)
    if fast_sites:
        result.findings.extend(fast_rule.site_finding(site, _snippet(lines, site)) for site, _ in fast_sites)  # type: ignore[union-attr, attr-defined]
    if not segments and not (cross_file and not in_test and rules.follows_copies and project_imports(names)):
        # No candidate function, and no imported project function this file may hand a tensor
        # to (the callers of those are found below, as segments of their own).
        return _apply_noqa(result, lines)
    # Imported here so that runs where triage finds nothing never pay libcst's import.
    from pinlint.analysis.parse import parse

    source_token = SourceTokens(names)
    parsed: list[tuple[object, Segment, str]] = []
    whole_file = segments == [WHOLE_FILE]
    for segment in [] if whole_file else segments:
        source = segment_text(lines, segment)
        if (
            source is not None
            and not source_token.search(source)
            and not source_token.may_receive(source, text, cross_file)
            and not (cross_file and source_token.calls_imported(source))
        ):
            # Nothing in this function makes a host tensor, nor reads one another function of
            # this file (or, through an import, of the project) may have made: no finding possible.
            continue
        module = parse(source) if source is not None else None
        if module is None:
            # A cut that does not parse (see triage): fall back to the whole file.
            whole_file = True
            parsed = []
            break
        parsed.append((module, segment, source))
    if whole_file:
        # The whole file gets the full analysis: what the fast path found, it finds again.
        result.findings = [f for f in result.findings if f.code != "PIN003"] if fast_sites else result.findings
        module_or_error = parse("".join(lines), report_errors=True)
        if isinstance(module_or_error, tuple):
            result.syntax_error = module_or_error
            return result
        parsed = [(module_or_error, WHOLE_FILE, "".join(lines))]
    from pinlint.analysis.budget import BudgetExceeded

    deadline = time.monotonic() + FILE_TIME_LIMIT
    try:
        project = project_summaries(path, settings, names, rules, deadline, overlay) if cross_file else None
        result.findings.extend(_findings(parsed, names, lines, rules, deadline, result, project, in_test))
    except BudgetExceeded:
        # A watchdog, not a budget: report the file as skipped rather than hang the run (and
        # nothing it found in other files either).
        result.findings = []
        result.foreign = []
        result.skipped = f"not analysed: it took longer than {FILE_TIME_LIMIT:g} s"
        return result
    return _apply_noqa(result, lines)


def _apply_noqa(result: FileAnalysis, lines: list[str]) -> FileAnalysis:
    for i, finding in enumerate(result.findings):
        codes = noqa.codes_on_rows(lines, [finding.statement_rows, finding.sink_rows])
        if codes:
            result.findings[i] = replace(finding, noqa_codes=finding.noqa_codes | codes)
    return result


#: ``PINLINT_SLOW_CONSTRUCTIONS=1`` sends every function to the full analysis (the equivalence
#: check of the fast path compares both).
FAST_CONSTRUCTIONS = os.environ.get("PINLINT_SLOW_CONSTRUCTIONS") != "1"


def _fast_construction_rule(rules: RuleSet):  # type: ignore[no-untyped-def]
    """The selected rule that accepts fast-path construction sites (PIN003), if any."""
    if not FAST_CONSTRUCTIONS:
        return None
    return next((rule for rule in rules.rules if hasattr(rule, "site_finding")), None)


_DATA_FACTORY_NAMES = frozenset({"tensor"}) | torch_api.UNPINNABLE_DATA_FACTORIES


def _snippet(lines: list[str], site: object) -> str:
    row = site.call_start.row  # type: ignore[attr-defined]
    return lines[row - 1].strip() if 0 < row <= len(lines) else ""


def _findings(
    parsed: list[tuple[object, Segment, str]],
    names: FileNames,
    lines: list[str],
    rules: RuleSet,
    deadline: float,
    result: FileAnalysis,
    project: ProjectSummaries | None = None,
    in_test: bool = False,
) -> list[Finding]:
    """Interpret the candidate functions (and, on demand, the functions of the file they depend
    on), then the callers of functions that copy their parameters; rules turn events into
    findings. ``in_test``: only findings whose construction and copy are both in this file."""
    from pinlint.analysis.budget import SCOPE_STEP_BUDGET
    from pinlint.analysis.interpreter import Interpreter
    from pinlint.analysis.summaries import CALLERS_FOLLOWED, MAX_CHAIN, FileSummaries

    def make(scope, sink, summaries):  # type: ignore[no-untyped-def]
        return Interpreter(names, scope, sink, budget=SCOPE_STEP_BUDGET, deadline=deadline, summaries=summaries)

    summaries = FileSummaries(names, lines, rules.listened, make)
    summaries.project = project
    summaries.path = path_of(project)
    reported = []
    for module, segment, source_text in parsed:
        result.parsed_lines += len(lines) if segment.whole_file else segment.end - segment.start
        start = -1 if segment.whole_file else segment.start
        done = summaries.interpret(start, module, segment, source_text)  # type: ignore[arg-type]
        if done is not None:
            reported.append(done)
    # Callers of the functions that copy a parameter; then their callers, where they hand a
    # parameter of their own on (a wrapper of the helper that copies), a bounded number of rounds.
    # The bound on callers is for all rounds together.
    budget = CALLERS_FOLLOWED
    for _ in range(MAX_CHAIN):
        callers = summaries.callers_of_copying_functions(budget)
        budget -= len(callers)
        for start in callers:
            caller = summaries.parsed(start)
            if caller is not None:
                result.parsed_lines += caller.segment.end - caller.segment.start
                reported.append(caller)
        if not callers or budget <= 0:
            break
    result.over_budget.extend(summaries.over_budget)
    findings: list[Finding] = []
    seen_parsed: set[int] = set()
    seen_births: set[int] = set()  # one finding per construction: the first copy it reaches
    for done in reported:
        if id(done) in seen_parsed:
            continue
        seen_parsed.add(id(done))
        findings.extend(_rule_findings(done, summaries, rules, seen_births, project, path_of(project), result, in_test))
    if project is not None:
        result.depends_on = sorted(project.modules.consulted.items())
    return findings


def _rule_findings(  # type: ignore[no-untyped-def]
    done,
    summaries,
    rules: RuleSet,
    seen: set[int],
    project: ProjectSummaries | None,
    home: str | None,
    result: FileAnalysis,
    in_test: bool = False,
) -> list[Finding]:
    from pinlint.analysis.events import SinkHit
    from pinlint.analysis.positions import CompositePositions
    from pinlint.rules.base import RuleContext

    walked = [i for i in done.interpreters if i.events.events]
    if not walked:
        return []
    primary = summaries.positions_for(done)  # only paid for when something was found

    def foreign_positions():  # type: ignore[no-untyped-def]
        if project is None:
            return []
        return [f.summaries.positions_for(p) for f in project.parsed_files() for p in f.summaries.all_parsed()]

    def others():  # type: ignore[no-untyped-def]
        return [summaries.positions_for(p) for p in summaries.all_parsed() if p is not done] + foreign_positions()

    positions = CompositePositions(primary, others)
    findings: list[Finding] = []
    for interpreter in walked:
        ctx = RuleContext(done.module, positions, interpreter, summaries, project, home)
        events = interpreter.events.events
        # Copies first (one finding per construction: the first copy it reaches), then the rest.
        ordered = [e for e in events if isinstance(e, SinkHit)] + [e for e in events if not isinstance(e, SinkHit)]
        for event in ordered:
            owner = sink_owner = None
            if isinstance(event, SinkHit):
                if id(event.origin.node) in seen:
                    continue
                if project is not None:
                    owner, sink_owner = project.owner(event.origin.node), project.owner(event.sink)
                if in_test and (owner is not None or sink_owner is not None):
                    # A test's tensor copied by the project, or the project's tensor copied by a
                    # test: how the test calls it is not how the code does (see test_files).
                    continue
                seen.add(id(event.origin.node))
            if owner is not None:
                # Built in another file (an imported helper's result): the finding is that
                # file's, with that file's positions and noqa comments.
                foreign_findings(event, owner, interpreter, summaries, project, home, rules, result)
                continue
            for rule in rules.rules:
                if type(event) in rule.listens_to:
                    finding = rule.check(event, ctx)
                    if finding is not None and sink_owner is not None:
                        # Copied by an imported function: a noqa comment on that copy, in its
                        # own file, suppresses the finding (as in one file); this file's rows
                        # for it are the construction's.
                        codes = noqa.codes_on_rows(sink_owner.file.lines, [finding.sink_rows])
                        finding = replace(finding, sink_rows=finding.statement_rows, noqa_codes=codes)
                    if finding is not None:
                        findings.append(finding)
    return findings


_MAX_NESTING = 200
_BRACKET = re.compile(r"[()\[\]{}\n]")


def _max_nesting(text: str) -> tuple[int, int]:
    """Deepest bracket nesting in ``text`` and the 1-based row where it is reached (strings and
    comments are not excluded: this is a guard, not a parser)."""
    depth = best = 0
    row = best_row = 1
    if text.count("(") + text.count("[") + text.count("{") < _MAX_NESTING:
        return 0, 1
    for char in _BRACKET.findall(text):
        if char == "\n":
            row += 1
        elif char in "([{":
            depth += 1
            if depth > best:
                best, best_row = depth, row
        else:
            depth = max(0, depth - 1)
    return best, best_row
