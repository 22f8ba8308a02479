"""Imports a fix needs, scheduled as data and turned into one edit per file."""

from __future__ import annotations

from dataclasses import dataclass

from pinlint.core.diagnostics import Edit, Location
from pinlint.core.results import HelperFacts


@dataclass(frozen=True)
class ImportRequest:
    """``from <module> import <name>``."""

    module: str
    name: str

    @property
    def line(self) -> str:
        return f"from {self.module} import {self.name}"


def import_edit(request: ImportRequest, facts: HelperFacts) -> Edit | None:
    """The edit adding ``request`` after the imports of its package (else after the last
    module-level import); None when the file has no import block to join."""
    anchor = facts.import_anchor(request.module)
    if anchor is None:
        return None
    row = anchor + 2
    return Edit(request.line + facts.newline, Location(row, 1), Location(row, 1))
