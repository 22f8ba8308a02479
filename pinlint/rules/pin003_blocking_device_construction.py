"""PIN003 blocking-device-construction: ``torch.tensor(<python data>, device=<not host>)`` builds
in pageable memory and copies with a blocking copy. Docs and examples: ``PIN003.toml``."""

from __future__ import annotations

from pinlint.analysis.events import DeviceConstruction
from pinlint.analysis.triage import Trigger
from pinlint.core.diagnostics import Applicability
from pinlint.core.results import Finding, FixPlan
from pinlint.rules.base import Rule, RuleContext

TITLE = "Build pinned on the host, then copy with non_blocking=True"
UNSAFE_REASON = (
    "the result is now filled asynchronously: code that hands the host data to another stream or "
    "mutates the Python data source is unaffected, but behaviour on devices without pinned memory "
    "depends on the helper"
)
NO_FIX = "no automatic fix: use `torch.tensor(..., pin_memory=<helper>(device)).to(device, non_blocking=True)`"


class BlockingDeviceConstruction(Rule):
    code = "PIN003"
    listens_to = frozenset({DeviceConstruction})
    triggers = (Trigger(b"device", r"\bdevice[ \t]*="),)

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, DeviceConstruction):
            return None
        import libcst as cst

        from pinlint.analysis.callargs import has_star_kwargs
        from pinlint.fix.edits import append_after, replace_argument_by_helper

        call = event.call
        message = (
            f"`torch.{event.factory}(<python data>, device=...)` copies from pageable memory and blocks the "
            "host until the stream catches up; build it pinned on the host and copy it with `non_blocking=True`"
        )
        device_text = ctx.source(event.device_arg.value)
        plan: FixPlan | None = None
        note: str | None = None
        # as_tensor/asarray take no pin_memory=; **kwargs may hold device= too; a multi-line
        # device expression cannot be repeated on one line.
        if event.factory == "tensor" and "\n" not in device_text and not has_star_kwargs(call):
            edits = (
                replace_argument_by_helper(event.device_arg, "pin_memory", ctx.positions),
                append_after(call, f".to({device_text}, non_blocking=True)", ctx.positions),
            )
            plan = FixPlan(edits, device_text, Applicability.UNSAFE, UNSAFE_REASON, TITLE)
        else:
            note = NO_FIX
        start, end = ctx.start(call), ctx.positions.end(call)
        if isinstance(event.statement, cst.Module):
            rows = (start.row, end.row)
        else:
            rows = ctx.positions.rows(event.statement)
        return ctx.finding(
            self.code, call, message, statement_rows=rows, sink_rows=(start.row, end.row), plan=plan, note=note
        )
