"""Output formats. Each module renders a list of Diagnostics to text; none of them prints.

Machine formats (json, json-lines, github, sarif, gitlab, junit) are written plainly, never
through rich markup. Every renderer has the signature ``render(diagnostics, ctx) -> str``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ReportContext:
    #: Directory that relative paths in reports are relative to (the current directory).
    root: Path
    version: str
    #: Codes of the rules that were selected for this run (SARIF lists them).
    selected_codes: tuple[str, ...] = field(default_factory=tuple)


FORMATS: tuple[str, ...] = ("full", "concise", "json", "json-lines", "github", "sarif", "gitlab", "junit")
