"""PIN003 blocking-device-construction: ``torch.tensor(data, device=<not host>)`` builds in
pageable memory and copies with a blocking copy. Docs and examples: ``PIN003.toml``.

Events come from two paths with one meaning: the interpreter's ``DeviceConstruction`` (libcst,
in functions that other rules parse anyway) and the ``ast`` fast path's ``ConstructionSite``
(``analysis/fast_constructions.py``). Both become a ``ConstructionSite`` first, so that the
finding, its message and its fix are built by one function.
"""

from __future__ import annotations

from pinlint.analysis.events import ConstructionSite, DeviceConstruction
from pinlint.analysis.triage import Trigger
from pinlint.core.diagnostics import Applicability
from pinlint.core.results import Finding, FixPlan, PlannedEdit
from pinlint.rules.base import Rule, RuleContext

TITLE = "Build pinned on the host, then copy with non_blocking=True"
UNSAFE_REASON = (
    "the result is now filled asynchronously: code that relied on the blocking copy as a "
    "synchronisation point with the stream may need an explicit one"
)
#: Added to the reason when the data is not provably Python data.
UNKNOWN_DATA_REASON = "the data is not provably Python data, and `pin_memory=True` raises for a numpy array or a tensor"
PATTERN = "`torch.tensor(..., pin_memory=<helper>(device)).to(device, non_blocking=True)`"
NO_FIX = f"no automatic fix: use {PATTERN}"
NO_FIX_REQUIRES_GRAD = (
    "no automatic fix: with `requires_grad=`, `.to(device)` would return a non-leaf tensor; "
    f"build it with {PATTERN} and call `.requires_grad_()` on the result"
)
NO_FIX_ARRAY = (
    "no automatic fix: numpy or tensor data cannot be pinned through `torch.tensor(..., pin_memory=)`; "
    "copy it into a pinned buffer and copy that with `non_blocking=True`"
)


#: A file without any of these cannot construct a tensor from data: ``tensor(``, ``as_tensor(``,
#: ``asarray(`` (found with plain substring tests), or an alias import (``from torch import
#: tensor as tt``, the regex).
DATA_FACTORY_CALLS = (b"tensor(", b"asarray(")
DATA_FACTORY_ALIAS = rb"\b(?:tensor|as_tensor|asarray)[ \t]+as\b"


def message(factory: str) -> str:
    return (
        f"`torch.{factory}(<host data>, device=...)` copies from pageable memory and blocks the host "
        "until the stream catches up; build it pinned on the host and copy it with `non_blocking=True`"
    )


class BlockingDeviceConstruction(Rule):
    code = "PIN003"
    listens_to = frozenset({DeviceConstruction})
    #: A ``device=`` line, in a file that calls a data factory (or imports one under an alias).
    triggers = (Trigger(b"device", r"\bdevice[ \t]*=", requires=DATA_FACTORY_ALIAS, requires_any=DATA_FACTORY_CALLS),)

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, DeviceConstruction):
            return None
        import libcst as cst

        from pinlint.analysis.callargs import has_star_kwargs

        if isinstance(ctx.interpreter.scope, cst.Module):
            return None  # module level runs once, at import time: blocking does not matter there
        call, arg = event.call, event.device_arg
        start, end = ctx.start(call), ctx.positions.end(call)
        if isinstance(event.statement, cst.Module):
            rows = (start.row, end.row)
        else:
            rows = ctx.positions.rows(event.statement)
        site = ConstructionSite(
            factory=event.factory,
            data=event.data,
            requires_grad=event.requires_grad,
            star_kwargs=has_star_kwargs(call),
            call_start=start,
            call_end=end,
            device_start=ctx.start(arg.keyword) if arg.keyword else ctx.start(arg.value),
            device_end=ctx.positions.end(arg.value),
            device_text=ctx.source(arg.value),
            statement_rows=rows,
        )
        return self.site_finding(site, ctx.positions.snippet(start.row))

    def site_finding(self, site: ConstructionSite, snippet: str) -> Finding:
        """The finding for a construction, whichever path found it."""
        plan: FixPlan | None = None
        note: str | None = None
        if site.factory != "tensor":
            note = NO_FIX  # as_tensor/asarray take no pin_memory=
        elif site.requires_grad:
            note = NO_FIX_REQUIRES_GRAD
        elif site.data in ("numpy", "tensor"):
            note = NO_FIX_ARRAY
        elif "\n" in site.device_text or site.star_kwargs:
            # A multi-line device expression cannot be repeated on one line; **kwargs may hold
            # device= too.
            note = NO_FIX
        else:
            edits = (
                PlannedEdit(site.device_start, site.device_end, "pin_memory=", helper_call=True),
                PlannedEdit(site.call_end, site.call_end, f".to({site.device_text}, non_blocking=True)"),
            )
            reason = UNSAFE_REASON if site.data == "python" else f"{UNKNOWN_DATA_REASON}; {UNSAFE_REASON}"
            plan = FixPlan(edits, site.device_text, Applicability.UNSAFE, reason, TITLE)
        return Finding(
            code=self.code,
            message=message(site.factory),
            location=site.call_start,
            end_location=site.call_end,
            statement_rows=site.statement_rows,
            sink_rows=(site.call_start.row, site.call_end.row),
            snippet=snippet,
            noqa_codes=frozenset(),
            fix_plan=plan,
            fix_note=note,
        )
