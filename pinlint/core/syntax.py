"""Syntax errors as findings (``PIN000``), at CPython's own location, as ruff reports them.

pinlint parses with libcst, whose error positions are its own (often the start of the next
statement); the location users expect, and that their editor shows, is the interpreter's. So a
file libcst cannot parse is compiled once more with ``compile(..., ast.PyCF_ONLY_AST)`` and the
``SyntaxError``'s row and column are reported. Syntax errors are always reported: no selection,
``ignore``, ``per-file-ignores`` or ``# noqa`` removes them (a file that does not parse cannot
have been checked), and they have no fix.
"""

from __future__ import annotations

import ast

from pinlint.core.diagnostics import Diagnostic, Location

CODE = "PIN000"
NAME = "syntax-error"
URL = "https://github.com/pinlint/torch-pinlint/blob/main/docs/syntax-errors.md"


def cpython_location(text: str, filename: str) -> tuple[Location, Location, str] | None:
    """Where CPython reports the file's first syntax error, or None when CPython parses it
    (libcst lags behind the newest grammar, or pinlint declined a too deeply nested file)."""
    return parsed_or_error(text, filename)[1]


def parsed_or_error(text: str, filename: str) -> tuple[ast.Module | None, tuple[Location, Location, str] | None]:
    """CPython's tree of the file, or where it reports the first syntax error (one parse for
    both: a file with findings that also teaches the project's idiom needs the two)."""
    try:
        return compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True), None
    except SyntaxError as exc:
        row = exc.lineno or 1
        # CPython's offset is 1-based and counted in characters (as pinlint's columns are).
        column = max(exc.offset or 1, 1)
        end_row = exc.end_lineno or row
        end_column = exc.end_offset or column
        if (end_row, end_column) <= (row, column):
            end_row, end_column = (
                row,
                column + 1,
            )  # one character, so that every format shows a span
        return None, (Location(row, column), Location(end_row, end_column), f"SyntaxError: {exc.msg}")
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None, None  # e.g. null bytes: the fallback (pinlint's own parse error) is reported


def checked(text: str, filename: str) -> tuple[ast.Module | None, tuple[int, int, int, int, str] | None]:
    """``parsed_or_error`` with the error as plain data (a worker computes it; it is cached)."""
    tree, located = parsed_or_error(text, filename)
    if located is None:
        return tree, None
    start, end, message = located
    return None, (start.row, start.column, end.row, end.column, message)


def syntax_error_diagnostic(filename: str, text: str | None, fallback: tuple[int, int, str]) -> Diagnostic:
    """The PIN000 finding for ``filename``; ``fallback`` is (row, column, message) of pinlint's
    own parser, used when CPython accepts the text or the text could not be read."""
    located = cpython_location(text, filename) if text is not None else None
    if located is None:
        row, column, message = fallback
        start, end = Location(row, max(column, 1)), Location(row, max(column, 1) + 1)
        message = f"SyntaxError: {message}" if not message.startswith("SyntaxError") else message
    else:
        start, end, message = located
    return located_diagnostic(filename, start, end, message)


def located_diagnostic(filename: str, start: Location, end: Location, message: str) -> Diagnostic:
    return Diagnostic(
        code=CODE,
        name=NAME,
        message=message,
        filename=filename,
        location=start,
        end_location=end,
        noqa_row=start.row,
        url=URL,
        fix_note="fix the syntax error: pinlint checks only what Python can parse",
        statement_rows=(start.row, start.row),
    )
