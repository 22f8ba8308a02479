"""PIN005 non-contiguous-pinned-source: a provably non-contiguous view of a pinned buffer is copied
with non_blocking=True; PyTorch gathers it into a pageable temporary first. Docs and examples:
``PIN005.toml``; the layout reasoning: ``analysis/views.py``."""

from __future__ import annotations

from pinlint.analysis.events import StridedPinnedCopy
from pinlint.core.results import Finding
from pinlint.rules.base import NON_BLOCKING_TRIGGERS, Rule, RuleContext

_API_TEXT = {
    ".to": ".to(..., non_blocking=True)",
    ".cuda": ".cuda(non_blocking=True)",
    ".copy_": ".copy_(..., non_blocking=True)",
}
REMEDY = (
    "no automatic fix: copy row by row from the pinned buffer (each row is contiguous), or gather "
    "into a contiguous pinned staging buffer (`staging[:m].copy_(view)`) and copy that"
)


class NonContiguousPinnedSource(Rule):
    code = "PIN005"
    listens_to = frozenset({StridedPinnedCopy})
    triggers = NON_BLOCKING_TRIGGERS

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, StridedPinnedCopy):
            return None
        message = (
            f"`{ctx.source(event.source)}` is a non-contiguous view of a pinned buffer ({event.why}): "
            f"`{_API_TEXT[event.api]}` first gathers it into a pageable temporary, so the copy is "
            "neither pinned nor asynchronous"
        )
        rows = ctx.positions.rows(event.call)
        statement_rows = ctx.statement_rows(event.call)
        return ctx.finding(
            self.code,
            event.source,
            message,
            statement_rows=statement_rows,
            sink_rows=rows,
            note=REMEDY,
        )
