"""Proofs a safe PIN001 fix needs, beyond "the data is Python data": the device expression can
be evaluated where the tensor is allocated, to the value it has at the copy, and no host write
can follow the copy once the tensor is pinned (the copy then really is asynchronous).

Each check returns the reason the fix is not safe, or None. A reason that makes the fix
impossible (the expression would raise at the construction) comes back as ``Decline``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import torch_semantics
from pinlint.analysis.binding import DefiniteAssignment, _captures
from pinlint.analysis.cst_walk import children, mentioned
from pinlint.analysis.events import SinkHit
from pinlint.analysis.scopes import BoundNames, dotted, statements_in
from pinlint.fix.guards import guard_test
from pinlint.fix.scope_memo import per_scope
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
    if type(node) in (cst.SimpleString, cst.Integer, cst.FormattedString):
        return True
    if type(node) is cst.Call and ctx.interpreter.names.torch_function(node.func) == "device":
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
    scope_names = per_scope(ctx, "names", lambda: _ScopeNames(scope))
    comprehension_bound = scope_names.comprehension & names
    if comprehension_bound:
        name = sorted(comprehension_bound)[0]
        return Decline(
            f"no automatic fix: `{name}` is bound by a comprehension or lambda at the copy, not where the tensor is allocated"
        )
    local = scope_names.local & names
    if local:
        definite = per_scope(ctx, "definite assignment", lambda: DefiniteAssignment(scope, ctx.positions.rows))
        bound = definite.bound_at(construction_row, local)
        unbound = sorted(local - bound)
        if unbound:
            return Decline(
                f"no automatic fix: `{unbound[0]}` is not bound on every path to the construction, "
                "so the device is not known where the tensor is allocated"
            )
    sink_row = ctx.start(hit.sink).row
    guard = guard_test(scope, construction_row, sink_row, hit, names, ctx)
    if guard is not None:
        return f"the copy's device is only evaluated under `{guard}`, which may not hold where the tensor is allocated"
    chain = dotted(device)
    summaries = getattr(interpreter, "summaries", None)
    if chain is not None and "." in chain and summaries is not None:
        attr = chain.rsplit(".", 1)[1]
        if any(indented for _, indented in summaries.scan.defs(attr)):
            # `self.device` may be a property: read where the tensor is allocated, it runs
            # earlier (and once more) than the copy's read of it, and may fail there.
            return f"`{chain}` may be a property (this file defines a method `{attr}`), read earlier by the fix"
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
    assumed = ctx.interpreter.assumed.get(origin) or birth.assumed.get(origin)
    constants = (
        [
            f"it assumes `{assumed}` keeps the value this file gives it (code that value rules out "
            "names the tensor and was not checked for writes that could race with the copy)"
        ]
        if assumed
        else []
    )
    uses = list(ctx.interpreter.uses.by_origin.get(origin, []))
    if birth is not ctx.interpreter:
        uses += birth.uses.by_origin.get(origin, [])
    if not uses:
        return constants
    birth_row = ctx.start(origin.node).row
    birth_loops = set(birth.uses.birth_loops.get(id(origin.node), ()))
    sink_row = ctx.start(hit.sink).row
    problems: list[str] = constants
    for use in uses:
        row = ctx.start(use.node).row
        if use.kind == "escape":
            if use.attribute is not None:
                writer = _attribute_written_elsewhere(use.attribute, ctx, whole_file=across_functions)
                if writer is not None:
                    problems.append(
                        f"`{use.attribute}` is written on line {writer}: once pinned, the copy on "
                        f"{ctx.where(hit.sink, hit)} is asynchronous and such a write can race with it"
                    )
                continue
            problems.append(
                f"the tensor is {use.what} on {ctx.where(use.node, hit)}, where a later write to it cannot be "
                f"ruled out (once pinned, the copy on {ctx.where(hit.sink, hit)} is asynchronous)"
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
                f"{use.what} on {ctx.where(use.node, hit)} writes the tensor after the copy on "
                f"{ctx.where(hit.sink, hit)}; once pinned, the copy is asynchronous and races with that write"
            )
    return problems


# ---------------------------------------------------------------------------- helpers
def _free_names(node: cst.BaseExpression) -> set[str]:
    """Names evaluated by ``node`` (attribute names and keywords excluded)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)
        elif type(current) is cst.Attribute:
            stack.append(current.value)
        elif type(current) is cst.Arg:
            stack.append(current.value)
        else:
            stack.extend(children(current))
    return found


class _ScopeNames:
    """The names a scope binds, from one walk of it.

    ``local``: its own names: parameters, assignment and loop targets, imports, defs, and the
    names that ``match`` patterns and walrus expressions bind. ``comprehension``: names bound by
    comprehension targets and lambda parameters (and so not where the tensor is allocated)."""

    def __init__(self, scope: cst.FunctionDef | cst.Module) -> None:
        collector = BoundNames()
        if type(scope) is cst.FunctionDef:
            collector.params(scope.params)
            collector.statements(statements_in(scope.body))
        else:
            collector.statements(list(scope.body))
        self.local = set(collector.names)
        self.comprehension: set[str] = set()
        root: cst.CSTNode = scope.body if type(scope) is cst.FunctionDef else scope
        stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]  # (node, inside a lambda)
        while stack:
            node, in_lambda = stack.pop()
            if type(node) in (cst.FunctionDef, cst.ClassDef) and node is not scope:
                continue  # another scope
            if type(node) is cst.CompFor:
                self.comprehension |= mentioned(node.target)
            elif type(node) is cst.Lambda:
                params = node.params
                self.comprehension |= {
                    p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]
                }
                in_lambda = True  # its body is another scope: its walrus targets are not ours
            elif in_lambda:
                pass  # in a lambda's body only comprehension and lambda names count
            elif type(node) is cst.NamedExpr and type(node.target) is cst.Name:
                self.local.add(node.target.value)
            elif type(node) is cst.MatchCase:
                self.local |= _captures(node.pattern, alternatives=True)  # every name a case may bind
            stack.extend((child, in_lambda) for child in children(node))


