"""Analyze one file's text: triage → parse candidate functions with libcst → flow → findings.

The output is plain, picklable data (no libcst nodes): it travels from worker processes and
into the cache. Fixes are *planned* here (where to insert what) with a placeholder for the
pin-memory helper call, because which helper to call is a project-level decision made later
(see ``pinlint.fix.helper``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .. import noqa, torch_api
from ..diagnostics import Edit, Location
from ..triage import WHOLE_FILE, Segment, candidate_segments, segment_text, split_lines
from .names import FileNames, scan_names

#: Stands for ``<helper>(<device>)`` in planned edits until the helper is resolved.
HELPER_CALL = "\x00PINLINT_HELPER_CALL\x00"

_HELPER_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+is_pin_memory_available[ \t]*\(([^)]*)\)", re.M)
_HELPER_CALL_NO_ARGS = re.compile(r"is_pin_memory_available\(\s*\)")
_HELPER_CALL_ARGS = re.compile(r"(?<!def )is_pin_memory_available\(\s*[^)\s]")


@dataclass(frozen=True)
class FixPlan:
    edits: tuple[Edit, ...]
    #: Source text of the device expression handed to the helper; None: the current CUDA device.
    device_text: str | None
    #: "safe" or "unsafe" before the helper is known (an unknown helper arity makes it unsafe).
    applicability: str
    #: Why it is unsafe, for the fix message and docs.
    unsafe_reason: str = ""
    title: str = ""


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
class FileAnalysis:
    findings: list[Finding] = field(default_factory=list)
    facts: HelperFacts = field(default_factory=HelperFacts)
    #: A syntax error in a part pinlint had to parse: (row, column, message).
    syntax_error: tuple[int, int, str] | None = None
    parsed_lines: int = 0


def helper_facts(text: str, names: FileNames, newline: str) -> HelperFacts:
    mentions_helper = torch_api.PIN_HELPER_NAME in text  # the regexes below only if it can matter
    definition = _HELPER_DEF.search(text) if mentions_helper else None
    takes_device: bool | None = None
    if definition:
        params = [p.strip() for p in definition.group(1).split(",") if p.strip()]
        params = [p for p in params if p not in ("*", "/") and not p.startswith("*")]
        takes_device = bool(params and params[0].split(":")[0].split("=")[0].strip() not in ("self", "cls"))
    return HelperFacts(
        bindings=tuple(sorted(names.helper_bindings.items())),
        attribute_calls=tuple(names.helper_attribute_calls),
        defines_helper=definition is not None,
        definition_takes_device=takes_device,
        calls_without_args=len(_HELPER_CALL_NO_ARGS.findall(text)) if mentions_helper else 0,
        calls_with_args=len(_HELPER_CALL_ARGS.findall(text)) if mentions_helper else 0,
        module_level_bindings=frozenset(names.module_level_bindings),
        last_top_level_import_line=names.last_top_level_import_line,
        import_group_lines=tuple(sorted(names.import_group_lines.items())),
        newline=newline,
    )


def analyze_text(
    text: str,
    *,
    device_rule: bool,
    newline: str = "\n",
    pinned_functions: tuple[str, ...] = (),
    host_functions: tuple[str, ...] = (),
) -> FileAnalysis:
    """Findings for one file's text. The caller has already applied the byte-level triage."""
    lines = split_lines(text)
    names = scan_names(text, lines)
    names.pinned_functions = frozenset(pinned_functions)
    names.host_functions = frozenset(host_functions)
    result = FileAnalysis(facts=helper_facts(text, names, newline))
    if not names.imports_torch:
        return result  # a file that never imports torch builds no torch tensors
    segments = candidate_segments(text, device_rule, lines)
    if not segments:
        return result
    # Imported here so that runs where triage finds nothing never pay libcst's import.
    from .findings import findings_for_module, parse

    source_token = _SourceTokens(names)
    depth, row = _max_nesting(text)
    if depth > _MAX_NESTING:
        # CPython refuses more than 200 nested brackets, and libcst's native parser can overflow
        # the C stack (a crash, not an exception) long before 5,000: report, do not parse.
        result.syntax_error = (row, 1, f"too deeply nested to analyze ({depth} levels of brackets; Python allows {_MAX_NESTING})")
        return result
    parsed: list[tuple[object, Segment, str]] = []
    whole_file = segments == [WHOLE_FILE]
    for segment in [] if whole_file else segments:
        source = segment_text(lines, segment)
        if source is not None and not source_token.search(source):
            continue  # nothing in this function can make a host tensor: no finding possible
        module = parse(source) if source is not None else None
        if module is None:
            # A cut that does not parse (see triage): fall back to the whole file.
            whole_file = True
            parsed = []
            break
        parsed.append((module, segment, source))
    if whole_file:
        module_or_error = parse("".join(lines), report_errors=True)
        if isinstance(module_or_error, tuple):
            result.syntax_error = module_or_error
            return result
        parsed = [(module_or_error, WHOLE_FILE, "".join(lines))]
    for module, segment, source_text in parsed:
        result.parsed_lines += len(lines) if segment.whole_file else segment.end - segment.start
        result.findings.extend(findings_for_module(module, segment, names, lines, device_rule, source_text))
    for i, finding in enumerate(result.findings):
        codes = noqa.codes_on_rows(lines, [finding.statement_rows, finding.sink_rows])
        if codes:
            result.findings[i] = _with_noqa(finding, codes)
    return result


#: Every way a host tensor can be born (design §1): a function without one of these tokens
#: cannot hold a finding, so it is not parsed.
_SOURCE_NAMES = sorted(
    torch_api.PINNABLE_FACTORIES
    | torch_api.PINNABLE_LIKE_FACTORIES
    | torch_api.PINNABLE_NEW_METHODS
    | torch_api.UNPINNABLE_DATA_FACTORIES
    | torch_api.MEMORY_SHARING_FACTORIES
    | torch_api.TO_HOST_METHODS
)


class _SourceTokens:
    """``name(`` substrings (fast ``in`` tests, no regex): a function without any of them holds no
    host-tensor construction. ``torch.zeros (3)``, with a space, is not seen: a style no formatter
    produces."""

    def __init__(self, names: FileNames) -> None:
        extra = [n.rsplit(".", 1)[-1] for n in (*names.torch_functions, *names.host_functions)]
        self.needles = [f"{name}(" for name in (*_SOURCE_NAMES, *extra)] + ['"cpu', "'cpu"]

    def search(self, text: str) -> bool:
        return any(needle in text for needle in self.needles)


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


def _with_noqa(finding: Finding, codes: frozenset[str]) -> Finding:
    return replace(finding, noqa_codes=codes)
