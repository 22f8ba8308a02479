"""What a watch records: births, transfers, violations, and the report. No torch import here, so the
pytest plugin and the CLI can use these types in processes that never load torch."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pinlint import profile as profile_format
from pinlint.core.diagnostics import Diagnostic, Location
from pinlint.runtime.profiling import ProfileRecorder
from pinlint.runtime.sites import Site
from pinlint.torch_api import RUNTIME_DATA_TO_DEVICE_FACTORIES

#: Transfer kinds.
BLOCKING = "blocking"  #: non_blocking=False: synchronous by request; not a violation
ASYNC = "pinned-non-blocking"  #: what the code means: pinned source, non_blocking=True
PAGEABLE = "pageable-non-blocking"  #: violation: non_blocking=True from pageable memory
STAGED = "pinned-but-staged"  #: violation: pinned, but a layout that copies through a pageable temporary
VIOLATION_KINDS = frozenset({PAGEABLE, STAGED})
#: A host read of a non_blocking device-to-host copy's destination before the copy was known done.
UNSYNCED_READ = "unsynchronized-host-read"
#: ``torch.tensor(data, device=cuda)`` and its kin: a transfer that is a device construction.
_DEVICE_CONSTRUCTIONS = frozenset(f"torch.{n}" for n in RUNTIME_DATA_TO_DEVICE_FACTORIES)

PIN001 = "PIN001"
PIN002 = "PIN002"
PIN004 = "PIN004"
PIN005 = "PIN005"
#: Used when the rule catalog is not available (e.g. rules/ missing in a partial checkout).
_FALLBACK_NAMES = {
    PIN001: "unpinned-non-blocking-copy",
    PIN002: "unpinnable-non-blocking-source",
    PIN004: "unsynchronized-device-to-host-read",
    PIN005: "non-contiguous-pinned-source",
}


class PageableNonBlockingCopy(RuntimeError):
    """A watch's violation (strict mode, or ``assert_clean``): a non_blocking H2D copy read pageable
    host memory, or (PIN004) a host read came before a non_blocking D2H copy was synchronised."""

    def __init__(self, message: str, violations: list[Violation]) -> None:
        super().__init__(message)
        self.violations = violations


class PinlintRuntimeWarning(UserWarning):
    """Emitted by the pytest plugin in ``--pinlint-runtime=warn`` mode."""


def rule_identity(code: str) -> tuple[str, str]:
    """``(name, url)`` of a rule, from the catalog when it is there."""
    try:
        from pinlint.catalog import DOCS_BASE_URL, get_rule

        rule = get_rule(code)
    except Exception:  # noqa: BLE001 - a broken catalog must not break a test run
        rule, DOCS_BASE_URL = None, "https://github.com/pinlint/torch-pinlint/blob/main/docs/rules"
    if rule is not None:
        return rule.name, rule.url
    name = _FALLBACK_NAMES.get(code, code.lower())
    return name, f"{DOCS_BASE_URL}/{code}-{name}.md"


@dataclass(frozen=True)
class Birth:
    """Where the source's storage was created inside the watch."""

    factory: str  #: "torch.tensor", "Tensor.new_zeros", "torch.as_tensor", ...
    site: Site
    #: The factory accepts ``pin_memory=`` and the data is not numpy/tensor: PIN001's fix applies.
    pinnable: bool
    #: Why a factory that accepts ``pin_memory=`` cannot be pinned here (numpy or tensor data).
    note: str = ""
    #: The call passed ``pin_memory=`` and it evaluated False at run time (a helper said no).
    pin_memory_false: bool = False


@dataclass(frozen=True)
class Transfer:
    """One host-to-device copy seen by the watch."""

    api: str  #: "Tensor.to", "Tensor.cuda", "Tensor.copy_", "torch.tensor" (device= construction)
    site: Site | None  #: the copy's call site (first user frame)
    device: str
    non_blocking: bool
    pinned: bool
    contiguous: bool
    #: A pinned source whose layout makes the copy stage through pageable memory (see layout.py).
    staged: bool
    nbytes: int
    dtype: str
    birth: Birth | None = None
    via: str | None = None  #: "nn.Module.to" when the copy is one parameter of a module move
    simulated: bool = False

    @property
    def kind(self) -> str:
        if not self.non_blocking:
            return BLOCKING
        if not self.pinned:
            return PAGEABLE
        return STAGED if self.staged else ASYNC

    @property
    def is_violation(self) -> bool:
        return self.kind in VIOLATION_KINDS

    def describe(self) -> str:
        api = self.via or self.api
        where = str(self.site) if self.site else "<unknown>"
        return f"{api} at {where} -> {self.device} ({self.nbytes} B, {self.dtype}, non_blocking={self.non_blocking})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "via": self.via,
            "site": _site_dict(self.site),
            "device": self.device,
            "non_blocking": self.non_blocking,
            "pinned": self.pinned,
            "contiguous": self.contiguous,
            "staged": self.staged,
            "kind": self.kind,
            "nbytes": self.nbytes,
            "dtype": self.dtype,
            "birth": None
            if self.birth is None
            else {
                "factory": self.birth.factory,
                "site": _site_dict(self.birth.site),
                "pinnable": self.birth.pinnable,
                "note": self.birth.note,
                "pin_memory_false": self.birth.pin_memory_false,
            },
            "simulated": self.simulated,
        }