def _call_between(scope: cst.CSTNode, construction_row: int, sink_row: int, base: str, ctx: RuleContext) -> str | None:
    """A call between the construction and the copy that is a method of ``base`` or receives it."""
    for first, _last, func, roots, node in _calls(scope, ctx):
        if construction_row < first < sink_row and (func.startswith(base + ".") or base in roots):
            return ctx.source(node.func) + "()"
    return None


def _calls(scope: cst.CSTNode, ctx: RuleContext) -> list[tuple[int, int, str, frozenset[str], cst.Call]]:
    """The calls a scope makes that could change an attribute (tensor methods cannot): row span,
    callee, the root names of the arguments. Computed once per scope, however many findings ask."""
    return per_scope(ctx, "calls", lambda: _scope_calls(scope, ctx))


def _scope_calls(scope: cst.CSTNode, ctx: RuleContext) -> list[tuple[int, int, str, frozenset[str], cst.Call]]:
    rows = ctx.positions.rows
    found: list[tuple[int, int, str, frozenset[str], cst.Call]] = []
    stack: list[cst.CSTNode] = [scope.body] if type(scope) is cst.FunctionDef else [scope]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue  # defined, not run here
        if type(node) is cst.Call:
            func = dotted(node.func) or ""
            method = func.rsplit(".", 1)[-1]
            if not (type(node.func) is cst.Attribute and method in _READ_ONLY_METHODS):
                # A tensor method (`x.to(base.device)`, `base.dim()`) changes no attribute.
                roots = frozenset((dotted(arg.value) or "").split(".", 1)[0] for arg in node.args)
                first, last = rows(node)
                found.append((first, last, func, roots, node))
        stack.extend(children(node))
    return found


def _attribute_written_elsewhere(attribute: str, ctx: RuleContext, whole_file: bool = False) -> int | None:
    """A line of this file, outside the function analysed, that writes into the tensor held by
    ``attribute`` (``self.x[i] = v``, ``self.x += 1``, ``self.x.fill_(0)``) or hands it to code
    we do not see. Rebinding the attribute (``self.x = other``) is no write to the tensor."""
    name = attribute.rsplit(".", 1)[-1]
    scope = ctx.interpreter.scope
    first, last = ctx.positions.rows(scope) if type(scope) is cst.FunctionDef and not whole_file else (0, 0)
    if not re.fullmatch(r"\w+", name):
        return _first_write(name, ctx.positions.lines, first, last)  # not a name the file index reads
    # The analysed function itself is skipped: its uses were followed precisely.
    rows = _attribute_writes(ctx.positions.lines).get(name, [])
    if rows and rows[0] < first:
        return rows[0]
    after = bisect.bisect_right(rows, last)
    return rows[after] if after < len(rows) else None


def _write_pattern(name: str) -> str:
    return (
        rf"\.{name}\s*(?:\[[^\]\n]*\]\s*)?(?:[-+*/%&|^@]|//|\*\*|<<|>>)=|"  # augmented assignment
        rf"\.{name}\s*\[[^\]\n]*\]\s*=(?!=)|"  # item assignment
        rf"\.{name}(?:\[[^\]\n]*\])?\.(?:\w+_|numpy)\(|"  # in-place method, numpy view
        rf"(?<!copy_)\(\s*[\w.]*\.{name}\s*[,)]|,\s*[\w.]*\.{name}\s*[,)]"  # passed as an argument
    )


#: Every attribute a line writes into: the pattern above with the name captured, tried at every
#: position (inside a lookahead, so that matches may overlap as one search per name finds them).
_ANY_WRITE = re.compile("(?=(?:" + _write_pattern(r"(\w+)") + "))")

#: The last file's index (by the identity of its lines): name -> rows that write into it.
_last_index: tuple[list[str], dict[str, list[int]]] | None = None


def _attribute_writes(lines: list[str]) -> dict[str, list[int]]:
    """For each attribute name, the rows (in order) whose code writes into it: one pass over
    the file, however many findings ask (a scan per finding made it quadratic)."""
    global _last_index
    if _last_index is not None and _last_index[0] is lines:
        return _last_index[1]
    index: dict[str, list[int]] = {}
    for row, line in enumerate(lines, start=1):
        code = line.split("#", 1)[0]
        found = {next(g for g in m.groups() if g is not None) for m in _ANY_WRITE.finditer(code)}
        for name in found:
            index.setdefault(name, []).append(row)
    _last_index = (lines, index)
    return index


def _first_write(name: str, lines: list[str], first: int, last: int) -> int | None:
    """The first row outside ``first..last`` that writes into ``name``, by a search per line."""
    writes = re.compile(_write_pattern(re.escape(name)))
    for row, line in enumerate(lines, start=1):
        if first <= row <= last:
            continue
        if writes.search(line.split("#", 1)[0]):
            return row
    return None
