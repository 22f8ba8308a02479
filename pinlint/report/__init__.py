"""Output formats. Each module renders a list of Diagnostics to text; none of them prints.

Machine formats (json, json-lines, github, sarif, gitlab, junit) are written plainly, never
through rich markup. Every renderer has the signature ``render(diagnostics, ctx) -> str``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pinlint.core.diagnostics import Diagnostic

from pinlint.core.diagnostics import Diagnostic


@dataclass(frozen=True)
class ReportContext:
    #: Directory that relative paths in reports are relative to (the current directory).
    root: Path
    version: str
    #: Codes of the rules that were selected for this run (SARIF lists them).
    selected_codes: tuple[str, ...] = field(default_factory=tuple)


def profile_suffix(d: Diagnostic) -> str:
    """`` (ran 40,960 times, 3.1 MB)`` when ``check --profile`` counted the site, else ""
    (every text format shows it after the message)."""
    if d.profile is None:
        return ""
    from pinlint.profile_findings import finding_note

    return f" ({finding_note(d.profile)})"


FORMATS: tuple[str, ...] = ("full", "concise", "json", "json-lines", "github", "sarif", "gitlab", "junit")


def render(
    fmt: str,
    diagnostics: list[Diagnostic],
    root: Path,
    selected: set[str],
    unsafe_fixes: bool = False,
    color: bool = False,
    sources: dict[str, str] | None = None,
) -> str:
    """The report in format ``fmt`` (one of ``FORMATS``); ``sources`` maps a file name to its
    text where it is not to be read from disk (stdin)."""
    if fmt == "full":
        from pinlint.report.human import render_full

        return render_full(diagnostics, root, color=color, unsafe_fixes=unsafe_fixes, sources=sources)
    if fmt == "concise":
        from pinlint.report.human import render_concise

        return render_concise(diagnostics, root, unsafe_fixes)
    import importlib

    from pinlint import __version__

    ctx = ReportContext(root=root, version=__version__, selected_codes=tuple(sorted(selected)))
    module = importlib.import_module(f"pinlint.report.{fmt.replace('-', '_') if fmt != 'json' else 'json_format'}")
    return module.render(diagnostics, ctx)
