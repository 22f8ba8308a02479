"""Proofs a safe PIN001 fix needs, beyond "the data is Python data": the device expression can
be evaluated where the tensor is allocated, to the value it has at the copy, and no host write
can follow the copy once the tensor is pinned (the copy then really is asynchronous).

Each check returns the reason the fix is not safe, or None. A reason that makes the fix
impossible (the expression would raise at the construction) comes back as ``Decline``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import torch_semantics
from pinlint.analysis.binding import _captures, bound_at
from pinlint.analysis.events import SinkHit
from pinlint.analysis.interpreter import _children, mentioned
from pinlint.analysis.scopes import BoundNames, dotted, statements_in
from pinlint.rules.base import RuleContext

#: Tensor methods that read their receiver and arguments: they set no attribute of anything.
_READ_ONLY_METHODS = frozenset(
    (torch_semantics.TENSOR_METHODS.keys() | torch_api.PYTHON_NUMBER_METHODS | torch_api.PYTHON_DATA_METHODS)
    - {"copy_"}
)

#: Parts of a name that say it holds a device (``device``, ``self.dev``, ``gpu_id``, ``d``).
_DEVICE_WORDS = re.compile(r"dev|cuda|gpu|rank|accelerator|xpu|npu|hpu|mps|^d$", re.I)


@dataclass(frozen=True)
class Decline:
    """No fix at all: applying it would break the program."""

    reason: str


def looks_like_device(node: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A literal, ``torch.device(...)``, or a name that says it is a device."""
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.FormattedString)):
        return True
    if isinstance(node, cst.Call) and ctx.interpreter.names.torch_function(node.func) == "device":
        return True
    chain = dotted(node)
    return chain is not None and bool(_DEVICE_WORDS.search(chain.rsplit(".", 1)[-1]))


def device_problem(hit: SinkHit, device: cst.BaseExpression, ctx: RuleContext) -> Decline | str | None:
    """Whether ``device`` (from the copy) means the same at the construction."""
    interpreter = ctx.interpreter
    scope = interpreter.scope
    construction = hit.origin.node
    assert construction is not None
    construction_row = ctx.start(construction).row
    names = _free_names(device)
    comprehension_bound = _comprehension_names(scope) & names
    if comprehension_bound:
        name = sorted(comprehension_bound)[0]
        return Decline(
            f"no automatic fix: `{name}` is bound by a comprehension or lambda at the copy, not where the tensor is allocated"
        )
    local = _local_names(scope) & names
    if local:
        bound = bound_at(scope, construction_row, local, ctx.positions.rows)
        unbound = sorted(local - bound)
        if unbound:
            return Decline(
                f"no automatic fix: `{unbound[0]}` is not bound on every path to the construction, "
                "so the device is not known where the tensor is allocated"
            )
    sink_row = ctx.start(hit.sink).row
    guard = _guard(scope, construction_row, sink_row, hit, names, ctx)
    if guard is not None:
        return f"the copy's device is only evaluated under `{guard}`, which may not hold where the tensor is allocated"
    chain = dotted(device)
    if chain is not None and "." in chain:
        caller = _call_between(scope, construction_row, sink_row, chain.split(".", 1)[0], ctx)
        if caller is not None:
            return f"`{caller}` runs between the allocation and the copy and may change `{chain}`"
    return None


def race_problems(hit: SinkHit, ctx: RuleContext, *, across_functions: bool = False) -> list[str]:
    """Host writes (or escapes, after which writes cannot be ruled out) that can follow the copy.

    ``across_functions``: the tensor lives on (in an attribute, or with the caller) between calls
    of the copying function, so any write anywhere may follow an earlier copy."""
    origin = hit.origin
    assert origin.node is not None
    birth = ctx.interpreter_of(origin.node)
    uses = list(ctx.interpreter.uses.by_origin.get(origin, []))
    if birth is not ctx.interpreter:
        uses += birth.uses.by_origin.get(origin, [])
    if not uses:
        return []
    birth_row = ctx.start(origin.node).row
    birth_loops = set(birth.uses.birth_loops.get(id(origin.node), ()))
    sink_row = ctx.start(hit.sink).row
    problems: list[str] = []
    for use in uses:
        row = ctx.start(use.node).row
        if use.kind == "escape":
            if use.attribute is not None:
                writer = _attribute_written_elsewhere(use.attribute, ctx, whole_file=across_functions)
                if writer is not None:
                    problems.append(
                        f"`{use.attribute}` is written on line {writer}: once pinned, the copy on line "
                        f"{sink_row} is asynchronous and such a write can race with it"
                    )
                continue
            problems.append(
                f"the tensor is {use.what} on line {row}, where a later write to it cannot be ruled out "
                f"(once pinned, the copy on line {sink_row} is asynchronous)"
            )
            continue
        follows = across_functions or row > sink_row or (row == sink_row and use.node is not hit.sink)
        for loop in set(use.loops) & set(hit.loops):
            # On the next iteration the write follows this iteration's copy, unless the tensor
            # is allocated afresh in that loop before the write.
            if loop not in birth_loops or row < birth_row:
                follows = True
        if follows:
            problems.append(
                f"{use.what} on line {row} writes the tensor after the copy on line {sink_row}; once "
                "pinned, the copy is asynchronous and races with that write"
            )
    return problems


