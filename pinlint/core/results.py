"""What analysing one file produces, and the settings that decide it.

Plain data (no libcst nodes): results travel back from worker processes and into the cache.
A fix is *planned* during analysis with a hole where the pin-memory helper's call goes; which
helper to call is a project-level decision made later by the fix layer. A plan without a hole
(PIN004's inserted synchronisation) is complete as planned.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pinlint.core.diagnostics import Applicability, Location
from pinlint.core.diagnostics import Related as RelatedLocation


@dataclass(frozen=True)
class PlannedEdit:
    """Replace ``location``..``end_location`` by ``prefix`` + (the helper call) + ``suffix``."""

    location: Location
    end_location: Location
    prefix: str
    suffix: str = ""
    #: Whether the helper call (``helper(device)``) goes between ``prefix`` and ``suffix``.
    helper_call: bool = False

    def content(self, call: str) -> str:
        return self.prefix + (call if self.helper_call else "") + self.suffix


@dataclass(frozen=True)
class FixPlan:
    edits: tuple[PlannedEdit, ...]
    #: Source text of the device expression handed to the helper; None: the current CUDA device.
    device_text: str | None
    #: Before the helper is known (an unknown helper arity makes a safe plan unsafe).
    applicability: Applicability
    #: Why it is unsafe, shown to users beside the fix.
    unsafe_reason: str = ""
    title: str = ""

    @property
    def needs_helper(self) -> bool:
        """Whether an edit has the helper call's hole, which the fix layer fills."""
        return any(edit.helper_call for edit in self.edits)


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    location: Location
    end_location: Location
    statement_rows: tuple[int, int]
    sink_rows: tuple[int, int]
    snippet: str
    noqa_codes: frozenset[str]
    fix_plan: FixPlan | None = None
    fix_note: str | None = None
    related: tuple[RelatedLocation, ...] = ()


@dataclass(frozen=True)
class HelperFacts:
    """What a file tells about the project's pin-memory helper (merged across the project)."""

    #: Local name -> module for each import of the helper in this file ("" = defined here).
    bindings: tuple[tuple[str, str], ...] = ()
    #: ``(mod, module)`` for ``mod.is_pin_memory_available(...)`` calls on an imported module.
    attribute_calls: tuple[tuple[str, str], ...] = ()
    #: The file defines the helper at module level; whether it takes a device argument.
    defines_helper: bool = False
    definition_takes_device: bool | None = None
    calls_without_args: int = 0
    calls_with_args: int = 0
    module_level_bindings: frozenset[str] = frozenset()
    last_top_level_import_line: int | None = None
    import_group_lines: tuple[tuple[str, int], ...] = ()
    newline: str = "\n"

    def import_anchor(self, module: str) -> int | None:
        """0-based line after which ``from <module> import ...`` goes: after the last import of
        the same top-level package, else after the last module-level import."""
        package = module.split(".", 1)[0]
        for name, line in self.import_group_lines:
            if name == package:
                return line
        return self.last_top_level_import_line


@dataclass
class ModuleFacts:
    """What one file says about the idiom (plain data: it goes into the JSON cache)."""

    #: Module-level ``def is_pin_memory_available``: its signature.
    definition: dict[str, str] | None = None
    #: Signatures of methods named ``is_pin_memory_available``.
    methods: list[dict[str, str]] = field(default_factory=list)
    #: Absolute modules the helper is imported from (one entry per import).
    imports: list[str] = field(default_factory=list)
    #: [module the called name comes from ("" unknown), call style] for each call of the helper.
    calls: list[list[str]] = field(default_factory=list)
    #: What is passed as ``pin_memory=``: "helper", "const:<NAME>:<module>" ("" module = here),
    #: "self:<attr>", "other" -> count.
    pin_values: dict[str, int] = field(default_factory=dict)
    #: Module-level names assigned from a helper call (``PIN_MEMORY = is_pin_memory_available()``).
    constants: list[str] = field(default_factory=list)
    #: Absolute modules imported at module level at run time.
    module_imports: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ForeignFinding:
    """A finding in another file of the project, found by this file's analysis: a tensor built
    there (a helper's result) reaches a copy here. It belongs to ``path`` as it was (``digest``)."""

    path: str
    digest: str
    finding: Finding


@dataclass
class FileAnalysis:
    findings: list[Finding] = field(default_factory=list)
    facts: HelperFacts = field(default_factory=HelperFacts)
    #: A syntax error in a part pinlint had to parse: (row, column, message).
    syntax_error: tuple[int, int, str] | None = None
    parsed_lines: int = 0
    #: Scopes whose analysis hit its step budget: (row of the scope, its name, why). Their
    #: findings are dropped (precision first: no finding rather than a wrong one).
    over_budget: list[tuple[int, str, str]] = field(default_factory=list)
    #: The whole file was skipped (its time limit was reached): why. No findings then.
    skipped: str | None = None
    #: What the file says about the project's pin-memory idiom (files that mention it), and its
    #: dotted module name under the project root: computed by the worker that read the file.
    project_facts: ModuleFacts | None = None
    module: str | None = None
    #: For a file with findings: CPython's first syntax error elsewhere in it (row, column,
    #: end row, end column, message), or None when CPython compiles it.
    compile_error: tuple[int, int, int, int, str] | None = None
    #: Findings this analysis made in other files of the project (routed to them by the run).
    foreign: list[ForeignFinding] = field(default_factory=list)
    #: The other files the analysis read, with their digests ("" absent): the result holds only
    #: while they are unchanged.
    depends_on: list[tuple[str, str]] = field(default_factory=list)
    #: How many of ``findings`` other files' analyses found (routed here by the run).
    received: int = 0


#: The result of a file that holds nothing for pinlint (shared: results are never mutated).
EMPTY = FileAnalysis()


@dataclass(frozen=True)
class AnalysisSettings:
    """Everything that changes a file's analysis result. Every field is part of the cache key."""

    #: The selected rule codes, sorted.
    rules: tuple[str, ...]
    pinned_functions: tuple[str, ...] = ()
    host_functions: tuple[str, ...] = ()
    #: The project root module names are computed under (None: no project around the files).
    project_root: str | None = None

    def key(self) -> str:
        return repr(dataclasses.astuple(self))


@dataclass
class FileResult:
    path: str
    analysis: FileAnalysis | None
    #: Why the file could not be checked (unreadable, undecodable); None when it was.
    error: str | None = None
    size: int = 0
    mtime_ns: int = 0
    digest: str = ""
    triaged_in: bool = False
    #: The project files the second triage read to decide (path, digest; "" where absent): the
    #: result holds while they are as they were (a copier imported from one of them may appear).
    triage_reads: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Timings:
    phases: dict[str, float] = field(default_factory=dict)
    files: int = 0
    triaged: int = 0
    cache_hits: int = 0
    parsed_lines: int = 0

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + seconds
