"""The abstract interpreter: a walk of one function body (or module body) in statement order
that computes host provenance (see ``values``) and reports events (see ``events``).

The environment maps local names and attribute chains (``self.x_cpu``) to values. Branches are
walked one after the other on one environment, undoing each (see ``env``), and merged: a branch
costs what it changes. Loops are iterated to a fixpoint (values only grow, in a small lattice),
and a loop whose inputs are unchanged since it was last walked is not walked again, so nested
loops cost depth x body, not 2^depth. Every scope has a step budget. What torch calls do is
looked up in ``torch_semantics``; the interpreter knows nothing of rules.

Every bail-out (a value becomes ``unknown``) says why in a comment: precision first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import d2h, objects
from pinlint.analysis.budget import BudgetExceeded
from pinlint.analysis.builtins import iterates_at_least_once, never_iterates, none_facts
from pinlint.analysis.cst_walk import children, mentioned
from pinlint.analysis.device_tests import on_host_when
from pinlint.analysis.devices import DeviceClass, classify_device
from pinlint.analysis.env import Changes, join, list_key
from pinlint.analysis.expressions import TUPLE_ITEM, Evaluator, distinct_keys, literal_key
from pinlint.analysis.names import LIBRARY_ROOTS, FileNames
from pinlint.analysis.scopes import dotted, flatten_targets, iter_statements
from pinlint.analysis.values import (
    FIELD_ITEM,
    FIELD_NAME,
    HOST_DEVICE,
    PYDATA,
    TRUE,
    UNKNOWN,
    Kind,
    Origin,
    Value,
    handle_kind,
    imported,
    is_pydata,
    is_tensor,
    parameter,
)


def local_function(node: cst.FunctionDef) -> Value:
    """The value a nested ``def`` binds: unknown, but recognisable as that function."""
    return frozenset({Origin(Kind.UNKNOWN, node, what="function")})


__all__ = ["BudgetExceeded", "Interpreter"]


#: Fixpoint iterations of one loop before giving up on it. The lattice is small, so real loops
#: settle in two or three; the cap only guards against a bug turning into a hang.
_MAX_LOOP_ITERATIONS = 12

LoopKey = tuple[object, ...]


class Interpreter(Evaluator):
    """Walks one scope, reporting copies and device constructions to ``events``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: id(loop) -> (the loop's inputs when last walked, what it changed then).
        self._loop_memo: dict[int, tuple[LoopKey, Changes, list[Changes], bool]] = {}
        #: id(loop) -> the names and attribute chains the loop mentions (its possible inputs).
        self._loop_names: dict[int, tuple[str, ...]] = {}
        #: No path reaches the statement being walked: the last one returned, raised, broke
        #: out or continued (what follows it in its block is not walked).
        self.dead = False
        #: Per enclosing loop: the states at its `break`s and `continue`s (change maps against
        #: the state its current iteration started from), and that iteration's mark.
        self._exits: list[tuple[list[Changes], list[Changes], int]] = []
        #: The last statement that ended the path was a `raise` (a `with` may swallow it).
        self._raised = False
        #: Per enclosing `try` with a `finally`: that clause and how many loops enclosed it (a
        #: `break` or `continue` out of the `try` runs the clause first).
        self._finally: list[tuple[cst.BaseSuite, int]] = []
        self._globals: set[str] | None = None

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        if type(self.scope) is cst.FunctionDef:
            params = self.scope.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if type(param.default) is cst.Name and param.default.value == "True":
                    # `non_blocking=True` as a default: most calls use it.
                    self.env.set(param.name.value, TRUE)
                    self.default_true_params.add(param.name.value)
                elif _scalar_annotation(param.annotation):
                    self.env.set(param.name.value, PYDATA)  # `page_size: int`: a Python number
                else:
                    self.env.set(param.name.value, parameter(param, param.name.value))
            body = self.scope.body
            statements = body.body if type(body) is cst.IndentedBlock else [body]
        else:
            statements = self.scope.body
        self._block(list(statements))
        self.resolve_captures()

    def _block(self, statements: list[cst.CSTNode]) -> None:
        outer = self.events.conditions  # (`if not fast: return ...` conditions the rest of the block)
        try:
            for statement in statements:
                self._statement(statement)
                if self.dead:
                    return  # the rest of the block is unreachable: its copies never run
        finally:
            self.events.conditions = outer

    def _suite(self, suite: cst.BaseSuite) -> None:
        if type(suite) is cst.IndentedBlock:
            self._block(list(suite.body))
        elif type(suite) is cst.SimpleStatementSuite:
            for small in suite.body:
                self.statement = suite
                self._small_statement(small)
                if self.dead:
                    return

    def _statement(self, statement: cst.CSTNode) -> None:
        self.step()
        if type(statement) is cst.SimpleStatementLine:
            self.statement = statement
            for small in statement.body:
                self._small_statement(small)
                if self.dead:
                    return
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
        elif type(statement) in (cst.FunctionDef, cst.ClassDef):
            # Nested functions and classes are scopes of their own, analysed separately; what
            # they mention of this scope escapes into them.
            self.captured(statement.body, statement, f"`{statement.name.value}`")
            if type(statement) is cst.FunctionDef:
                self.local_functions[statement.name.value] = statement
                self._bind(statement.name, local_function(statement))
            else:
                self._bind(statement.name, UNKNOWN)

    def _if(self, statement: cst.If) -> None:
        # An elif chain is walked as a loop over its branches, not by recursion.
        env = self.env
        outcomes: list[Changes] = []
        mark = env.mark()
        current: cst.If | None = statement
        # `if pin:` / `if not pin:` on a parameter that is `True` by default, or `if
        # device.type == "cuda":` (one if/else): what only its false side leaves pageable.
        flag = None
        device_guard = None
        # One `if` (perhaps with an `else`), not an `elif` chain: what its test proves of names
        # being None holds on each side (see `prune_by_none_facts`).
        simple = type(statement.orelse) is not cst.If
        # `if asynchronous:` on a parameter: the copies on each side are made under its truth.
        condition = self._parameter_condition(statement.test) if simple else None
        if simple:
            flag = self.flag_of(statement.test)
            device_guard = self.device_type_of(statement.test) if flag is None else None
        sides: list[Changes | None] = []  # the body's and the other side's outcome, for `flag`
        # `if t.device.type != "cpu": raise ...`: past the `if`, t is on the host.
        refined = on_host_when(statement.test, False) if statement.orelse is None else set()
        before = {key: env.get(key) for key in refined}
        body_leaves = False
        while current is not None:
            self.statement = current.test
            self.ev(current.test)
            d2h.read(self, current.test, "a truth test")
            # `if x.is_cpu: ... else: x.to(dev, non_blocking=True)`: the branches depend on where
            # x lives at run time, which we cannot decide.
            kept, kept_when = self.forget_tested(current.test)
            tested = env.changes_since(mark)  # the tests (and what they forgot) hold on every later path
            truth = self.test_truth(current.test)
            if truth is not None:
                self.rule_out(current.orelse if truth else current.body)
            if truth is not False:  # `if False:` / `if 0:`: the body never runs
                for key, value in kept.items() if kept_when else ():
                    env.set(key, value)  # the body only
                facts = none_facts(current.test, True) if simple else set()
                snapshot = dict(env.items()) if facts and not self.loop_stack else {}
                self.prune_by_none_facts(facts)
                self._flag_side(flag, body=True)
                with self._under(condition):
                    self._suite(current.body)
                if not self.dead:
                    self.guard_by_none_facts(facts, snapshot, mark)
                sides.append(self._flag_outcome(flag or device_guard, mark))
                if not self.dead:  # a branch that returns or raises: nothing after the `if` sees it
                    outcomes.append(env.changes_since(mark))
                body_leaves = self.dead and current is statement
                self.dead = False
                env.undo(mark)
                env.apply(tested)
            if truth is True:
                break  # `if True:`: the rest of the chain never runs (no path skips the body)
            orelse = current.orelse
            if type(orelse) is cst.If:
                current = orelse
                continue
            self._flag_side(flag, body=False)
            for key, value in kept.items() if simple and not kept_when else ():
                env.set(key, value)  # `if t.device == target: return t`: the other side only
            if orelse is not None:
                facts = none_facts(current.test, False) if simple else set()
                snapshot = dict(env.items()) if facts and not self.loop_stack else {}
                self.prune_by_none_facts(facts)
                with self._under((condition[0], not condition[1]) if condition is not None else None):
                    self._suite(orelse.body)
                if not self.dead:
                    self.guard_by_none_facts(facts, snapshot, mark)
            sides.append(self._flag_outcome(flag or device_guard, mark))
            if not self.dead:
                outcomes.append(env.changes_since(mark))
            self.dead = False
            current = None
        env.undo(mark)
        env.close(mark)
        guard = flag or device_guard
        if guard is not None and len(sides) == 2 and sides[0] is not None and sides[1] is not None:
            when_true, when_false = (sides[0], sides[1]) if guard[1] else (sides[1], sides[0])
            for key in when_true.keys() | when_false.keys():
                before = env.get(key) or frozenset()
                self.guard_by_flag(
                    guard[0], when_true.get(key, before) or frozenset(), when_false.get(key, before) or frozenset()
                )
        if outcomes:
            env.merge(outcomes)
            if body_leaves:
                for key in refined:
                    self.on_host(key, before[key])
                if condition is not None and statement.orelse is None:
                    # `if not fast: return t.to(dev)`: the rest of the block runs where `fast` holds.
                    self.events.conditions = (*self.events.conditions, (condition[0], not condition[1]))
        else:
            self.dead = True  # every branch leaves: nothing after the `if` runs

    @contextmanager
    def _under(self, condition: tuple[str, bool] | None) -> Iterator[None]:
        """Copies recorded inside are made where ``condition`` (a parameter's truth) holds."""
        outer = self.events.conditions
        if condition is not None:
            self.events.conditions = (*outer, condition)
        try:
            yield
        finally:
            self.events.conditions = outer

    def _parameter_condition(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """``(p, True)`` for ``if p:``, ``(p, False)`` for ``if not p:``, ``p`` a parameter of the
        function that still holds what the caller passed; else None."""
        truth = True
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, truth = test.expression, not truth
        if type(test) is not cst.Name:
            return None
        if test.value in self.default_true_params and self.env.get(test.value) == TRUE:
            return (test.value, truth)  # `fast=True`, not bound again (read as `TRUE`)
        return (test.value, truth) if self._own_parameter(test.value) else None

    def _flag_side(self, flag: tuple[str, bool] | None, *, body: bool) -> None:
        """Entering a side of an `if` on ``flag``: where the flag is false, it is (a copy
        ``non_blocking=flag`` there blocks)."""
        if flag is not None and flag[1] != body:
            self.env.set(flag[0], PYDATA)

    def _flag_outcome(self, flag: tuple[str, bool] | None, mark: int) -> Changes | None:
        """The side's outcome (None when it leaves); the flag is `True` by default again after
        it (the test decided nothing for later code)."""
        if flag is None:
            return None
        if not flag[0].startswith("device:") and self.env.get(flag[0]) == PYDATA:
            self.env.set(flag[0], TRUE)
        return None if self.dead else self.env.changes_since(mark)

    def _loop(self, statement: cst.For | cst.While) -> None:
        env = self.env
        if type(statement) is cst.For:
            self.statement = statement.iter
            for walked in self.walked(statement.iter, statement.target):
                iterated = self.ev(walked)
                if is_tensor(iterated):
                    # `for row in t:` yields views of its memory, which the body may write.
                    self.host_escape(iterated, walked, "iterated (its rows are views of it)")
            self._bind(statement.target, UNKNOWN)  # loop items: unknown provenance
            for target, elements in self.iterated(statement.iter, statement.target, statement):
                self._bind(target, elements)  # `for t in bufs:` over a list this function built
            field_item = self._field_loop(statement)
            range_is_builtin = "range" not in self.env and "range" not in self.file_names.module_level_bindings
            at_least_once = iterates_at_least_once(statement.iter, range_is_builtin)
            never = never_iterates(statement.iter)
        else:
            self.statement = statement.test
            self.ev(statement.test)
            d2h.read(self, statement.test, "a truth test")
            self.forget_tested(statement.test)  # `while not t.is_pinned():`, as for an `if` test
            at_least_once = False  # `while True:` is `_endless`; other tests may be false at once
            never = False
            field_item = None
        # Whether the loop may end by its test or items (not only by `break`): not when the body
        # of a loop that surely runs can only leave (every path breaks, returns or raises).
        ends_normally = not _endless(statement)
        # Only a loop inside another loop is walked again: only its inputs are worth a memo key.
        key = self._loop_inputs(statement) if self.loop_stack else None
        memo = self._loop_memo.get(id(statement)) if key is not None else None
        if memo is not None and memo[0] == key:
            env.apply(memo[1])  # same inputs as last time: same effect, same events
            breaks, ends_normally = memo[2], memo[3]
        else:
            mark = env.mark()
            self.loop_stack.append(id(statement))
            breaks = []
            first_breaks: list[Changes] = []
            try:
                # A first walk where no path completes the body: no later iteration happens.
                # A loop over an empty display (`for k in ():`) never runs its body.
                again = self._first_iteration(statement.body, first_breaks) if at_least_once else not never
                ends_normally = ends_normally and again
                for _ in range(_MAX_LOOP_ITERATIONS if again else 0):
                    grew, breaks = self._iterate(statement.body)
                    if not grew:
                        break
                else:
                    if again:
                        # Not settled (cannot happen in a finite lattice): forget what it touched.
                        for name in env.changes_since(mark):
                            env.set(name, UNKNOWN)
                breaks = first_breaks + breaks
            finally:
                self.loop_stack.pop()
            changes = env.changes_since(mark)
            env.close(mark)
            if key is not None:
                self._loop_memo[id(statement)] = (key, changes, breaks, ends_normally)
        # After the loop: its normal end (the test false, the items exhausted; then the `else`
        # clause), or a `break` (the states of the last, settled iteration's breaks).
        mark = env.mark()
        outcomes: list[Changes] = []
        if ends_normally:
            if statement.orelse is not None:
                self._suite(statement.orelse.body)
            if not self.dead:
                outcomes.append(env.changes_since(mark))
            self.dead = False
            env.undo(mark)
        env.close(mark)
        outcomes.extend(breaks)
        if outcomes:
            env.merge(outcomes)
        else:
            self.dead = True  # `while True:` with no `break`: nothing after it runs
        if field_item is not None:
            # Past the loop they name one field (the last, or where it broke): not known which.
            for name in mentioned(statement):
                if env.get(name) in (FIELD_ITEM, FIELD_NAME):
                    env.set(name, UNKNOWN)

    def _field_loop(self, statement: cst.For) -> str | None:
        """``for f in fields(self):`` in a dataclass method: ``f`` is bound to ``FIELD_ITEM``
        (``getattr(self, f.name)`` then reads every field); the name, or None."""
        if self.summaries is None or type(statement.target) is not cst.Name:
            return None
        fields = objects.iterated_fields(self.summaries, self, statement.iter)  # type: ignore[arg-type]
        if fields is None:
            return None
        self.own_fields = fields
        self.env.set(statement.target.value, FIELD_ITEM)
        return statement.target.value

    def _first_iteration(self, body: cst.BaseSuite, breaks: list[Changes]) -> bool:
        """The first walk of a body that surely runs (``for _ in range(2):``): its end states
        replace the state, where ``_iterate`` would join them with it (there is no path that skips
        the body). Its ``break`` states go to ``breaks``. Whether any path completes the body."""
        env = self.env
        ends, first_breaks = self._walk_body(body)
        # A `break` of this walk leaves with what it had then: what the merge below replaces
        # is restated in it (later walks' breaks are seen against the state it leaves).
        before = {key: env.get(key) for end in ends for key in end}
        breaks.extend({**{k: v for k, v in before.items() if k not in fb}, **fb} for fb in first_breaks)
        if ends:
            env.merge(ends)
        return bool(ends)

    def _walk_body(self, body: cst.BaseSuite) -> tuple[list[Changes], list[Changes]]:
        """One walk of a loop body from the current state, undone afterwards: the changes at
        its ends (the body's end and each ``continue``) and at its ``break`` statements."""
        env = self.env
        mark = env.mark()
        self._exits.append(([], [], mark))
        try:
            self._suite(body)
        finally:
            breaks, continues, _ = self._exits.pop()
        ends = [*continues, env.changes_since(mark)] if not self.dead else continues
        self.dead = False
        env.undo(mark)
        env.close(mark)
        return ends, breaks

    def _iterate(self, body: cst.BaseSuite) -> tuple[bool, list[Changes]]:
        """Walk the body once more from the current state; join what it changed by the end of
        the body or at a ``continue`` into the state (a value bound in the body may or may not
        be, after zero or more iterations). Whether anything grew, and the states at the body's
        ``break`` statements."""
        env = self.env
        ends, breaks = self._walk_body(body)
        grew = False
        for changes in ends:
            for name, value in changes.items():
                current = env.get(name)
                items = list_key(name) if current is None else None
                if items is not None and env.get(items) == frozenset():
                    joined = value  # the list was empty before: its first tuples' items, as they are
                else:
                    joined = join(current, value)
                if joined != current:
                    grew = True
                    if joined is None:
                        env.delete(name)
                    else:
                        env.set(name, joined)
        return grew, breaks

    def _loop_inputs(self, statement: cst.For | cst.While) -> LoopKey:
        """What a walk of the loop depends on: the values of the names it mentions (and of
        attribute chains bound under them), and whether a default device may be set."""
        names = self._loop_names.get(id(statement))
        if names is None:
            names = tuple(sorted(mentioned(statement)))
            self._loop_names[id(statement)] = names
        env = self.env
        inputs: list[object] = [self.default_device_unknown, env.get(d2h.PENDING_KEY)]
        for name in names:
            inputs.append(env.get(name))
            for under in sorted(env.keys_under(name)):
                inputs.append((under, env.get(under)))
        return tuple(inputs)

    def _try(self, statement: cst.Try | cst.TryStar) -> None:
        env = self.env
        mark = env.mark()
        if statement.finalbody is not None:
            self._finally.append((statement.finalbody.body, len(self._exits)))
        self._suite(statement.body)
        body = env.changes_since(mark)
        if statement.orelse is not None and not self.dead:
            self._suite(statement.orelse.body)
        outcomes = [env.changes_since(mark)] if not self.dead else []
        self.dead = False
        env.undo(mark)
        for handler in statement.handlers:
            # The body may have stopped anywhere: its changes may or may not have happened.
            env.merge([body, {}])
            if handler.name is not None:
                self._bind(handler.name.name, UNKNOWN)  # the exception object
            self._suite(handler.body)
            if not self.dead:  # a handler that returns, raises or continues: nothing after runs
                outcomes.append(env.changes_since(mark))
            self.dead = False
            env.undo(mark)
        env.close(mark)
        if statement.finalbody is not None:
            self._finally.pop()
        # Nothing reaches past the `try` when every outcome leaves; its `finally` still runs,
        # from anywhere in the body.
        env.merge(outcomes or [body, {}])
        if statement.finalbody is not None:
            self._suite(statement.finalbody.body)
        self.dead = self.dead or not outcomes

    def _with(self, statement: cst.With) -> None:
        previous = self.default_device_unknown
        for item in statement.items:
            self.statement = item
            entered = self.ev(item.item)
            if self._sets_default_device(item.item):
                self.default_device_unknown = True
            if item.asname is not None:
                # What __enter__ returns: unknown, but a file handle's (`safe_open`) is itself.
                self._bind(item.asname.name, entered if handle_kind(entered) == "file" else UNKNOWN)
        try:
            self._suite(statement.body)
        finally:
            self.default_device_unknown = previous
        # A context manager may swallow the exception a `raise` in the body throws
        # (`contextlib.suppress`): what follows the `with` stays reachable (not after a
        # `return`, `break` or `continue`).
        if self._raised:
            self.dead = False

    def _match(self, statement: cst.Match) -> None:
        env = self.env
        self.statement = statement.subject
        self.ev(statement.subject)
        mark = env.mark()
        last = statement.cases[-1] if statement.cases else None
        irrefutable = last is not None and last.guard is None and _irrefutable(last.pattern)
        outcomes: list[Changes] = [] if irrefutable else [{}]  # no case may match
        for case in statement.cases:
            for name in _captured_names(case.pattern):
                self._bind(name, UNKNOWN)  # `case [x, *_]:`, `case T() as x:` bind parts of the subject
            if case.guard is not None:
                self.ev(case.guard)
            self._suite(case.body)
            if not self.dead:
                outcomes.append(env.changes_since(mark))
            self.dead = False
            env.undo(mark)
        env.close(mark)
        if outcomes:
            env.merge(outcomes)
        else:
            self.dead = True  # every case leaves, and one always matches

    def _sets_default_device(self, node: cst.BaseExpression) -> bool:
        if type(node) is cst.Call:
            return self.names.torch_function(node.func) == "device"
        name = dotted(node)
        return bool(name) and "device" in name.rsplit(".", 1)[-1].lower()

    def _small_statement(self, small: cst.BaseSmallStatement) -> None:
        if type(small) is cst.Assign:
            if type(small.value) in (cst.Tuple, cst.List) and all(
                type(t.target) in (cst.Tuple, cst.List) for t in small.targets
            ):
                self._transparent.add(id(small.value))  # `a, b = x, y` unpacks: no container
            value = self._host_device(small.value, self.ev(small.value), [t.target for t in small.targets])
            if type(small.value) in (cst.Name, cst.Attribute):
                self.list_changed(small.value)  # `other = bufs`: written through the alias, unseen
            for target in small.targets:
                self._bind(target.target, value, small.value)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:  # a bare annotation binds nothing
                value = self._host_device(small.value, self.ev(small.value), [small.target])
                self._bind(small.target, value, small.value)
        elif type(small) is cst.AugAssign:
            if type(small.operator) is not cst.AddAssign:
                self.list_changed(small.target)  # `bufs *= 0` empties it; `+=` only adds
            operand = self.ev(small.value)
            if type(small.operator) is cst.AddAssign:
                # `bufs += [t]`: t is among its elements now (`bufs += xs`: anything may be).
                added = (
                    [self.value_of(e.value) for e in small.value.elements if type(e) is cst.Element]
                    if type(small.value) in (cst.List, cst.Tuple)
                    and all(type(e) is cst.Element for e in small.value.elements)
                    else [UNKNOWN]
                )
                self.add_elements(small.target, frozenset().union(*added) if added else frozenset())
            target = self.ev(small.target)
            self._record_binding(small.target)
            key = dotted(small.target)
            if is_pydata(target) and not is_pydata(operand) and key is not None:
                # `acc = 0; acc += np.bincount(x)`: Python data combined with something else is
                # no longer Python data (an int plus an ndarray is an ndarray).
                self.env.set(key, UNKNOWN)
            else:
                # `x += y` on a tensor is in place: x keeps its storage, hence its origin.
                self.host_write(target, small, f"an augmented assignment to `{_source_hint(small.target)}`")
        elif type(small) is cst.Del:
            for element in flatten_targets(small.target):
                if type(element) is cst.Subscript:
                    self.list_changed(element.value)  # `del bufs[0]`
                key = dotted(element)
                if key:
                    self.env.delete(key)
        elif type(small) in (cst.Import, cst.ImportFrom):
            for alias in small.names if type(small.names) is not cst.ImportStar else []:
                bound = alias.asname.name if alias.asname else alias.name
                if type(bound) is cst.Name and project_import_as_recorded(self.file_names, small, alias):
                    # A lazy import of the project's (`from .copiers import upload` in the body):
                    # the name is what the file's imports record for it, from one place only, so
                    # it is left to resolve as a module-level import does (the project's function).
                    self._bind(bound, imported(_imported_name(small, alias)))  # forgets `x[0]`, `x.y`
                    self.env.delete(bound.value)
                elif type(bound) is cst.Name:
                    # A module or library object: no tensor we know, but what it names is kept
                    # (a known host-returning loader is called through it).
                    self._bind(bound, imported(_imported_name(small, alias)))
                elif type(small) is cst.Import:
                    # `import safetensors.torch` binds `safetensors`, the package.
                    self._bind(_root_name(bound), imported(_root_name(bound).value))
        elif type(small) in (cst.Break, cst.Continue):
            # The `finally` clauses between here and the loop run first (and one that returns
            # or raises ends the path instead).
            depth = len(self._exits)
            pending: list[tuple[cst.BaseSuite, int]] = []
            while self._finally and self._finally[-1][1] == depth:
                pending.append(self._finally.pop())  # (not run again by a `break` inside it)
            try:
                for final, _ in pending:
                    self._suite(final)
                    if self.dead:
                        return
            finally:
                self._finally.extend(reversed(pending))
            if self._exits:
                breaks, continues, mark = self._exits[-1]
                (breaks if type(small) is cst.Break else continues).append(self.env.changes_since(mark))
            self.dead = True
            self._raised = False
        else:
            if type(small) is cst.Expr:
                self.discarded = small.value
            self._visit_children(small)  # Expr, Return, Assert, Raise...: evaluate what they hold
            self.discarded = None
            if type(small) is cst.Assert:
                asserted = {key: self.env.get(key) for key in on_host_when(small.test, True)}
                kept, kept_when = self.forget_tested(small.test)  # `assert t.is_pinned()`: it decides
                for key, value in kept.items() if kept_when else ():
                    self.env.set(key, value)  # `assert not t.is_cuda` of a parameter: the callers' tensor
                for key, value in asserted.items():
                    self.on_host(key, value)  # `assert t.is_cpu`
            elif type(small) in (cst.Return, cst.Raise):
                self.dead = True
                self._raised = type(small) is cst.Raise

    def _host_device(self, node: cst.BaseExpression, value: Value, targets: list[cst.BaseExpression]) -> Value:
        """``dev = "cpu"`` (or ``torch.device("cpu")``): the host device, so that ``.to(dev)`` is
        no H2D copy; not for a name this scope declares global (any call may rebind it)."""
        if classify_device(node, self.names.torch_function) is not DeviceClass.HOST:
            return value
        if any(type(t) is cst.Name and t.value in self._declared_global() for t in targets):
            return value
        return HOST_DEVICE

    def _declared_global(self) -> set[str]:
        if self._globals is None:
            self._globals = set()
            if type(self.scope) is cst.FunctionDef:
                for statement in iter_statements(
                    list(self.scope.body.body) if type(self.scope.body) is cst.IndentedBlock else [],
                    into_functions=False,
                ):
                    if type(statement) is cst.SimpleStatementLine:
                        for small in statement.body:
                            if type(small) in (cst.Global, cst.Nonlocal):
                                self._globals.update(item.name.value for item in small.names)
        return self._globals

    # ------------------------------------------------------------------ bindings
    def _record_binding(self, target: cst.BaseExpression) -> None:
        key = dotted(target)
        if key:
            self.bindings.setdefault(key, []).append(self.statement)

    def _bind(self, target: cst.BaseExpression, value: Value, value_node: cst.BaseExpression | None = None) -> None:
        if type(target) in (cst.Tuple, cst.List):
            elements = [e.value for e in target.elements]
            values: list[Value]
            if (
                type(value_node) in (cst.Tuple, cst.List)
                and len(value_node.elements) == len(elements)
                and not any(type(e) is cst.StarredElement for e in value_node.elements)
            ):
                values = [self.value_of(e.value) for e in value_node.elements]
            elif value and all(o.kind is Kind.PAGEABLE and o.loaded for o in value):
                # `inputs, labels = batch` of a loaded batch (state): every tensor in it is pageable.
                values = [value] * len(elements)
            elif (
                type(value_node) is cst.Call
                and self.summaries is not None
                and not any(type(e) is cst.StarredElement for e in target.elements)
            ):
                # `a, b = helper()` where every return of the helper is a tuple display.
                values = self.summaries.call_elements(self, value_node, len(elements)) or [UNKNOWN] * len(elements)
            elif type(value_node) is cst.Subscript and not any(type(e) is cst.StarredElement for e in target.elements):
                # `a, b, n = variants[k]`: a tuple of a list of tuples, position by position.
                values = self.item_positions(value_node, len(elements)) or [UNKNOWN] * len(elements)
            else:
                values = [UNKNOWN] * len(elements)  # unpacking an opaque value: unknown parts
            for element, element_value in zip(elements, values):
                self._bind(element, element_value)
            return
        if type(target) is cst.StarredElement:
            self._bind(target.value, UNKNOWN)  # `*rest` collects a list: not a tensor
            return
        if type(target) is cst.Subscript:
            self.ev(target)  # the container and the index are read
            if not is_tensor(self.value_of(target.value)):
                # `d[k] = t`, `out[i] = t` of a container (or of what may be one): a reference to
                # t is kept there, for code this function may not show (a tensor's item
                # assignment copies the values instead).
                self.host_escape(value, target, "stored in a container")
            if self.stored_item(target, value):
                return  # `d[k] = t` of a dict it built: t is one of its items
            # `buf[i] = v` writes into buf: its storage (and pinnedness) is unchanged.
            self.list_changed(target.value)  # (for a list: the item is replaced)
            self.host_write(self.value_of(target.value), target, "an item assignment")
            return
        key = dotted(target)
        if key is None:
            if type(target) is cst.Attribute and type(target.value) is cst.Subscript:
                # `d["a"].data = other`, `bufs[0].x = y`: an item changed, through the container.
                self.list_changed(target.value.value)
            self._visit_children(target)
            return
        if type(target) is cst.Attribute and target.attr.value in torch_api.STORAGE_ATTRIBUTES:
            owner = dotted(target.value)
            if owner is not None and owner in self.env:
                # `t.data = other`: t (and every name for it) now holds other's memory.
                self.replace_memory(owner, value if is_tensor(value) else UNKNOWN)
        if "." in key and self.aliased_root(key):
            value = UNKNOWN  # stored through a name that another also holds: not followed
        self.bindings.setdefault(key, []).append(self.statement)
        self.ever_bound[key] = self.ever_bound.get(key, frozenset()) | value
        if "." in key:
            self.uses.record("escape", value, target, f"stored in `{key}`", self.loops, attribute=key)
            if key.startswith("self."):
                self.attribute_values[key] = self.attribute_values.get(key, frozenset()) | value
        self.env.bind(key, value)
        source = dotted(value_node) if type(value_node) in (cst.Name, cst.Attribute) else None
        if source is not None and source != key and not is_tensor(value):
            # `other = tap`, `holder.obj = tap`: one object, two names (a tensor's storage is
            # followed by its value; its attributes are no state of ours).
            self.alias(source)
            self.alias(key)
        if type(value_node) is cst.Attribute:
            self._contained(value_node)  # `up = d.update`: d may change when `up` is called
        if type(value_node) in (cst.List, cst.Tuple):
            elements = [
                self.value_of(e.value) if type(e) is cst.Element else UNKNOWN  # `*rest`: not followed
                for e in value_node.elements
            ]
            self.set_elements(key, ".[]", frozenset().union(*elements) if elements else frozenset())
            if elements:
                # `[(t, 1), (u, 2)]`: the items at each position of its tuples.
                self.set_positions(
                    key,
                    [self.tuple_parts(e.value) if type(e) is cst.Element else None for e in value_node.elements],
                    fresh=True,
                )
            parts = self.tuple_parts(value_node) if type(value_node) is cst.Tuple and "." not in key else None
            for i, part in enumerate(parts if parts and not self.may_rebind(key) else ()):
                # `pair = (t, 1)`: a tuple never changes, so `pair[0]` is t (see `_item`). Only a
                # local name (an attribute may be set through another name for its object) that
                # no `global`/`nonlocal` declaration or `match` pattern may bind out of sight.
                self.env.set(key + TUPLE_ITEM % i, part)
        elif type(value_node) is cst.ListComp:
            self.set_elements(key, ".[]", self.value_of(value_node.elt))
            self.set_positions(key, [self.tuple_parts(value_node.elt)], fresh=True)
        elif type(value_node) is cst.Dict and distinct_keys(value_node):
            values = [self.value_of(e.value) for e in value_node.elements]  # type: ignore[union-attr]
            self.set_elements(key, ".{}", frozenset().union(*values) if values else frozenset())
            for element in value_node.elements:
                name = literal_key(element.key)  # type: ignore[union-attr]
                if name is not None:
                    # `{"mask": t, ...}`: what `d["mask"]` is, exactly.
                    self.set_elements(key, ".{%s}" % name, self.value_of(element.value))  # type: ignore[union-attr]
        elif type(value_node) is cst.DictComp:
            self.set_elements(key, ".{}", self.value_of(value_node.value))
        elif type(value_node) is cst.Call:
            # `dict(mask=t)`, `dict(zip(names, ts))`, `tuple(bufs)`, or `out = helper()` where the
            # helper returns a list or dict it built: what it holds.
            for suffix, held in (self.container_of(value_node) or {}).items():
                self.set_elements(key, suffix, held)
            if "." not in key and self.summaries is not None and not self.may_rebind(key):
                # `pair = helper()`: where every return of the helper is a tuple display,
                # `pair[1]` is exactly that item, not any of them (asked only when a constant
                # index picks one: `Evaluator._item`). Local names only, as above.
                self.bound_calls[key] = (value_node, value)


#: Annotations that make a parameter a Python number. (Not `bool`: a flag stays a parameter, for
#: `non_blocking=flag` that callers decide; nor `str`: a device name a call may pass.)
_SCALAR_TYPES = frozenset({"int", "float"})


def project_import_as_recorded(
    names: FileNames, statement: cst.Import | cst.ImportFrom, alias: cst.ImportAlias
) -> bool:
    """The import binds a name to a project module or to a name of one, as the file's import
    record has it (the file imports that name from nowhere else, and defines none)."""
    local = alias.evaluated_alias or alias.evaluated_name
    if local in names.module_level_bindings or local in names.ambiguous_modules:
        return False
    if type(statement) is cst.Import:
        if alias.asname is None:
            return False  # `import pkg.mod` binds `pkg`: dotted calls are not followed
        return (
            alias.evaluated_name.split(".", 1)[0] not in LIBRARY_ROOTS
            and names.modules.get(local) == alias.evaluated_name
        )
    module = dotted(statement.module) if statement.module is not None else ""
    level = len(statement.relative)
    if not level and (not module or module.split(".", 1)[0] in LIBRARY_ROOTS):
        return False  # a library's name: kept as the import binds it (known loaders)
    return names.from_imports.get(local) == (level, module, alias.evaluated_name)


def _imported_name(statement: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> str:
    """The dotted name an import binds; a relative import's keeps its dots (``.copiers.upload``:
    no library's, but the project's module that a call through it is resolved in)."""
    name = dotted(alias.name) or ""
    if type(statement) is cst.Import:
        return name
    module = dotted(statement.module) if statement.module is not None else ""
    if statement.relative:
        return "." * len(statement.relative) + (f"{module}.{name}" if module else name)
    return f"{module}.{name}" if module else ""


def _root_name(name: cst.BaseExpression) -> cst.Name:
    """``a`` of ``a.b.c``."""
    while type(name) is cst.Attribute:
        name = name.value
    assert type(name) is cst.Name
    return name


def _scalar_annotation(annotation: cst.Annotation | None) -> bool:
    """``int`` or ``float``, also ``Optional[...]`` or ``... | None`` of one."""
    if annotation is None:
        return False
    node = annotation.annotation
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.BitOr:
        sides = [node.left, node.right]
        if any(type(s) is cst.Name and s.value == "None" for s in sides):
            node = next(s for s in sides if not (type(s) is cst.Name and s.value == "None"))
    elif (
        type(node) is cst.Subscript
        and type(node.value) is cst.Name
        and node.value.value == "Optional"
        and len(node.slice) == 1
        and type(node.slice[0].slice) is cst.Index
    ):
        node = node.slice[0].slice.value
    return type(node) is cst.Name and node.value in _SCALAR_TYPES


def _captured_names(pattern: cst.CSTNode) -> list[cst.Name]:
    """The names a ``case`` pattern binds (capture patterns, ``as`` names, ``*rest``, ``**rest``)."""
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [pattern]
    while stack:
        node = stack.pop()
        if type(node) is cst.MatchAs and type(node.name) is cst.Name:
            found.append(node.name)
        elif type(node) is cst.MatchStar and type(node.name) is cst.Name:
            found.append(node.name)
        elif type(node) is cst.MatchMapping and type(node.rest) is cst.Name:
            found.append(node.rest)
        stack.extend(children(node))
    return found


def _irrefutable(pattern: cst.MatchPattern) -> bool:
    """``case _:`` or ``case name:`` (and ``as`` of one): matches whatever the subject is."""
    while type(pattern) is cst.MatchAs:
        if pattern.pattern is None:
            return True
        pattern = pattern.pattern
    if type(pattern) is cst.MatchOr:
        return any(_irrefutable(p.pattern) for p in pattern.patterns)
    return False


def _endless(loop: cst.For | cst.While) -> bool:
    """``while True:`` (or ``while 1:``): the loop ends only through a ``break``."""
    if type(loop) is not cst.While:
        return False
    test = loop.test
    return (type(test) is cst.Name and test.value == "True") or (type(test) is cst.Integer and test.value != "0")


def _source_hint(node: cst.BaseExpression) -> str:
    return dotted(node) or "x"
