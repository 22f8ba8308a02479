"""Definite assignment: which names are bound on *every* path that reaches a given line.

The fixer moves a device expression from the copy to the construction; every name in it must
already be bound there. Python scoping is followed: comprehension variables belong to the
comprehension, an ``except ... as e`` name is unbound after its handler, a loop body may run zero
times, a branch that returns does not reach what follows.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from pinlint.analysis.scopes import flatten_targets

Rows = Callable[[cst.CSTNode], tuple[int, int]]
#: The bound names of interest on the paths so far; None: no path gets here (after a return).
State = frozenset[str] | None


def bound_at(scope: cst.FunctionDef | cst.Module, row: int, names: set[str], rows: Rows) -> set[str]:
    """The names among ``names`` that are bound on every path to the statement holding ``row``
    (a statement that binds one of them before ``row`` on that same line does not count)."""
    walker = _Walker(names, rows, row)
    state: frozenset[str] = frozenset()
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        all_params = [*params.posonly_params, *params.params, *params.kwonly_params]
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                all_params.append(star)
        state = frozenset(p.name.value for p in all_params if p.name.value in names)
        body = scope.body
        statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    else:
        statements = list(scope.body)
    walker.block(statements, state)
    return set(walker.found or ())


class _Walker:
    def __init__(self, names: set[str], rows: Rows, row: int) -> None:
        self.names = names
        self.rows = rows
        self.row = row
        self.found: frozenset[str] | None = None
        self.done = False

    def _holds(self, node: cst.CSTNode) -> bool:
        first, last = self.rows(node)
        return first <= self.row <= last

    def block(self, statements: list[cst.CSTNode], state: State) -> State:
        for statement in statements:
            if self.done:
                return state
            state = self.statement(statement, state)
        return state

    def suite(self, suite: cst.BaseSuite, state: State) -> State:
        if isinstance(suite, cst.IndentedBlock):
            return self.block(list(suite.body), state)
        if isinstance(suite, cst.SimpleStatementSuite):
            return self.block([suite], state)
        return state

    def _reached(self, state: State) -> None:
        self.found = state if state is not None else frozenset()
        self.done = True

    def statement(self, statement: cst.CSTNode, state: State) -> State:
        inside = self._holds(statement)
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if inside:
                self._reached(state)
                return state
            for small in statement.body:
                state = self.small(small, state)
            return state
        if inside and not isinstance(
            statement, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With, cst.Match)
        ):
            self._reached(state)  # a def or class header: what holds before it
            return state
        if isinstance(statement, cst.If):
            return self._if(statement, state, inside)
        if isinstance(statement, (cst.For, cst.While)):
            return self._loop(statement, state, inside)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            return self._try(statement, state)
        if isinstance(statement, cst.With):
            if inside and not self._holds(statement.body):
                self._reached(state)  # the `with` line itself
                return state
            for item in statement.items:
                if item.asname is not None:
                    state = self._bind(item.asname.name, state)
            return self.suite(statement.body, state)
        if isinstance(statement, cst.Match):
            return self._match(statement, state, inside)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return self._add(state, statement.name.value)
        return state

    def _if(self, statement: cst.If, state: State, inside: bool) -> State:
        if inside and self._holds(statement.test):
            self._reached(state)
            return state
        taken = self.suite(statement.body, state)
        if self.done:
            return taken
        if isinstance(statement.orelse, cst.If):
            other = self.statement(statement.orelse, state)
        elif statement.orelse is not None:
            other = self.suite(statement.orelse.body, state)
        else:
            other = state
        return _meet(taken, other)

    def _loop(self, statement: cst.For | cst.While, state: State, inside: bool) -> State:
        header = statement.iter if isinstance(statement, cst.For) else statement.test
        if inside and self._holds(header):
            self._reached(state)
            return state
        body_state = self._bind(statement.target, state) if isinstance(statement, cst.For) else state
        self.suite(statement.body, body_state)
        if self.done:
            return state
        # The body may run zero times; `else` runs unless the loop breaks.
        if statement.orelse is not None:
            self.suite(statement.orelse.body, state)
        return state

    def _try(self, statement: cst.Try | cst.TryStar, state: State) -> State:
        body = self.suite(statement.body, state)
        if self.done:
            return body
        if statement.orelse is not None:
            body = self.suite(statement.orelse.body, body)
        outcomes = [body]
        for handler in statement.handlers:
            # The body may have stopped before any of its bindings.
            handler_state = state
            if handler.name is not None:
                handler_state = self._bind(handler.name.name, handler_state)
            after = self.suite(handler.body, handler_state)
            if self.done:
                return after
            if handler.name is not None and isinstance(handler.name.name, cst.Name) and after is not None:
                after = after - {handler.name.name.value}  # Python deletes it after the handler
            outcomes.append(after)
        merged = outcomes[0]
        for outcome in outcomes[1:]:
            merged = _meet(merged, outcome)
        if statement.finalbody is not None:
            merged = self.suite(statement.finalbody.body, merged)
        return merged

    def _match(self, statement: cst.Match, state: State, inside: bool) -> State:
        if inside and self._holds(statement.subject):
            self._reached(state)
            return state
        merged: State = state  # no case may match
        for case in statement.cases:
            case_state = state
            for name in _captures(case.pattern):
                case_state = self._add(case_state, name)
            after = self.suite(case.body, case_state)
            if self.done:
                return after
            merged = _meet(merged, after)
        return merged

    def small(self, small: cst.BaseSmallStatement, state: State) -> State:
        if state is None:
            return None
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return None  # this path does not reach the next statement
        if isinstance(small, cst.Assign):
            state = self._walrus(small.value, state)
            for target in small.targets:
                state = self._bind(target.target, state)
            return state
        if isinstance(small, cst.AnnAssign):
            if small.value is None:
                return state  # an annotation alone binds nothing
            return self._bind(small.target, self._walrus(small.value, state))
        if isinstance(small, cst.AugAssign):
            return state  # needs the name bound already; binds nothing new
        if isinstance(small, cst.Del):
            names = {e.value for e in flatten_targets(small.target) if isinstance(e, cst.Name)}
            return state - names if state is not None else None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            if isinstance(small.names, cst.ImportStar):
                return state
            for alias in small.names:
                bound = alias.asname.name if alias.asname else alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value  # `import a.b` binds `a`
                if isinstance(bound, cst.Name):
                    state = self._add(state, bound.value)
            return state
        if isinstance(small, cst.Expr):
            return self._walrus(small.value, state)
        return state

    def _walrus(self, node: cst.CSTNode, state: State) -> State:
        """``(x := ...)`` binds ``x`` in this scope (outside comprehensions' own scopes)."""
        for name in _walrus_names(node):
            state = self._add(state, name)
        return state

    def _bind(self, target: cst.BaseExpression, state: State) -> State:
        for element in flatten_targets(target):
            if isinstance(element, cst.StarredElement):
                element = element.value
            if isinstance(element, cst.Name):
                state = self._add(state, element.value)
        return state

    def _add(self, state: State, name: str) -> State:
        if state is None or name not in self.names:
            return state
        return state | {name}


_WALRUS_MEMO: dict[int, tuple[cst.CSTNode, frozenset[str]]] = {}


def _walrus_names(node: cst.CSTNode) -> frozenset[str]:
    """The walrus targets of an expression, computed once per node (every finding of a function
    walks the function's statements again; the expressions need not be)."""
    from pinlint.analysis.interpreter import _children

    hit = _WALRUS_MEMO.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.NamedExpr) and isinstance(current.target, cst.Name):
            found.add(current.target.value)
        if isinstance(current, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            continue  # their walrus targets may bind here too, but only if they run: not definite
        stack.extend(_children(current))
    if len(_WALRUS_MEMO) > 100_000:
        _WALRUS_MEMO.clear()
    value = frozenset(found)
    _WALRUS_MEMO[id(node)] = (node, value)
    return value


def _meet(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _captures(pattern: cst.MatchPattern, alternatives: bool = False) -> set[str]:
    """Names a ``case`` pattern binds; those of ``|`` alternatives only when asked (each
    alternative binds them, but counting them as definitely bound is not needed)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.MatchAs) and node.name is not None:
            found.add(node.name.value)
        elif isinstance(node, cst.MatchStar) and node.name is not None:
            found.add(node.name.value)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            found.add(node.rest.value)
        if isinstance(node, cst.MatchOr) and not alternatives:
            # An alternative binds the same names in every branch; keep it simple: none.
            continue
        stack.extend(node.children)
    return found
