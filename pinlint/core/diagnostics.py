"""The data every stage shares: a finding (Diagnostic), its Fix and the Fix's Edits.

Rows are 1-based; columns are 1-based and counted in characters (code points), as ruff does.
These objects are plain data: they travel between worker processes, and every output format
reads the same fields.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(str, enum.Enum):
    """How far a fix may be trusted, ordered as ruff orders it: display-only < unsafe < safe.

    A ``str`` enum, so that formats print its value (``"safe"``) unchanged; the comparisons
    are by rank, not by ``str`` order.
    """

    DISPLAY_ONLY = "display-only"
    UNSAFE = "unsafe"
    SAFE = "safe"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Applicability):
            return NotImplemented
        return self.rank >= other.rank

    def __str__(self) -> str:
        return self.value


_RANK = {Applicability.DISPLAY_ONLY: 0, Applicability.UNSAFE: 1, Applicability.SAFE: 2}


def required_applicability(unsafe_fixes: bool) -> Applicability:
    """The least applicability a fix needs to be applied (or shown as fixable)."""
    return Applicability.UNSAFE if unsafe_fixes else Applicability.SAFE


@dataclass(frozen=True, order=True)
class Location:
    row: int
    column: int


@dataclass(frozen=True)
class Related:
    """Another place a finding involves (the copy its tensor reaches, the call handing it over)."""

    location: Location
    end_location: Location
    message: str
    #: The file it is in, when not the finding's own file (a copy in another module).
    path: str | None = None


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
    #: Why the fix is unsafe (shown to users beside the fix); empty for a safe fix.
    unsafe_reason: str = ""

    def __post_init__(self) -> None:
        # Accept the plain spelling ("safe") that formats and stored data use.
        object.__setattr__(self, "applicability", Applicability(self.applicability))

    @property
    def explained_message(self) -> str:
        """The message, with why the fix is unsafe when it is (what every format shows)."""
        if self.unsafe_reason and self.applicability < Applicability.SAFE:
            return f"{self.message} (unsafe: {self.unsafe_reason})"
        return self.message

    def applies(self, unsafe_fixes: bool) -> bool:
        """Whether ``--fix`` (with ``--unsafe-fixes`` when asked) applies this fix."""
        return self.applicability >= required_applicability(unsafe_fixes)


@dataclass(frozen=True)
class ProfileCount:
    """What a runtime profile (``pinlint check --profile``) says about a finding's site."""

    #: Times the site ran, summed over the profile's runs; 0 when the profile never saw it run.
    count: int
    #: Bytes those runs constructed or copied there.
    nbytes: int = 0
    #: The profile's kind of site that matched (``host-construction``, ...); None when none did.
    kind: str | None = None
    #: False when the rule's sites are not recorded at run time (PIN004): no count either way.
    measured: bool = True


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
    #: Lines (1-based, inclusive) of the statement that holds the finding: a noqa comment on any of
    #: them suppresses it.
    statement_rows: tuple[int, int] = (0, 0)
    #: Rows of the copy statement the flagged value reaches (a noqa comment there counts too).
    sink_rows: tuple[int, int] = (0, 0)
    #: The source text of the flagged line(s), for baselines' line-shift-proof fingerprints.
    source_snippet: str = ""
    #: Other places of the file the finding involves (the copy, a call on the way).
    related: tuple[Related, ...] = ()
    #: Producer-specific data (the runtime companion's transfer record).
    extra: dict[str, object] = field(default_factory=dict)
    #: The runtime count of the finding's site, when ``check`` was given a profile.
    profile: ProfileCount | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability > Applicability.DISPLAY_ONLY

    def fix_applies(self, unsafe_fixes: bool) -> bool:
        return self.fix is not None and self.fix.applies(unsafe_fixes)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.filename, self.location.row, self.location.column, self.code)
