"""PIN006 is-pinned-not-called: ``t.is_pinned`` of a tensor read as a truth value without the call.
A bound method is always true, so ``if t.is_pinned:`` never asks whether ``t`` is pinned: the
pinning branch never runs, or a pageable tensor takes the asynchronous path. Docs and examples:
``PIN006.toml``."""

from __future__ import annotations

from pinlint.analysis.events import UncalledIsPinned
from pinlint.analysis.triage import Trigger
from pinlint.core.diagnostics import Applicability
from pinlint.core.results import Finding, FixPlan, PlannedEdit
from pinlint.rules.base import Rule, RuleContext

#: ``.is_pinned`` not followed by a call's parenthesis.
TRIGGERS = (Trigger(b"is_pinned", r"\.is_pinned\b(?![ \t]*\()"),)

UNSAFE_REASON = "calling it changes which branch runs: that is the point, but it changes what the program does"


class IsPinnedNotCalled(Rule):
    code = "PIN006"
    listens_to = frozenset({UncalledIsPinned})
    triggers = TRIGGERS

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, UncalledIsPinned):
            return None
        text = ctx.source(event.attribute)
        message = (
            f"`{text}` is a method, and read without calling it, it is always true: the test never "
            f"asks whether the tensor is pinned; call it, `{text}()`"
        )
        end = ctx.positions.end(event.attribute)
        plan = FixPlan(
            (PlannedEdit(end, end, "()"),),
            None,
            Applicability.UNSAFE,
            UNSAFE_REASON,
            f"Call it: `{text}()`",
        )
        return ctx.finding(
            self.code,
            event.attribute,
            message,
            statement_rows=ctx.statement_rows(event.statement),
            sink_rows=ctx.positions.rows(event.attribute),
            plan=plan,
        )
