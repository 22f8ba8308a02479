"""A runtime profile's counts on ``pinlint check``'s findings (``--profile``, ``--hot-only``):
which kind of site measures each rule, the lookup by position, and the notes the reports show.
The file format itself is ``profile.py``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pinlint.profile import (
    BLOCKING_COPY,
    DEVICE_CONSTRUCTION,
    HOST_CONSTRUCTION,
    NON_BLOCKING_COPY,
    Profile,
    file_key,
)

if TYPE_CHECKING:
    from pinlint.core.diagnostics import Diagnostic, ProfileCount


#: Which kinds of site measure a rule's finding, best first. A PIN001/PIN002 finding is at the
#: host construction; when the construction is not seen (``torch.from_numpy`` does not reach a
#: torch function mode) the copy chained on it starts at the same position. PIN003 is the device
#: construction call. PIN005 is at the copy.
RULE_KINDS: dict[str, tuple[str, ...]] = {
    "PIN001": (HOST_CONSTRUCTION, NON_BLOCKING_COPY),
    "PIN002": (HOST_CONSTRUCTION, NON_BLOCKING_COPY),
    "PIN003": (DEVICE_CONSTRUCTION, BLOCKING_COPY),
    "PIN005": (NON_BLOCKING_COPY,),
}


class ProfileIndex:
    """Profile sites by (file, row, column), for looking findings up."""

    def __init__(self, profile: Profile) -> None:
        self.runs = profile.runs
        self._at: dict[tuple[str, int, int], dict[str, tuple[int, int]]] = {}
        for entry in profile.entries():
            kinds = self._at.setdefault((entry.file, entry.row, entry.column), {})
            count, nbytes = kinds.get(entry.kind, (0, 0))
            kinds[entry.kind] = (count + entry.count, nbytes + entry.bytes)

    def lookup(self, code: str, file: str, row: int, column: int) -> tuple[str, int, int] | None:
        """``(kind, count, bytes)`` of the site that measures this finding, or None when the
        profile never saw it run. Raises KeyError for a rule the profile cannot measure."""
        kinds = RULE_KINDS[code]
        found = self._at.get((file, row, column), {})
        for kind in kinds:
            if kind in found:
                return (kind, *found[kind])
        return None

    def __iter__(self) -> Iterator[tuple[str, int, int]]:
        return iter(self._at)


def human_bytes(n: int) -> str:
    """``3.1 MB``: decimal units, one decimal from kB up."""
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        value /= 1000
        if value < 1000 or unit == "PB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # pragma: no cover


def describe(count: int, nbytes: int) -> str:
    """``ran 40,960 times, 3.1 MB``."""
    times = "once" if count == 1 else f"{count:,} times"
    return f"ran {times}, {human_bytes(nbytes)}"


def annotate(
    diagnostics: list[Diagnostic],
    index: ProfileIndex,
    root: str | os.PathLike[str],
    min_runs: int | None = None,
) -> tuple[list[Diagnostic], int]:
    """Put each finding's runtime count on it (``Diagnostic.profile``), hottest first.

    With ``min_runs``, findings whose site ran fewer times are dropped; findings of rules the
    profile cannot measure (PIN004: device-to-host reads are not recorded) are kept, since the
    profile says nothing about them. Returns the findings and how many were dropped.
    """
    from dataclasses import replace as with_fields

    from pinlint.core.diagnostics import ProfileCount

    kept: list[Diagnostic] = []
    dropped = 0
    for d in diagnostics:
        if d.code not in RULE_KINDS:
            count = ProfileCount(0, measured=False)
        else:
            hit = index.lookup(d.code, file_key(d.filename, root), d.location.row, d.location.column)
            count = ProfileCount(hit[1], hit[2], hit[0]) if hit else ProfileCount(0)
        if min_runs is not None and count.measured and count.count < min_runs:
            dropped += 1
            continue
        kept.append(with_fields(d, profile=count))
    kept.sort(key=lambda d: (-(d.profile.count if d.profile else 0), *d.sort_key()))
    return kept, dropped


def finding_note(count: ProfileCount) -> str:
    """What the human formats print beside a finding."""
    if not count.measured:
        return "not measured at run time"
    if count.count == 0:
        return "did not run"
    return describe(count.count, count.nbytes)