@dataclass(frozen=True)
class DeviceToHostCopy:
    """One non_blocking device-to-host copy into pinned host memory (``.to("cpu",
    non_blocking=True)``, ``host.copy_(dev, non_blocking=True)``), as PIN004's runtime sees it."""

    api: str  #: "Tensor.to", "Tensor.copy_"
    site: Site | None  #: the copy's call site
    device: str  #: the source's device
    nbytes: int
    dtype: str
    simulated: bool = False
    via: str | None = None

    @property
    def kind(self) -> str:
        return UNSYNCED_READ

    def describe(self) -> str:
        where = str(self.site) if self.site else "<unknown>"
        return f"{self.via or self.api} at {where} <- {self.device} ({self.nbytes} B, {self.dtype}, non_blocking=True)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "via": self.via,
            "site": _site_dict(self.site),
            "direction": "device-to-host",
            "device": self.device,
            "non_blocking": True,
            "nbytes": self.nbytes,
            "dtype": self.dtype,
            "simulated": self.simulated,
        }


def _site_dict(site: Site | None) -> dict[str, Any] | None:
    if site is None:
        return None
    _row, col, end_row, end_col = site.span
    return {
        "filename": site.filename,
        "row": site.row,
        "column": col,
        "end_row": end_row,
        "end_column": end_col,
        "function": site.function,
    }


@dataclass(frozen=True)
class Violation:
    """A transfer classified as a finding, in the static checker's codes."""

    code: str
    kind: str
    location: Site
    message: str
    #: The copy: a host-to-device transfer, or (PIN004) the device-to-host copy read too early.
    transfer: Transfer | DeviceToHostCopy

    @property
    def copy_site(self) -> Site | None:
        return self.transfer.site

    @property
    def name(self) -> str:
        return rule_identity(self.code)[0]

    def to_diagnostic(self) -> Diagnostic:
        name, url = rule_identity(self.code)
        row, col, end_row, end_col = self.location.span
        return Diagnostic(
            code=self.code,
            name=name,
            message=self.message,
            filename=self.location.filename,
            location=Location(row, col),
            end_location=Location(end_row, end_col),
            noqa_row=row,
            url=url,
            fix=None,
            extra={"runtime": self.transfer.to_dict()},
        )

    def __str__(self) -> str:
        return f"{self.location}: {self.code} {self.message}"


def classify(transfer: Transfer) -> Violation | None:
    """Turn a violating transfer into a finding that points where the fix belongs.

    * PIN001: the source came from a factory that accepts ``pin_memory=`` (with Python data); the
      location is the factory's line, the one ``pinlint --fix`` rewrites.
    * PIN002: any other pageable source (``as_tensor``, ``cat``, numpy data, arithmetic, or a tensor
      born outside the watch); the location is the birth site when known, else the copy site.
    * PIN005: a pinned source staged through pageable memory (a non-contiguous or broadcast layout),
      at the *copy* site: pinning at birth is already done; the layout at the copy must change.
    """
    kind = transfer.kind
    if kind not in VIOLATION_KINDS:
        return None
    copy_site = transfer.site or Site("<unknown>", 0)
    copy = f"{transfer.via or transfer.api} at {copy_site}"
    birth = transfer.birth
    if kind == STAGED:
        message = (
            f"Pinned source is not contiguous: {copy} (non_blocking=True, {transfer.nbytes} B to {transfer.device}) "
            f"stages through a pageable temporary; copy a contiguous pinned buffer instead"
        )
        return Violation(PIN005, kind, copy_site, message, transfer)
    if birth is not None and birth.pinnable and birth.pin_memory_false:
        message = (
            f"`{birth.factory}` result reaches a non_blocking H2D copy from pageable memory ({copy}, "
            f"{transfer.nbytes} B to {transfer.device}); its `pin_memory=` argument evaluated to False at run time: "
            f"make it true wherever the copy is non_blocking (on a machine without CUDA, simulate it: --simulate-cuda)"
        )
        return Violation(PIN001, kind, birth.site, message, transfer)
    if birth is not None and birth.pinnable:
        message = (
            f"`{birth.factory}` result reaches a non_blocking H2D copy from pageable memory ({copy}, "
            f"{transfer.nbytes} B to {transfer.device}); build it with `pin_memory=`"
        )
        return Violation(PIN001, kind, birth.site, message, transfer)
    if birth is not None:
        why = f" ({birth.note})" if birth.note else ""
        message = (
            f"`{birth.factory}` result{why} reaches a non_blocking H2D copy from pageable memory ({copy}, "
            f"{transfer.nbytes} B to {transfer.device}); it cannot be pinned at birth: stage into a pinned buffer"
        )
        return Violation(PIN002, kind, birth.site, message, transfer)
    message = (
        f"Non_blocking H2D copy from pageable memory ({copy}, {transfer.nbytes} B to {transfer.device}); "
        f"the source was not created by a known factory inside the watch"
    )
    return Violation(PIN002, kind, copy_site, message, transfer)


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
