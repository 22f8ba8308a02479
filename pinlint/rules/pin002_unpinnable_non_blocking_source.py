"""PIN002 unpinnable-non-blocking-source: a provably host, pageable tensor that cannot be pinned
where it is made reaches a non_blocking host-to-device copy. Docs and examples: ``PIN002.toml``."""

from __future__ import annotations

from pinlint import torch_api
from pinlint.analysis.events import SinkHit
from pinlint.core.results import Finding
from pinlint.rules.base import NON_BLOCKING_TRIGGERS, Rule, RuleContext

REMEDY = (
    "no automatic fix: this value cannot take `pin_memory=` where it is made; copy it into a "
    "pinned staging buffer that you allocate once with `pin_memory=True` and reuse "
    "(`staging[:n].copy_(src)`), or pin the data where it is first built"
)

#: For a data loader's batch: the loader pins its batches when asked to.
LOADER_REMEDY = (
    "no automatic fix: pass `pin_memory=True` to the loader, whose pin thread then copies each "
    "batch into pinned memory before the loop takes it"
)


class UnpinnableNonBlockingSource(Rule):
    code = "PIN002"
    listens_to = frozenset({SinkHit})
    triggers = NON_BLOCKING_TRIGGERS

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, SinkHit) or event.origin.pinnable:
            return None  # PIN001's case: pin_memory= can be added at the birth
        # The headline says what is wrong; the help line (REMEDY) says why pinning at birth fails.
        message = f"{_article(event.origin.what)} is pageable and {ctx.reaches(event)}: the copy is not asynchronous"
        remedy = LOADER_REMEDY if event.origin.factory in torch_api.HOST_BATCH_LOADERS else REMEDY
        return ctx.copy_finding(self.code, event, message, note=remedy)


def _article(what: str) -> str:
    if what.startswith(("torch.", ".")):
        return f"`{what}`"
    return what[0].upper() + what[1:] if what else "This value"
