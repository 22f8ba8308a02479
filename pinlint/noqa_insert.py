"""``--add-noqa``: suppress every current finding with ``# noqa: CODE`` on its line.

Idempotent (a line that already suppresses the code is left alone), keeps existing noqa codes
(``# noqa: PIN002`` becomes ``# noqa: PIN001, PIN002``), and writes atomically. A file whose
result would not parse (the line sits inside a multi-line string) is left untouched and reported.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from pinlint import noqa, source
from pinlint.core.diagnostics import Diagnostic
from pinlint.core.text import split_lines
from pinlint.fix.apply import parses
from pinlint.fix.write import ChangedOnDisk, atomic_write, digest

_NOQA_CODES = re.compile(r"(#\s*noqa:\s*)([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


def _same_code(old: str, new: str) -> bool:
    import ast

    try:
        return ast.dump(ast.parse(old)) == ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _target_row(lines: list[str], d: Diagnostic) -> int:
    """The first row of the statement that does not end in a backslash continuation."""
    start, end = d.statement_rows if d.statement_rows != (0, 0) else (d.location.row, d.location.row)
    for row in range(max(d.location.row, start), max(end, d.location.row) + 1):
        if row <= len(lines) and not lines[row - 1].rstrip("\r\n").endswith("\\"):
            return row
    return d.location.row


def _with_code(line: str, code: str) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    existing = noqa.directive(body)
    if existing is not None and noqa.suppresses(existing, code):
        return line
    match = _NOQA_CODES.search(body)
    if match:
        codes = sorted({*re.findall(r"[A-Z]+[0-9]+", match.group(2).upper()), code})
        body = body[: match.start(2)] + ", ".join(codes) + body[match.end(2) :]
    else:
        body = f"{body}  # noqa: {code}"
    return body + ending


def add_noqa_directives(diagnostics: list[Diagnostic]) -> tuple[int, list[tuple[str, str]]]:
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_file[d.filename].append(d)
    added = 0
    problems: list[tuple[str, str]] = []
    for filename, items in sorted(by_file.items()):
        path = Path(filename)
        try:
            data = path.read_bytes()
            decoded = source.decode(data)
        except (OSError, source.DecodeError) as exc:
            problems.append((filename, f"cannot add noqa: {exc}"))
            continue
        lines = split_lines(decoded.text)
        count = 0
        for d in sorted(items, key=lambda d: d.sort_key()):
            row = _target_row(lines, d)
            if row > len(lines):
                continue
            new = _with_code(lines[row - 1], d.code)
            if new != lines[row - 1]:
                lines[row - 1] = new
                count += 1
        if not count:
            continue
        text = "".join(lines)
        if parses(text) is not None or not _same_code(decoded.text, text):
            # A comment changes no code: if the tree changed, a flagged line ends inside a
            # multi-line string and the "comment" would have gone into the string's value.
            problems.append((filename, "cannot add noqa: a flagged line is inside a multi-line string"))
            continue
        try:
            atomic_write(path, source.encode(text, decoded), digest(data))
        except (ChangedOnDisk, OSError) as exc:
            problems.append((filename, f"cannot add noqa: {exc}"))
            continue
        added += count
    return added, problems
