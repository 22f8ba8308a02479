"""Definite assignment: which names are bound on *every* path that reaches a given line.

The fixer moves a device expression from the copy to the construction; every name in it must
already be bound there. Python scoping is followed: comprehension variables belong to the
comprehension, an ``except ... as e`` name is unbound after its handler, a loop body may run zero
times, a branch that returns does not reach what follows.

One walk per scope answers every question about it (``DefiniteAssignment``): a function with
thousands of findings is walked once, not once per finding. The walk keeps one mutable set with
an undo trail (a branch costs what it changes) and a per-name history of when each name became
bound or unbound, so the set at any earlier moment of the walk can be asked about later.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from pinlint.analysis.cst_walk import children
from pinlint.analysis.scopes import flatten_targets

Rows = Callable[[cst.CSTNode], tuple[int, int]]


def bound_at(scope: cst.FunctionDef | cst.Module, row: int, names: set[str], rows: Rows) -> set[str]:
    """The names among ``names`` that are bound on every path to the statement holding ``row``
    (a statement that binds one of them before ``row`` on that same line does not count).
    Walks the scope: to ask more than once, build a ``DefiniteAssignment`` and keep it."""
    return DefiniteAssignment(scope, rows).bound_at(row, names)


@dataclass(frozen=True)
class _Point:
    """A moment of the walk where a row is reached: the walk's clock then, and whether any
    path gets there (after a ``return`` none does)."""

    clock: int
    reachable: bool


@dataclass(frozen=True)
class _Outcome:
    """How a path through a block left the state: reachable or not, and each name it changed
    (relative to the block's entry) -> bound at its end."""

    reachable: bool
    changed: dict[str, bool]


class DefiniteAssignment:
    """The definitely bound names at every row of one scope, from a single walk."""

    def __init__(self, scope: cst.FunctionDef | cst.Module, rows: Rows) -> None:
        walk = _Walk(rows)
        if type(scope) is cst.FunctionDef:
            params = scope.params
            all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
            for star in (params.star_arg, params.star_kwarg):
                if type(star) is cst.Param:
                    all_params.append(star)
            for param in all_params:
                walk.set(param.name.value, True)
            body = scope.body
            walk.block(list(body.body) if type(body) is cst.IndentedBlock else [body])
        else:
            walk.block(list(scope.body))
        self._points = walk.points
        self._history = walk.history

    def bound_at(self, row: int, names: Iterable[str]) -> set[str]:
        """Like ``bound_at``, by lookup."""
        point = self._points.get(row)
        if point is None or not point.reachable:
            return set()  # no statement of the scope starts the row's code, or no path gets there
        return {name for name in names if self._bound(name, point.clock)}

    def _bound(self, name: str, clock: int) -> bool:
        # Every entry toggles the name (unbound at the start): an odd count so far means bound.
        toggles = self._history.get(name)
        return toggles is not None and bisect.bisect_right(toggles, clock) % 2 == 1


class _Walk:
    """Walks the statements once in source order (orelse of a ``try`` before its handlers, as
    Python runs them), recording the state where each row is reached; the first record of a row
    wins, as a walk that stopped there would have seen it."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows
        self.bound: set[str] = set()
        self.reachable = True
        #: (name, bound before) or (None, reachable before): what ``undo`` restores.
        self.trail: list[tuple[str | None, bool]] = []
        self.clock = 0
        #: name -> the clocks at which it became bound or unbound, in order.
        self.history: dict[str, list[int]] = {}
        self.points: dict[int, _Point] = {}

    # ------------------------------------------------------------------ state
    def set(self, name: str, bound: bool) -> None:
        if (name in self.bound) == bound:
            return
        self.trail.append((name, not bound))
        self._toggle(name)

    def _toggle(self, name: str) -> None:
        if name in self.bound:
            self.bound.discard(name)
        else:
            self.bound.add(name)
        self.clock += 1
        self.history.setdefault(name, []).append(self.clock)

    def add(self, name: str) -> None:
        if self.reachable:  # names bound on no path do not matter: a later meet ignores the path
            self.set(name, True)

    def unreachable(self) -> None:
        if self.reachable:
            self.trail.append((None, True))
            self.reachable = False

    def mark(self) -> int:
        return len(self.trail)

    def outcome(self, mark: int) -> _Outcome:
        return _Outcome(self.reachable, {name: name in self.bound for name, _ in self.trail[mark:] if name is not None})

    def undo(self, mark: int) -> None:
        """Back to the state at ``mark``; the trail entries are dropped, so a finished branch
        leaves on it only what its merge changed (an ``elif`` chain stays linear)."""
        trail = self.trail
        while len(trail) > mark:
            name, before = trail.pop()
            if name is None:
                self.reachable = before
            elif (name in self.bound) != before:
                self._toggle(name)

    def meet(self, outcomes: list[_Outcome]) -> None:
        """The state is the block's entry (``undo`` ran): make it what holds on every path."""
        live = [o for o in outcomes if o.reachable]
        if not live:
            self.unreachable()
            return
        changed: set[str] = set()
        for outcome in live:
            changed.update(outcome.changed)
        for name in changed:
            entry = name in self.bound
            self.set(name, all(o.changed.get(name, entry) for o in live))

    def reach(self, first: int, last: int) -> None:
        point = _Point(self.clock, self.reachable)
        for row in range(first, last + 1):
            self.points.setdefault(row, point)

    def reach_node(self, node: cst.CSTNode) -> None:
        self.reach(*self.rows(node))

    # ------------------------------------------------------------------ statements
    def block(self, statements: list[cst.CSTNode]) -> None:
        for statement in statements:
            self.statement(statement)

    def suite(self, suite: cst.BaseSuite) -> None:
        if type(suite) is cst.IndentedBlock:
            self.block(list(suite.body))
        elif type(suite) is cst.SimpleStatementSuite:
            self.block([suite])

    def statement(self, statement: cst.CSTNode) -> None:
        if type(statement) in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
            self.reach_node(statement)  # what holds before the line, whatever it binds first
            for small in statement.body:
                self.small(small)
        elif type(statement) is cst.If:
            self._if(statement)
        elif type(statement) in (cst.For, cst.While):
            self._loop(statement)
        elif type(statement) in (cst.Try, cst.TryStar):
            self._try(statement)
        elif type(statement) is cst.With:
            self._with(statement)
        elif type(statement) is cst.Match:
            self._match(statement)
        else:
            self.reach_node(statement)  # a def or class, header to end: what holds before it
            if type(statement) in (cst.FunctionDef, cst.ClassDef):
                self.add(statement.name.value)

    def _if(self, statement: cst.If) -> None:
        self.reach_node(statement.test)
        mark = self.mark()
        self.suite(statement.body)
        taken = self.outcome(mark)
        self.undo(mark)
        if type(statement.orelse) is cst.If:
            self.statement(statement.orelse)
        elif statement.orelse is not None:
            self.suite(statement.orelse.body)
        other = self.outcome(mark)
        self.undo(mark)
        self.meet([taken, other])

    def _loop(self, statement: cst.For | cst.While) -> None:
        self.reach_node(statement.iter if type(statement) is cst.For else statement.test)
        mark = self.mark()
        if type(statement) is cst.For:
            self._bind(statement.target)
        self.suite(statement.body)
        self.undo(mark)
        # The body may run zero times; `else` runs unless the loop breaks: neither is definite.
        if statement.orelse is not None:
            self.suite(statement.orelse.body)
            self.undo(mark)

    def _try(self, statement: cst.Try | cst.TryStar) -> None:
        mark = self.mark()
        self.suite(statement.body)
        if statement.orelse is not None:
            self.suite(statement.orelse.body)
        outcomes = [self.outcome(mark)]
        self.undo(mark)
        for handler in statement.handlers:
            # The body may have stopped before any of its bindings: a handler starts from the entry.
            if handler.name is not None:
                self._bind(handler.name.name)
            self.suite(handler.body)
            if handler.name is not None and type(handler.name.name) is cst.Name and self.reachable:
                self.set(handler.name.name.value, False)  # Python deletes it after the handler
            outcomes.append(self.outcome(mark))
            self.undo(mark)
        self.meet(outcomes)
        if statement.finalbody is not None:
            self.suite(statement.finalbody.body)

    def _with(self, statement: cst.With) -> None:
        # The `with` line itself: the statement's rows outside its body.
        first, last = self.rows(statement)
        body_first, body_last = self.rows(statement.body)
        self.reach(first, min(last, body_first - 1))
        self.reach(max(first, body_last + 1), last)
        for item in statement.items:
            if item.asname is not None:
                self._bind(item.asname.name)
        self.suite(statement.body)

    def _match(self, statement: cst.Match) -> None:
        self.reach_node(statement.subject)
        mark = self.mark()
        outcomes = [self.outcome(mark)]  # no case may match
        for case in statement.cases:
            for name in _captures(case.pattern):
                self.add(name)
            self.suite(case.body)
            outcomes.append(self.outcome(mark))
            self.undo(mark)
        self.meet(outcomes)

    def small(self, small: cst.BaseSmallStatement) -> None:
        if not self.reachable:
            return  # nothing after a return counts until a merge with a live path
        if type(small) in (cst.Return, cst.Raise, cst.Continue, cst.Break):
            self.unreachable()  # this path does not reach the next statement
        elif type(small) is cst.Assign:
            self._walrus(small.value)
            for target in small.targets:
                self._bind(target.target)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:  # an annotation alone binds nothing
                self._walrus(small.value)
                self._bind(small.target)
        elif type(small) is cst.Del:
            for element in flatten_targets(small.target):
                if type(element) is cst.Name:
                    self.set(element.value, False)
        elif type(small) in (cst.Import, cst.ImportFrom):
            if type(small.names) is not cst.ImportStar:
                for alias in small.names:
                    bound = alias.asname.name if alias.asname else alias.name
                    while type(bound) is cst.Attribute:
                        bound = bound.value  # `import a.b` binds `a`
                    if type(bound) is cst.Name:
                        self.add(bound.value)
        elif type(small) is cst.Expr:
            self._walrus(small.value)
        # An augmented assignment needs the name bound already and binds nothing new; the
        # others (pass, global, assert, ...) bind nothing.

    def _walrus(self, node: cst.CSTNode) -> None:
        """``(x := ...)`` binds ``x`` in this scope (outside comprehensions' own scopes)."""
        for name in _walrus_names(node):
            self.add(name)

    def _bind(self, target: cst.BaseExpression) -> None:
        for element in flatten_targets(target):
            if type(element) is cst.StarredElement:
                element = element.value
            if type(element) is cst.Name:
                self.add(element.value)


def _walrus_names(node: cst.CSTNode) -> list[str]:
    """The walrus targets of an expression."""
    from pinlint.analysis.cst_walk import children

    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.NamedExpr and type(current.target) is cst.Name:
            found.append(current.target.value)
        if type(current) in (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp):
            continue  # their walrus targets may bind here too, but only if they run: not definite
        stack.extend(children(current))
    return found


def _captures(pattern: cst.MatchPattern, alternatives: bool = False) -> set[str]:
    """Names a ``case`` pattern binds; those of ``|`` alternatives only when asked (each
    alternative binds them, but counting them as definitely bound is not needed)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        if type(node) is cst.MatchAs and node.name is not None:
            found.add(node.name.value)
        elif type(node) is cst.MatchStar and node.name is not None:
            found.add(node.name.value)
        elif type(node) is cst.MatchMapping and node.rest is not None:
            found.add(node.rest.value)
        if type(node) is cst.MatchOr and not alternatives:
            # An alternative binds the same names in every branch; keep it simple: none.
            continue
        stack.extend(children(node))
    return found
