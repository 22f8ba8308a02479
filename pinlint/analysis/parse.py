"""Parsing source text with libcst, never raising for bad input."""

from __future__ import annotations

import libcst as cst
from libcst._nodes.base import CSTNode

#: libcst validates every node as the parser builds it (``CSTNode.__post_init__``), which its
#: own comment calls redundant for parsed trees; it is an eighth of the parse. Skipped while
#: pinlint parses, and only if ``__post_init__`` is still the plain validation hook.
_VALIDATE = CSTNode.__dict__.get("__post_init__")
_SKIP_VALIDATION = _VALIDATE is not None and _VALIDATE.__code__.co_names == ("_validate",)


def _no_validation(self: CSTNode) -> None:
    return None


def parse(source: str, report_errors: bool = False) -> cst.Module | tuple[int, int, str] | None:
    """The module; on failure None, or ``(row, column, message)`` when ``report_errors``."""
    if _SKIP_VALIDATION:
        CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
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
    finally:
        if _SKIP_VALIDATION:
            CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
