"""PIN001 unpinned-non-blocking-copy: a host tensor from a factory that accepts ``pin_memory=``
reaches a non_blocking host-to-device copy. Docs and examples: ``PIN001.toml``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pinlint.analysis.events import SinkHit
from pinlint.core.diagnostics import Applicability
from pinlint.core.results import Finding, FixPlan
from pinlint.rules.base import NON_BLOCKING_TRIGGERS, Rule, RuleContext

if TYPE_CHECKING:
    import libcst as cst

TITLE = "Allocate in pinned memory"


class UnpinnedNonBlockingCopy(Rule):
    code = "PIN001"
    listens_to = frozenset({SinkHit})
    triggers = NON_BLOCKING_TRIGGERS

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, SinkHit) or not event.origin.pinnable:
            return None  # PIN002's case: this birth cannot take pin_memory=
        # The headline says what is wrong; the help line says how to fix it (`pin_memory=`).
        message = f"`{event.origin.what}` is pageable and {ctx.reaches(event)}: the copy is not asynchronous"
        plan, note = _plan(event, ctx)
        return ctx.copy_finding(self.code, event, message, plan=plan, note=note)


def _device_text(ctx: RuleContext, node: cst.BaseExpression) -> tuple[str, bool]:
    """Source text of a device expression and whether evaluating it has no side effects."""
    import libcst as cst

    from pinlint.analysis.scopes import dotted

    pure = dotted(node) is not None or isinstance(node, (cst.SimpleString, cst.Integer))
    return ctx.source(node), pure


def _plan(hit: SinkHit, ctx: RuleContext) -> tuple[FixPlan | None, str | None]:
    import libcst as cst

    from pinlint.analysis.values import is_tensor
    from pinlint.fix import safety

    call = hit.origin.node
    if not isinstance(call, cst.Call):
        return None, "no automatic fix for this construction"
    if hit.via is not None or ctx.interpreter_of(call) is not ctx.interpreter:
        return _plan_across_functions(hit, ctx)
    unsafe: list[str] = []
    device_node: cst.BaseExpression | None
    allocated_on = _allocation_device(hit.copy_dst, ctx) if hit.copy_dst is not None else None
    if allocated_on is not None:
        # `torch.zeros(n, device=dev).copy_(x, ...)`: the destination's device is `dev`.
        device_text, pure = _device_text(ctx, allocated_on)
        device_node = allocated_on
        if not pure:
            unsafe.append("the device expression would be evaluated twice and may have side effects")
    elif hit.copy_dst is not None:
        dst_text, pure = _device_text(ctx, hit.copy_dst)
        if not pure:
            dst_text = f"({dst_text})"
            unsafe.append("the copy's destination is an expression that would be evaluated again")
        device_text: str | None = f"{dst_text}.device"
        device_node = hit.copy_dst
    elif hit.device is not None:
        device_text, pure = _device_text(ctx, hit.device)
        device_node = hit.device
        if not pure:
            unsafe.append("the device expression would be evaluated twice and may have side effects")
        if is_tensor(ctx.interpreter.value_of(hit.device)):
            # `.to(other_tensor, non_blocking=True)` copies to that tensor's device.
            device_text = f"{device_text}.device" if pure else f"({device_text}).device"
        elif not safety.looks_like_device(hit.device, ctx):
            unsafe.append(f"`{device_text}` may be a tensor or a dtype rather than a device")
    else:
        device_text, device_node = None, None  # `.cuda()`: the current CUDA device
    if device_text is not None and "\n" in device_text:
        return None, "no automatic fix: the device expression spans several lines"
    construction_row = ctx.start(call).row
    if not hit.chained and device_node is not None:
        late = _assigned_after(device_node, construction_row, ctx)
        if late is not None:
            return None, (
                f"no automatic fix: `{late}` is assigned after the construction, so the device is not "
                "known where the tensor is allocated"
            )
        problem = safety.device_problem(hit, device_node, ctx)
        if isinstance(problem, safety.Decline):
            return None, problem.reason
        if problem is not None:
            unsafe.append(problem)
    unsafe.extend(safety.race_problems(hit, ctx))
    return _finish(hit, ctx, device_text, unsafe)


def _plan_across_functions(hit: SinkHit, ctx: RuleContext) -> tuple[FixPlan | None, str | None]:
    """The tensor is allocated in one function and copied in another: the device expression of
    the copy must mean the same where the tensor is allocated."""
    import libcst as cst

    from pinlint.analysis.scopes import dotted
    from pinlint.analysis.summaries import argument_for
    from pinlint.fix import safety

    call = hit.origin.node
    assert isinstance(call, cst.Call)
    birth = ctx.interpreter_of(call)
    device = hit.device
    if hit.copy_dst is not None:
        return None, "no automatic fix: the copy's destination is in another function"
    unsafe: list[str] = []
    device_text: str | None = None
    if hit.via is not None:
        # The callee copies its parameter: its device, if a parameter too, is what this call
        # passes for it.
        copier = ctx.copier_of(hit.sink)
        if device is not None:
            if not (isinstance(device, cst.Name) and copier is not None and isinstance(copier.scope, cst.FunctionDef)):
                return None, "no automatic fix: the device of the copy in the callee is not known here"
            passed = argument_for(copier.scope, hit.via, device.value)
            if passed is None or dotted(passed) is None:
                return None, "no automatic fix: the device of the copy in the callee is not known here"
            device = passed
            device_text = ctx.source(passed)
    elif device is not None:
        chain = dotted(device)
        birth_scope = birth.scope
        params = _parameter_names(birth_scope)
        if chain is not None and chain.startswith("self.") and "self" in params:
            rows = [ctx.positions.rows(s)[0] for s in birth.bindings.get(chain, [])]
            if not rows or min(rows) >= ctx.start(call).row:
                name = birth_scope.name.value if isinstance(birth_scope, cst.FunctionDef) else "the module"
                return (
                    None,
                    f"no automatic fix: `{chain}` is not set in `{name}()` before the tensor is allocated there",
                )
            device_text = chain
        elif isinstance(device, cst.Name) and device.value in params:
            device_text = device.value
            unsafe.append(f"it assumes `{device.value}` where the tensor is allocated is the copy's device")
        else:
            return None, "no automatic fix: the copy's device is not known where the tensor is allocated"
    if device is not None and not safety.looks_like_device(device, ctx):
        unsafe.append(f"`{device_text}` may be a tensor or a dtype rather than a device")
    unsafe.extend(safety.race_problems(hit, ctx, across_functions=True))
    return _finish(hit, ctx, device_text, unsafe)


def _finish(
    hit: SinkHit, ctx: RuleContext, device_text: str | None, unsafe: list[str]
) -> tuple[FixPlan | None, str | None]:
    """The plan: `pin_memory=<helper>` on the construction, unsafe when any reason was found."""
    from pinlint.fix.edits import set_keyword_to_helper

    if hit.origin.factory == "tensor" and (
        not hit.origin.data_is_python
        # the first walk of a loop saw Python data; a later iteration may not (`data = arr`)
        or id(hit.origin.node) in ctx.interpreter_of(hit.origin.node).data_not_python
    ):
        unsafe.append(
            "the data may be a numpy array or a tensor, for which `torch.tensor(..., pin_memory=True)` raises"
        )
    switch = _pin_memory_name(hit.origin.node)
    if switch is not None and switch not in getattr(ctx.interpreter_of(hit.origin.node), "bindings", {}):
        unsafe.append(
            f"`pin_memory={switch}` is replaced: `{switch}` is False where the analysis looked, "
            "but code it cannot see (a test, a patch of the module) may set it"
        )
    edits = set_keyword_to_helper(hit.origin.node, "pin_memory", ctx.positions)
    if edits is None:
        return None, "no automatic fix: the call passes `**kwargs`, which may already hold `pin_memory`"
    plan = FixPlan(
        edits=edits,
        device_text=device_text,
        applicability=Applicability.UNSAFE if unsafe else Applicability.SAFE,
        unsafe_reason="; ".join(dict.fromkeys(unsafe)),
        title=TITLE,
    )
    return plan, None


def _pin_memory_name(node: object) -> str | None:
    """The name a ``pin_memory=`` argument of ``node`` passes, else None. (A local's every
    binding is in the function; a module constant's may not be.)"""
    import libcst as cst

    if not isinstance(node, cst.Call):
        return None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "pin_memory" and isinstance(arg.value, cst.Name):
            return arg.value.value if arg.value.value != "False" else None
    return None


def _parameter_names(scope: object) -> set[str]:
    import libcst as cst

    if not isinstance(scope, cst.FunctionDef):
        return set()
    params = scope.params
    return {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}


def _allocation_device(node: cst.BaseExpression, ctx: RuleContext) -> cst.BaseExpression | None:
    """The ``device=`` of a torch factory call (the destination of ``.copy_``), if visible."""
    import libcst as cst

    from pinlint import torch_api

    if not isinstance(node, cst.Call):
        return None
    name = ctx.interpreter.names.torch_function(node.func)
    if name not in torch_api.PINNABLE_FACTORIES and name not in torch_api.PINNABLE_LIKE_FACTORIES:
        return None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value
    return None


def _assigned_after(device: cst.BaseExpression | None, construction_row: int, ctx: RuleContext) -> str | None:
    """None when every name in ``device`` already holds its final value at the construction row;
    else the name that is (re)assigned later."""
    from pinlint.analysis.scopes import dotted

    if device is None:
        return None
    chain = dotted(device)
    keys: list[str] = []
    if chain is not None:
        parts = chain.split(".")
        keys = [".".join(parts[: i + 1]) for i in range(len(parts))]
    else:
        keys = _names_in(device)
    bindings = ctx.interpreter.bindings
    for key in keys:
        for statement in bindings.get(key, []):
            try:
                row = ctx.positions.rows(statement)[0]
            except KeyError:
                return key  # a statement outside the parsed segment: cannot place it
            if row >= construction_row:
                return key
    return None


def _names_in(node: cst.CSTNode) -> list[str]:
    import libcst as cst

    out: list[str] = []

    class _Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.append(n.value)

    node.visit(_Collect())
    return out
