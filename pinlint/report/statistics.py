"""``--statistics``: counts per rule, as ruff prints them.

Text (flake8's ``--statistics`` layout, as ruff mimics it): ``count<TAB>CODE<TAB>[*] name``,
counts right-aligned and codes padded to a common width; ``[*]`` marks a rule whose findings
all have an applicable fix, ``[-]`` one where only some have, ``[ ]`` one without, and the marks are left out altogether when no rule
has an applicable fix (ruff does the same). JSON: ``[{code, name, count, fixable,
fixable_count}]`` where ``fixable`` means every finding of the rule is fixable.

A fix is applicable when it is ``safe``, or ``unsafe`` with ``unsafe_fixes=True``;
``display-only`` fixes never count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pinlint.core.diagnostics import Diagnostic


@dataclass(frozen=True)
class RuleStatistic:
    code: str
    name: str
    count: int
    fixable_count: int

    @property
    def fixable(self) -> bool:
        return self.fixable_count == self.count


def is_applicable_fix(diag: Diagnostic, unsafe_fixes: bool = False) -> bool:
    return diag.fix_applies(unsafe_fixes)


def compute_statistics(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool = False) -> list[RuleStatistic]:
    """Per-code counts, sorted by count (descending), then code."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    fixable: dict[str, int] = {}
    for diag in diagnostics:
        names.setdefault(diag.code, diag.name)
        counts[diag.code] = counts.get(diag.code, 0) + 1
        fixable[diag.code] = fixable.get(diag.code, 0) + int(is_applicable_fix(diag, unsafe_fixes))
    stats = [RuleStatistic(code, names[code], counts[code], fixable[code]) for code in counts]
    return sorted(stats, key=lambda s: (-s.count, s.code))


def render_statistics(diagnostics: Sequence[Diagnostic], fmt: str = "text", *, unsafe_fixes: bool = False) -> str:
    """Render the statistics table; ``fmt`` is ``"text"`` or ``"json"``.

    Text returns the table only (no "Found N errors." summary, which the caller prints) and
    the empty string when there are no findings, as ruff prints no table then; JSON returns
    ``[]``.
    """
    stats = compute_statistics(diagnostics, unsafe_fixes)
    if fmt == "json":
        objects = [
            {
                "code": s.code,
                "name": s.name,
                "count": s.count,
                "fixable": s.fixable,
                "fixable_count": s.fixable_count,
            }
            for s in stats
        ]
        return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"
    if fmt != "text":
        raise ValueError(f"unsupported statistics format: {fmt!r} (expected 'text' or 'json')")
    if not stats:
        return ""
    count_width = max(len(str(s.count)) for s in stats)
    code_width = max(len(s.code) for s in stats)
    any_fixable = any(s.fixable_count for s in stats)
    lines = []
    for s in stats:
        # ruff's marks: every finding fixable, only some of them, none.
        mark = ("[*] " if s.fixable else "[-] " if s.fixable_count else "[ ] ") if any_fixable else ""
        lines.append(f"{s.count:>{count_width}}\t{s.code:<{code_width}}\t{mark}{s.name}")
    return "\n".join(lines) + "\n"
