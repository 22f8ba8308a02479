"""Apply fixes to a file's text: non-overlapping edits, de-duplicated imports; parse check; diffs."""

from __future__ import annotations

import ast

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
    taken: list[tuple[int, int, str]] = []
    chosen: list[Diagnostic] = []
    edits: list[Edit] = []
    dropped: list[tuple[Diagnostic, str]] = []
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key()):
        fix = diagnostic.fix
        if fix is None or not fix.applies(unsafe):
            continue
        spans = [(index.offset(e.location), index.offset(e.end_location), e.content) for e in fix.edits]
        clash = False
        for start, end, content in spans:
            for t_start, t_end, t_content in taken:
                if (start, end, content) == (t_start, t_end, t_content):
                    continue
                if start < t_end and t_start < end or (start == end == t_start == t_end):
                    clash = True
        if clash:
            dropped.append((diagnostic, "overlaps another fix; run again to apply it"))
            continue
        taken.extend(spans)
        chosen.append(diagnostic)
        edits.extend(fix.edits)
    return chosen, edits, dropped


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
    import difflib  # only --diff needs it

    diff = difflib.unified_diff(split_lines(old), split_lines(new), fromfile=f"a/{display}", tofile=f"b/{display}")
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
