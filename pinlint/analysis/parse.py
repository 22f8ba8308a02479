"""Parsing source text with libcst, never raising for bad input."""

from __future__ import annotations

import libcst as cst


def parse(source: str, report_errors: bool = False) -> cst.Module | tuple[int, int, str] | None:
    """The module; on failure None, or ``(row, column, message)`` when ``report_errors``."""
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        if report_errors:
            return (exc.raw_line, exc.raw_column + 1, exc.message)
        return None
    except (RecursionError, MemoryError) as exc:  # pathological nesting: report, never crash
        if report_errors:
            return (1, 1, f"too deeply nested to parse ({type(exc).__name__})")
        return None