# ---------------------------------------------------------------------------- helpers
def _free_names(node: cst.BaseExpression) -> set[str]:
    """Names evaluated by ``node`` (attribute names and keywords excluded)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Arg):
            stack.append(current.value)
        else:
            stack.extend(_children(current))
    return found


_LOCAL_MEMO: dict[int, tuple[cst.CSTNode, set[str]]] = {}
_COMPREHENSION_MEMO: dict[int, tuple[cst.CSTNode, set[str]]] = {}


def _memoised(memo: dict[int, tuple[cst.CSTNode, set[str]]], scope: cst.CSTNode, compute) -> set[str]:  # type: ignore[no-untyped-def]
    """Per-scope facts computed once however many findings of the scope ask (keyed by the node,
    kept alive with it so that an id is never reused for another scope)."""
    hit = memo.get(id(scope))
    if hit is not None and hit[0] is scope:
        return hit[1]
    if len(memo) > 256:
        memo.clear()
    value = compute(scope)
    memo[id(scope)] = (scope, value)
    return value


def _local_names(scope: cst.FunctionDef | cst.Module) -> set[str]:
    return _memoised(_LOCAL_MEMO, scope, _compute_local_names)


def _compute_local_names(scope: cst.FunctionDef | cst.Module) -> set[str]:
    """The scope's own names: parameters, assignment and loop targets, imports, defs, and the
    names that ``match`` patterns and walrus expressions bind."""
    collector = BoundNames()
    if isinstance(scope, cst.FunctionDef):
        collector.params(scope.params)
        collector.statements(statements_in(scope.body))
    else:
        collector.statements(list(scope.body))
    names = set(collector.names)
    stack: list[cst.CSTNode] = [scope.body] if isinstance(scope, cst.FunctionDef) else [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not scope:
            continue  # another scope
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
            names.add(node.target.value)
        elif isinstance(node, cst.MatchCase):
            names |= _captures(node.pattern, alternatives=True)  # every name a case may bind
        stack.extend(_children(node))
    return names


def _comprehension_names(scope: cst.CSTNode) -> set[str]:
    return _memoised(_COMPREHENSION_MEMO, scope, _compute_comprehension_names)


def _compute_comprehension_names(scope: cst.CSTNode) -> set[str]:
    """Names bound by comprehension targets, walrus in comprehensions and lambda parameters."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [scope.body] if isinstance(scope, cst.FunctionDef) else [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.CompFor):
            found |= mentioned(node.target)
        elif isinstance(node, cst.Lambda):
            params = node.params
            found |= {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not scope:
            continue  # another scope
        stack.extend(_children(node))
    return found


def _guard(
    scope: cst.FunctionDef | cst.Module,
    construction_row: int,
    sink_row: int,
    hit: SinkHit,
    names: set[str],
    ctx: RuleContext,
) -> str | None:
    """The test of a condition around the copy (not around the construction) that inspects one
    of the device expression's names (``if like is not None: x.to(like.device)``)."""
    rows = ctx.positions.rows
    statements = (
        list(scope.body.body)
        if isinstance(scope, cst.FunctionDef) and isinstance(scope.body, cst.IndentedBlock)
        else list(getattr(scope, "body", []))
    )
    tests: list[cst.BaseExpression] = []
    while statements:
        holder = next((s for s in statements if rows(s)[0] <= sink_row <= rows(s)[1]), None)
        if holder is None:
            break
        around_construction = rows(holder)[0] <= construction_row <= rows(holder)[1]
        if isinstance(holder, cst.If):
            # The copy's branch: every test of the chain up to it decides whether it runs.
            branch: cst.If | None = holder
            chosen: cst.BaseSuite | None = None
            while branch is not None:
                if not around_construction:
                    tests.append(branch.test)
                if rows(branch.body)[0] <= sink_row <= rows(branch.body)[1]:
                    chosen = branch.body
                    break
                if isinstance(branch.orelse, cst.If):
                    branch = branch.orelse
                else:
                    chosen = branch.orelse.body if branch.orelse is not None else None
                    branch = None
            statements = statements_in(chosen) if chosen is not None else []
        elif isinstance(holder, cst.While):
            if not around_construction:
                tests.append(holder.test)
            statements = statements_in(holder.body)
        elif isinstance(holder, (cst.For, cst.With, cst.Try, cst.TryStar)):
            suites = [holder.body]
            suites += [h.body for h in getattr(holder, "handlers", ())]
            for extra in ("orelse", "finalbody"):
                part = getattr(holder, extra, None)
                if part is not None:
                    suites.append(part.body)
            chosen = next((s for s in suites if rows(s)[0] <= sink_row <= rows(s)[1]), None)
            statements = statements_in(chosen) if chosen is not None else []
        elif isinstance(holder, cst.Match):
            chosen = next((c.body for c in holder.cases if rows(c)[0] <= sink_row <= rows(c)[1]), None)
            statements = statements_in(chosen) if chosen is not None else []
        else:
            # The copy's own statement: a conditional expression or `and`/`or` in it.
            tests.extend(_inline_conditions(holder))
            break
    for test in tests:
        if mentioned(test) & names:
            return ctx.source(test)
    return None


def _inline_conditions(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IfExp):
            found.append(node.test)
        elif isinstance(node, cst.BooleanOperation):
            found.append(node.left)
        stack.extend(_children(node))
    return found


def _call_between(scope: cst.CSTNode, construction_row: int, sink_row: int, base: str, ctx: RuleContext) -> str | None:
    """A call between the construction and the copy that is a method of ``base`` or receives it."""
    for first, _last, func, roots, node in _calls(scope, ctx):
        if construction_row < first < sink_row and (func.startswith(base + ".") or base in roots):
            return ctx.source(node.func) + "()"
    return None


def _calls(scope: cst.CSTNode, ctx: RuleContext) -> list[tuple[int, int, str, frozenset[str], cst.Call]]:
    """The calls a scope makes that could change an attribute (tensor methods cannot): row span,
    callee, the root names of the arguments. Computed once per scope, however many findings ask."""
    memo = ctx.interpreter.__dict__.setdefault("_calls_memo", {})
    if id(scope) in memo:
        return memo[id(scope)]
    rows = ctx.positions.rows
    found: list[tuple[int, int, str, frozenset[str], cst.Call]] = []
    stack: list[cst.CSTNode] = [scope.body] if isinstance(scope, cst.FunctionDef) else [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # defined, not run here
        if isinstance(node, cst.Call):
            func = dotted(node.func) or ""
            method = func.rsplit(".", 1)[-1]
            if not (isinstance(node.func, cst.Attribute) and method in _READ_ONLY_METHODS):
                # A tensor method (`x.to(base.device)`, `base.dim()`) changes no attribute.
                roots = frozenset((dotted(arg.value) or "").split(".", 1)[0] for arg in node.args)
                first, last = rows(node)
                found.append((first, last, func, roots, node))
        stack.extend(_children(node))
    memo[id(scope)] = found
    return found


def _attribute_written_elsewhere(attribute: str, ctx: RuleContext, whole_file: bool = False) -> int | None:
    """A line of this file, outside the function analysed, that writes into the tensor held by
    ``attribute`` (``self.x[i] = v``, ``self.x += 1``, ``self.x.fill_(0)``) or hands it to code
    we do not see. Rebinding the attribute (``self.x = other``) is no write to the tensor."""
    name = re.escape(attribute.rsplit(".", 1)[-1])
    writes = re.compile(
        rf"\.{name}\s*(?:\[[^\]\n]*\]\s*)?(?:[-+*/%&|^@]|//|\*\*|<<|>>)=|"  # augmented assignment
        rf"\.{name}\s*\[[^\]\n]*\]\s*=(?!=)|"  # item assignment
        rf"\.{name}(?:\[[^\]\n]*\])?\.(?:\w+_|numpy)\(|"  # in-place method, numpy view
        rf"(?<!copy_)\(\s*[\w.]*\.{name}\s*[,)]|,\s*[\w.]*\.{name}\s*[,)]"  # passed as an argument
    )
    scope = ctx.interpreter.scope
    first, last = ctx.positions.rows(scope) if isinstance(scope, cst.FunctionDef) and not whole_file else (0, 0)
    for index, line in enumerate(ctx.positions.lines, start=1):
        if first <= index <= last:
            continue  # the analysed function itself: its uses were followed precisely
        code = line.split("#", 1)[0]
        if writes.search(code):
            return index
    return None
