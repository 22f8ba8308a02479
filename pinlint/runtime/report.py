"""The report of a watch: what it recorded, the violations, and their JSON and text forms."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pinlint import profile as profile_format
from pinlint.core.diagnostics import Diagnostic
from pinlint.runtime.model import (
    _DEVICE_CONSTRUCTIONS,
    PIN004,
    UNSYNCED_READ,
    DeviceToHostCopy,
    PageableNonBlockingCopy,
    Transfer,
    Violation,
    _site_dict,
    classify,
)
from pinlint.runtime.profiling import ProfileRecorder
from pinlint.runtime.sites import Site


@dataclass
class Report:
    """Everything one watch saw. Appends come from the watching thread(s) only; list.append is
    atomic under the GIL, so one Report may be shared by watches in several threads."""

    transfers: list[Transfer] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    simulated: bool = False
    #: Transfers not kept because ``max_records`` was reached (they are still counted).
    dropped: int = 0
    max_records: int = 100_000
    total: int = 0
    #: Non_blocking device-to-host copies seen (PIN004; not transfers: ``transfers`` are H2D).
    d2h_total: int = 0
    #: Torch copies the watch saw but could not classify (blind spots), by entry point.
    unclassified: Counter[str] = field(default_factory=Counter)
    #: Per-site counts for ``--profile`` (None: not profiling). Shared by the watches that record
    #: into this report; it keeps counting past ``max_records``.
    profile: ProfileRecorder | None = field(default=None, compare=False, repr=False)

    def add_read(self, copy: DeviceToHostCopy, read: Site, how: str) -> Violation:
        """A host read (``how``: ``Tensor.tolist``, ...) of ``copy``'s destination before the copy
        was known to be done: a PIN004 violation at the read."""
        before = "any synchronisation call" if copy.simulated else "the copy's event completed"
        message = (
            f"Host read ({how}) of the destination of a non_blocking device-to-host copy "
            f"({copy.via or copy.api} at {copy.site or '<unknown>'}, {copy.nbytes} B from {copy.device}) "
            f"before {before}: it may read stale data; synchronise the copy's stream (or an event "
            f"recorded after the copy) before reading"
        )
        violation = Violation(PIN004, UNSYNCED_READ, read, message, copy)
        if len(self.violations) < self.max_records:
            self.violations.append(violation)
        return violation

    def count_d2h(self) -> None:
        """A non_blocking device-to-host copy was issued (PIN004 watches its destination)."""
        self.d2h_total += 1

    def add_unclassified(self, what: str) -> None:
        self.unclassified[what] += 1

    def by_api(self) -> dict[str, int]:
        """How many kept transfers each entry point made (``nn.Module.to`` counted as such)."""
        return dict(Counter(t.via or t.api for t in self.transfers))

    def observed(self) -> str:
        """One line: what was seen, by entry point, and the blind spots hit."""
        apis = ", ".join(f"{api} x{n}" for api, n in sorted(self.by_api().items()))
        line = f"observed {self.total} H2D transfer(s)" + (f" ({apis})" if apis else "")
        if self.d2h_total:
            line += f" and {self.d2h_total} non_blocking D2H copy(ies)"
        blind = sum(self.unclassified.values())
        if blind:
            kinds = ", ".join(f"{k} x{n}" for k, n in sorted(self.unclassified.items()))
            line += f"; {blind} torch copy call(s) could not be classified ({kinds})"
        return line

    def count_construction(self, api: str, site: Site | None, nbytes: int) -> None:
        """A factory made a host tensor at ``site`` (counted only when profiling)."""
        if self.profile is not None:
            self.profile.count(profile_format.HOST_CONSTRUCTION, api, site, nbytes)

    def add(self, transfer: Transfer) -> Violation | None:
        self.total += 1
        if self.profile is not None:
            if transfer.non_blocking:
                kind = profile_format.NON_BLOCKING_COPY
            elif transfer.api in _DEVICE_CONSTRUCTIONS:
                kind = profile_format.DEVICE_CONSTRUCTION
            else:
                kind = profile_format.BLOCKING_COPY
            self.profile.count(kind, transfer.via or transfer.api, transfer.site, transfer.nbytes)
        violation = classify(transfer)
        if len(self.transfers) >= self.max_records:
            self.dropped += 1
        else:
            self.transfers.append(transfer)
            if violation is not None:
                self.violations.append(violation)
        return violation

    def grouped(self) -> list[tuple[Violation, int]]:
        """One entry per (code, location, copy site), with how many times it happened, in first-seen order."""
        counts: Counter[tuple[str, Site, Site | None]] = Counter()
        first: dict[tuple[str, Site, Site | None], Violation] = {}
        for v in self.violations:
            key = (v.code, v.location, v.copy_site)
            counts[key] += 1
            first.setdefault(key, v)
        return [(first[k], counts[k]) for k in first]

    def diagnostics(self) -> list[Diagnostic]:
        """Deduplicated findings in the static checker's model, sorted like its output."""
        seen: set[tuple[str, str, int, int]] = set()
        out: list[Diagnostic] = []
        for v, _count in self.grouped():
            d = v.to_diagnostic()
            key = (d.code, d.filename, d.location.row, d.location.column)
            if key not in seen:
                seen.add(key)
                out.append(d)
        return sorted(out, key=Diagnostic.sort_key)

    def summary(self) -> str:
        mode = " (simulated CUDA)" if self.simulated else ""
        d2h = f", {self.d2h_total} non_blocking D2H copy(ies)" if self.d2h_total else ""
        lines = [f"pinlint.runtime: {self.total} H2D transfer(s){d2h}{mode}, {len(self.violations)} violation(s)"]
        if self.unclassified:
            lines.append(f"  warning: {self.observed()}")
        for v, count in self.grouped():
            times = f" [x{count}]" if count > 1 else ""
            lines.append(f"  {v}{times}")
        return "\n".join(lines)

    def assert_clean(self) -> None:
        if self.violations:
            raise PageableNonBlockingCopy(self.summary(), list(self.violations))

    def to_dict(self) -> dict[str, Any]:
        return {
            "simulated": self.simulated,
            "total_transfers": self.total,
            "d2h_copies": self.d2h_total,
            "dropped": self.dropped,
            "by_api": self.by_api(),
            "unclassified": dict(self.unclassified),
            "transfers": [t.to_dict() for t in self.transfers],
            "violations": [
                {
                    **diagnostic_to_json(v.to_diagnostic()),
                    "kind": v.kind,
                    "copy_site": _site_dict(v.copy_site),
                    "count": n,
                }
                for v, n in self.grouped()
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


def diagnostic_to_json(d: Diagnostic) -> dict[str, Any]:
    """Exactly the fields of ruff's (and ``pinlint check``'s) JSON output; runtime findings carry no fix."""
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.filename,
        "location": {"row": d.location.row, "column": d.location.column},
        "end_location": {"row": d.end_location.row, "column": d.end_location.column},
        "fix": None,
        "noqa_row": d.noqa_row,
        "url": d.url,
    }
