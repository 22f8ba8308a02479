"""PIN000 findings of a run: a file libcst or CPython cannot parse, at CPython's location."""

from __future__ import annotations

from pathlib import Path

from pinlint import source
from pinlint.core.diagnostics import Diagnostic, Location
from pinlint.core.syntax import cpython_location, located_diagnostic, syntax_error_diagnostic


def syntax_error(path: Path, text: str | None, fallback: tuple[int, int, str]) -> Diagnostic:
    """PIN000 at CPython's location (the file is read again: only broken files pay for it)."""
    if text is None:
        try:
            text = source.decode(path.read_bytes()).text
        except (OSError, source.DecodeError):
            text = None
    return syntax_error_diagnostic(str(path), text, fallback)


def unparsable(path: Path, text: str | None) -> list[Diagnostic]:
    """PIN000 for a file CPython cannot compile, or nothing."""
    if text is None:
        try:
            text = source.decode(path.read_bytes()).text
        except (OSError, source.DecodeError):
            return []
    located = cpython_location(text, str(path))
    return (
        []
        if located is None
        else [syntax_error_diagnostic(str(path), text, (located[0].row, located[0].column, located[2]))]
    )


def compile_error_diagnostic(path: Path, error: tuple[int, int, int, int, str]) -> Diagnostic:
    """PIN000 from the worker's whole-file compile (``FileAnalysis.compile_error``)."""
    row, column, end_row, end_column, message = error
    return located_diagnostic(str(path), Location(row, column), Location(end_row, end_column), message)
