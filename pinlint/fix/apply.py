"""Apply fixes to a file's text: non-overlapping edits, de-duplicated imports; parse check; diffs."""

from __future__ import annotations

import ast
import bisect
import math

from pinlint.core.diagnostics import Diagnostic, Edit
from pinlint.core.text import LineIndex, split_lines


def apply_edits(text: str, edits: list[Edit]) -> str:
    index = LineIndex.of(text)
    spans = sorted({(index.offset(e.location), index.offset(e.end_location), e.content) for e in edits})
    out = []
    cursor = 0
    for start, end, content in spans:
        out.append(text[cursor:start])
        out.append(content)
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return "".join(out)


def select_fixes(
    text: str, diagnostics: list[Diagnostic], unsafe: bool
) -> tuple[list[Diagnostic], list[Edit], list[tuple[Diagnostic, str]]]:
    """Fixes to apply together: each fix's edits must not overlap another applied fix's edits
    (identical edits, such as the shared import, are merged)."""
    index = LineIndex.of(text)
    taken = _Taken()
    chosen: list[Diagnostic] = []
    edits: list[Edit] = []
    dropped: list[tuple[Diagnostic, str]] = []
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key()):
        fix = diagnostic.fix
        if fix is None or not fix.applies(unsafe):
            continue
        spans = [(index.offset(e.location), index.offset(e.end_location), e.content) for e in fix.edits]
        if any(taken.clashes(span) for span in spans):
            dropped.append((diagnostic, "overlaps another fix; run again to apply it"))
            continue
        for span in spans:
            taken.add(span)
        chosen.append(diagnostic)
        edits.extend(fix.edits)
    return chosen, edits, dropped


Span = tuple[int, int, str]


class _Taken:
    """The spans of the fixes chosen so far, sorted by start, so that a new span is compared
    with the few that can touch it rather than with every span of the file."""

    def __init__(self) -> None:
        self._spans: list[Span] = []
        self._seen: set[Span] = set()
        self._longest = 0

    def add(self, span: Span) -> None:
        if span not in self._seen:
            self._seen.add(span)
            bisect.insort(self._spans, span)
            self._longest = max(self._longest, span[1] - span[0])

    def clashes(self, span: Span) -> bool:
        start, end, _ = span
        # A span that touches [start, end] starts at most `longest` before it and not after it.
        low = bisect.bisect_left(self._spans, (start - self._longest,))
        high = bisect.bisect_right(self._spans, (end, math.inf))
        for taken in self._spans[low:high]:
            if taken == span:
                continue  # the same edit (the shared import): merged
            t_start, t_end, _ = taken
            if start < t_end and t_start < end or (start == end == t_start == t_end):
                return True
        return False


def parses(text: str) -> str | None:
    """None when ``text`` is valid Python, else the parser's message."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return str(exc)
    return None


def unified_diff(old: str, new: str, display: str) -> str:
    from pinlint.fix.diff import unified_diff as lines_diff  # only --diff needs it

    diff = lines_diff(split_lines(old), split_lines(new), f"a/{display}", f"b/{display}")
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
