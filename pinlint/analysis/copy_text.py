"""Whether a function may make a non_blocking copy, read from the text alone: its own, or that of
the functions of its file it calls (a wrapper that hands its parameter to the helper that copies
it). A pre-filter before anything is parsed: it may say yes where nothing is copied, never no
where a copy is made within that depth."""

from __future__ import annotations

import re

from pinlint.analysis.file_text import FileText
from pinlint.analysis.triage import segment_for, segment_text

#: How many wrappers deep a copy is looked for (``outer -> inner -> copying helper`` is 2).
FORWARD_DEPTH = 2

#: A call of a module-level function (``f(``) or of a method of the same object (``self.f(``).
_CALLED = re.compile(r"(?<![\w.])(\w+)[ \t]*\(|\bself\.(\w+)[ \t]*\(")


def may_copy(
    lines: list[str],
    text: str,
    scan: FileText,
    start: int,
    memo: dict[tuple[int, int], bool],
    depth: int = FORWARD_DEPTH,
) -> bool:
    """The function whose ``def`` is on 0-based line ``start`` names ``non_blocking``, or calls a
    function of this file that does (to ``depth`` calls)."""
    if "non_blocking" not in text:
        return False  # no copy anywhere in the file
    key = (start, depth)
    if key in memo:
        return memo[key]
    memo[key] = False  # a recursive call while this one is open: no answer from it
    own = segment_text(lines, segment_for(lines, start))
    found = own is not None and "non_blocking" in own
    if not found and own is not None and depth > 0:
        for match in _CALLED.finditer(own):
            name = match.group(1) or match.group(2)
            method = match.group(2) is not None
            if any(
                indented == method and line != start and may_copy(lines, text, scan, line, memo, depth - 1)
                for line, indented in scan.defs(name)
            ):
                found = True
                break
    memo[key] = found
    return found


def MAY_COPY(source: str) -> bool:  # noqa: N802 (a constant: recognised by identity)
    """A text test for ``worth_parsing``: the file's summaries answer it with ``may_copy`` (which
    also reads the functions it calls); on its own it reads the function's text."""
    return "non_blocking" in source
