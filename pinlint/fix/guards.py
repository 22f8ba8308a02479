"""Is the copy guarded by a test of the device expression's names? The condition around the copy
(not around the construction) that inspects one of them: moving the device expression to the
construction would evaluate it where that test has not yet been made."""

from __future__ import annotations

import bisect
from collections.abc import Callable

import libcst as cst

from pinlint.analysis.cst_walk import children, mentioned
from pinlint.analysis.events import SinkHit
from pinlint.analysis.scopes import statements_in
from pinlint.fix.scope_memo import per_scope
from pinlint.rules.base import RuleContext


def guard_test(
    scope: cst.FunctionDef | cst.Module,
    construction_row: int,
    sink_row: int,
    hit: SinkHit,
    names: set[str],
    ctx: RuleContext,
) -> str | None:
    """The test of a condition around the copy (not around the construction) that inspects one
    of the device expression's names (``if like is not None: x.to(like.device)``); the outermost
    such test first. Blocks and ``elif`` chains are indexed once per scope: a finding costs its
    depth, not the length of the blocks around it."""
    rows = ctx.positions.rows
    index: _Index = per_scope(ctx, "blocks", lambda: _Index(rows))
    owner: cst.CSTNode | None = scope
    while owner is not None:
        holder = index.block(owner).holding(sink_row)
        if holder is None:
            return None
        around_construction = rows(holder)[0] <= construction_row <= rows(holder)[1]
        chosen: cst.BaseSuite | None
        if isinstance(holder, cst.If):
            # The copy's branch: every test of the chain up to it decides whether it runs.
            chain = index.chain(holder)
            taken = chain.bodies.index_holding(sink_row)
            if not around_construction:
                test = chain.first_test_of(names, len(chain.branches) - 1 if taken is None else taken)
                if test is not None:
                    return ctx.source(test)
            chosen = chain.orelse if taken is None else chain.branches[taken].body
        elif isinstance(holder, cst.While):
            if not around_construction and mentioned(holder.test) & names:
                return ctx.source(holder.test)
            chosen = holder.body
        elif isinstance(holder, (cst.For, cst.With, cst.Try, cst.TryStar)):
            suites = [holder.body]
            suites += [h.body for h in getattr(holder, "handlers", ())]
            for extra in ("orelse", "finalbody"):
                part = getattr(holder, extra, None)
                if part is not None:
                    suites.append(part.body)
            chosen = next((s for s in suites if rows(s)[0] <= sink_row <= rows(s)[1]), None)
        elif isinstance(holder, cst.Match):
            case = index.cases(holder).holding(sink_row)
            chosen = case.body if isinstance(case, cst.MatchCase) else None
        else:
            # The copy's own statement: a conditional expression or `and`/`or` in it (the same
            # statement for every tensor that reaches one copy: read once).
            inline: dict[int, list[tuple[cst.BaseExpression, set[str]]]] = per_scope(ctx, "inline", dict)
            if id(holder) not in inline:
                inline[id(holder)] = [(t, mentioned(t)) for t in _inline_conditions(holder)]
            return next((ctx.source(t) for t, seen in inline[id(holder)] if seen & names), None)
        owner = chosen
    return None


def _statements_of(block: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(block, cst.FunctionDef):
        return list(block.body.body) if isinstance(block.body, cst.IndentedBlock) else []
    if isinstance(block, cst.Module):
        return list(block.body)
    return statements_in(block) if isinstance(block, cst.BaseSuite) else []


class _InOrder:
    """The statements (or branches) of one block, found by row with a binary search: a scan per
    finding made a function with many copies quadratic."""

    def __init__(self, nodes: list[cst.CSTNode], rows: Callable[[cst.CSTNode], tuple[int, int]]) -> None:
        self.nodes = nodes
        spans = [rows(node) for node in nodes]
        self.firsts = [first for first, _ in spans]
        self.lasts = [last for _, last in spans]
        # Python's blocks put their statements on rows of their own; checked, not assumed.
        self.disjoint = all(self.lasts[i] < self.firsts[i + 1] for i in range(len(nodes) - 1))

    def index_holding(self, row: int) -> int | None:
        """The first node whose rows hold ``row``."""
        if not self.disjoint:
            return next((i for i in range(len(self.nodes)) if self.firsts[i] <= row <= self.lasts[i]), None)
        i = bisect.bisect_right(self.firsts, row) - 1
        return i if i >= 0 and row <= self.lasts[i] else None

    def holding(self, row: int) -> cst.CSTNode | None:
        i = self.index_holding(row)
        return None if i is None else self.nodes[i]


class _Chain:
    """An ``if``/``elif`` chain: its branches' bodies by row, its final ``else``, and for each
    name the first test that mentions it."""

    def __init__(self, head: cst.If, rows: Callable[[cst.CSTNode], tuple[int, int]]) -> None:
        self.branches = [head]
        while isinstance(self.branches[-1].orelse, cst.If):
            self.branches.append(self.branches[-1].orelse)
        self.bodies = _InOrder([b.body for b in self.branches], rows)
        last = self.branches[-1].orelse
        self.orelse = last.body if isinstance(last, cst.Else) else None
        self._first: dict[str, int] = {}
        for i, branch in enumerate(self.branches):
            for name in mentioned(branch.test):
                self._first.setdefault(name, i)

    def first_test_of(self, names: set[str], upto: int) -> cst.BaseExpression | None:
        """The first test among branches ``0..upto`` that mentions one of ``names``."""
        first = min((self._first[n] for n in names if n in self._first), default=None)
        return self.branches[first].test if first is not None and first <= upto else None


class _Index:
    """The blocks, ``elif`` chains and ``match`` cases of one scope, indexed when first asked."""

    def __init__(self, rows: Callable[[cst.CSTNode], tuple[int, int]]) -> None:
        self.rows = rows
        self._blocks: dict[int, _InOrder] = {}
        self._chains: dict[int, _Chain] = {}

    def block(self, owner: cst.CSTNode) -> _InOrder:
        """The statements of a scope or suite."""
        found = self._blocks.get(id(owner))
        if found is None:
            found = self._blocks[id(owner)] = _InOrder(_statements_of(owner), self.rows)
        return found

    def cases(self, match: cst.Match) -> _InOrder:
        found = self._blocks.get(id(match))
        if found is None:
            found = self._blocks[id(match)] = _InOrder(list(match.cases), self.rows)
        return found

    def chain(self, head: cst.If) -> _Chain:
        found = self._chains.get(id(head))
        if found is None:
            found = self._chains[id(head)] = _Chain(head, self.rows)
        return found


def _inline_conditions(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IfExp):
            found.append(node.test)
        elif isinstance(node, cst.BooleanOperation):
            found.append(node.left)
        stack.extend(children(node))
    return found
