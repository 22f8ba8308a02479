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


#: For a factory whose `pin_memory=` is a parameter of its function that a call leaves `False`.
PIN_PARAMETER_REMEDY = (
    "no automatic fix: `pin_memory=` here is a parameter of the function, and the call that reaches "
    "the copy passes `False` for it (or leaves its default `False`); pass `True` there"
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
        if event.origin.factory in torch_api.HOST_BATCH_LOADERS:
            remedy = LOADER_REMEDY
        elif _passes_pin_memory(event.origin.node):
            remedy = PIN_PARAMETER_REMEDY  # (a pageable origin with `pin_memory=` given: see pin_switched)
        else:
            remedy = REMEDY
        return ctx.copy_finding(self.code, event, message, note=remedy)


def _passes_pin_memory(node: object) -> bool:
    """``node`` is a call that names ``pin_memory=`` (a pageable birth with it: a parameter a
    call left ``False``). libcst is imported here: the rules' modules load without it."""
    import libcst as cst

    from pinlint.analysis.callargs import keyword_args

    return type(node) is cst.Call and "pin_memory" in keyword_args(node)


def _article(what: str) -> str:
    if what.startswith(("torch.", ".")):
        return f"`{what}`"
    return what[0].upper() + what[1:] if what else "This value"
