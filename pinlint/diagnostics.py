"""The data every stage shares: a finding (Diagnostic), its Fix and the Fix's Edits.

Rows are 1-based; columns are 1-based and counted in characters (code points), as ruff does.
These objects are plain data so that they pickle cheaply between worker processes and
into the cache, and every output format reads the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Applicability = Literal["safe", "unsafe", "display-only"]


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``location`` and ``end_location`` with ``content``."""

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass
class Diagnostic:
    code: str
    name: str
    message: str
    #: Absolute path of the file ("-" style stdin input gets the --stdin-filename, absolute).
    filename: str
    location: Location
    end_location: Location
    noqa_row: int
    url: str
    fix: Fix | None = None
    #: Why no fix is offered, when there is none (shown as the "help:" line).
    fix_note: str | None = None
    #: Lines (1-based, inclusive) of the statement that holds the finding: ``# noqa`` on any of
    #: them suppresses it.
    statement_rows: tuple[int, int] = (0, 0)
    #: Rows of the copy statement the flagged value reaches (a ``# noqa`` there counts too).
    sink_rows: tuple[int, int] = (0, 0)
    #: The source text of the flagged line(s), for baselines' line-shift-proof fingerprints.
    source_snippet: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability != "display-only"

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.filename, self.location.row, self.location.column, self.code)
