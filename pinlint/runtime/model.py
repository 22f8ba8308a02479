"""What a watch records: births, transfers, violations (the report is in report.py). No torch import here, so the
pytest plugin and the CLI can use these types in processes that never load torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pinlint.core.diagnostics import Diagnostic, Location
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
