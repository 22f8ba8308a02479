"""``--output-format github``: GitHub Actions workflow commands, one annotation per finding.

    ::error title=pinlint (PIN001),file=src/train.py,line=42,col=9,endLine=42,endColumn=51::src/train.py:42:9: PIN001 message%0A  help: fix title

Escaping follows actions/toolkit (``packages/core/src/command.ts``): the message escapes
``%``, CR and LF; property values also escape ``:`` and ``,``. For a range over several lines
``col`` and ``endColumn`` are left out, because the runner rejects the whole annotation
("Invalid error command value") when they are given with ``line != endLine`` (ruff#22074).
The message repeats ``path:line:col: CODE`` as ruff does, so the log stays readable past
GitHub's cap of 10 annotations per step. No summary line is written in this format.
"""

from __future__ import annotations

from collections.abc import Sequence

from pinlint.core.diagnostics import Diagnostic
from pinlint.core.paths import relative_posix_path
from pinlint.report import ReportContext, profile_suffix
from pinlint.report.json_format import sorted_diagnostics


def escape_data(text: str) -> str:
    """Escape a workflow-command message (``%`` first, so the others are not re-escaped)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value (``title=``, ``file=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _position_properties(diag: Diagnostic) -> list[str]:
    start, end = diag.location, diag.end_location
    if end.row > start.row:
        return [f"line={start.row}", f"endLine={end.row}"]
    props = [f"line={start.row}", f"col={start.column}"]
    # An end before the start (or on an earlier row) is malformed; GitHub drops annotations
    # whose endColumn < col, so fall back to the start position alone.
    if end.row == start.row and end.column >= start.column:
        props += [f"endLine={end.row}", f"endColumn={end.column}"]
    return props


def format_annotation(diag: Diagnostic, ctx: ReportContext, level: str = "error") -> str:
    path = relative_posix_path(diag.filename, ctx.root)
    properties = [
        f"title={escape_property(f'pinlint ({diag.code})')}",
        f"file={escape_property(path)}",
    ]
    properties += _position_properties(diag)
    message = f"{path}:{diag.location.row}:{diag.location.column}: {diag.code} {diag.message}{profile_suffix(diag)}"
    help_text = diag.fix.explained_message if diag.fix is not None else diag.fix_note
    if help_text:
        message += f"\n  help: {help_text}"
    return f"::{level} {','.join(properties)}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext, level: str = "error") -> str:
    """One ``::error`` line per finding (``level`` may be ``warning`` or ``notice``)."""
    if level not in ("error", "warning", "notice"):
        raise ValueError(f"unknown GitHub annotation level: {level!r}")
    return "".join(format_annotation(d, ctx, level) + "\n" for d in sorted_diagnostics(diagnostics))
