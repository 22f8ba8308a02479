"""The abstract interpreter: a walk of one function body (or module body) in statement order
that computes host provenance (see ``values``) and reports events (see ``events``).

It keeps an environment from local names and attribute chains (``self.x_cpu``) to values.
Branches are walked on copies of the environment and merged; loops are walked twice so that a
value assigned late in the body reaches a copy early in the next iteration. What torch calls
do is looked up in ``torch_semantics``; the interpreter knows nothing of rules.

Every bail-out (a value becomes ``unknown``) says why in a comment: precision first.
"""

from __future__ import annotations

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import torch_semantics
from pinlint.analysis.events import EventSink
from pinlint.analysis.names import FileNames
from pinlint.analysis.scopes import ScopeNames, dotted, flatten_targets
from pinlint.analysis.values import (
    NUMPY,
    PINNED,
    PYDATA,
    UNKNOWN,
    Value,
    combine,
    derived,
    is_pydata,
    is_tensor,
    pageable,
)

Env = dict[str, Value]

_DEVICE_ATTRIBUTES = frozenset({"is_cpu", "is_cuda", "device", "is_pinned", "is_meta"})


class Interpreter:
    """Walks one scope, reporting copies and device constructions to ``events``."""

    def __init__(self, names: FileNames, scope: cst.FunctionDef | cst.Module, events: EventSink) -> None:
        self.file_names = names
        self.scope = scope
        self.events = events
        self.names = ScopeNames(names, scope)
        #: name or attribute chain -> the statements that bind it (the fixer checks that a
        #: device expression is not rebound between the construction and the copy).
        self.bindings: dict[str, list[cst.CSTNode]] = {}
        self.statement: cst.CSTNode = scope
        #: Inside ``with torch.device(...)``, or a file that calls ``set_default_device``:
        #: factories without ``device=`` may allocate on an accelerator.
        self.default_device_unknown = names.sets_default_device
        self._values: dict[int, Value] = {}
        #: id(construction node) -> the statement it sits in (for ``# noqa`` rows).
        self.statement_of: dict[int, cst.CSTNode] = {}

    def value_of(self, node: cst.BaseExpression) -> Value:
        return self._values.get(id(node), UNKNOWN)

    # ------------------------------------------------------------------ statements
    def run(self) -> None:
        if isinstance(self.scope, cst.FunctionDef):
            body = self.scope.body
            statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        else:
            statements = self.scope.body
        self._block(list(statements), {})

    def _block(self, statements: list[cst.CSTNode], env: Env) -> Env:
        for statement in statements:
            env = self._statement(statement, env)
        return env

    def _suite(self, suite: cst.BaseSuite, env: Env) -> Env:
        if isinstance(suite, cst.IndentedBlock):
            return self._block(list(suite.body), env)
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self.statement = suite
                env = self._small_statement(small, env)
            return env
        return env

    def _statement(self, statement: cst.CSTNode, env: Env) -> Env:
        if isinstance(statement, cst.SimpleStatementLine):
            self.statement = statement
            for small in statement.body:
                env = self._small_statement(small, env)
            return env
        if isinstance(statement, cst.If):
            return self._if(statement, env)
        if isinstance(statement, (cst.For, cst.While)):
            return self._loop(statement, env)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            return self._try(statement, env)
        if isinstance(statement, cst.With):
            return self._with(statement, env)
        if isinstance(statement, cst.Match):
            return self._match(statement, env)
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            # Nested functions and classes are scopes of their own, analysed separately.
            env = dict(env)
            self._bind(statement.name, UNKNOWN, env)
            return env
        return env

    def _if(self, statement: cst.If, env: Env) -> Env:
        self.statement = statement.test
        self.ev(statement.test, env)
        guarded = _device_tested(statement.test)
        if guarded:
            # `if x.is_cpu: ... else: x.to(dev, non_blocking=True)`: the branches depend on
            # where x lives at run time, which we cannot decide. Forget what we knew.
            env = {k: (UNKNOWN if k in guarded else v) for k, v in env.items()}
        taken = self._suite(statement.body, dict(env))
        if statement.orelse is None:
            other = env
        elif isinstance(statement.orelse, cst.If):
            other = self._statement(statement.orelse, dict(env))
        else:
            other = self._suite(statement.orelse.body, dict(env))
        return _merge(taken, other)

    def _loop(self, statement: cst.For | cst.While, env: Env) -> Env:
        if isinstance(statement, cst.For):
            self.statement = statement.iter
            self.ev(statement.iter, env)
            env = dict(env)
            self._bind(statement.target, UNKNOWN, env)  # loop items: unknown provenance
        else:
            self.statement = statement.test
            self.ev(statement.test, env)
        first = self._suite(statement.body, dict(env))
        # A second pass lets values assigned at the end of the body reach the next iteration.
        second = self._suite(statement.body, _merge(env, first))
        after = _merge(env, second)
        if statement.orelse is not None:
            after = self._suite(statement.orelse.body, after)
        return after

    def _try(self, statement: cst.Try | cst.TryStar, env: Env) -> Env:
        body = self._suite(statement.body, dict(env))
        outcomes = [body]
        for handler in statement.handlers:
            handler_env = _merge(env, body)
            if handler.name is not None:
                self._bind(handler.name.name, UNKNOWN, handler_env)  # the exception object
            outcomes.append(self._suite(handler.body, handler_env))
        if statement.orelse is not None:
            outcomes[0] = self._suite(statement.orelse.body, body)
        merged = outcomes[0]
        for outcome in outcomes[1:]:
            merged = _merge(merged, outcome)
        if statement.finalbody is not None:
            merged = self._suite(statement.finalbody.body, merged)
        return merged

    def _with(self, statement: cst.With, env: Env) -> Env:
        env = dict(env)
        previous = self.default_device_unknown
        for item in statement.items:
            self.statement = item
            self.ev(item.item, env)
            if self._sets_default_device(item.item):
                self.default_device_unknown = True
            if item.asname is not None:
                self._bind(item.asname.name, UNKNOWN, env)  # what __enter__ returns: unknown
        try:
            return self._suite(statement.body, env)
        finally:
            self.default_device_unknown = previous

    def _match(self, statement: cst.Match, env: Env) -> Env:
        self.statement = statement.subject
        self.ev(statement.subject, env)
        merged: Env | None = None
        for case in statement.cases:
            outcome = self._suite(case.body, dict(env))
            merged = outcome if merged is None else _merge(merged, outcome)
        return _merge(env, merged) if merged is not None else env

    def _sets_default_device(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            return self.names.torch_function(node.func) == "device"
        name = dotted(node)
        return bool(name) and "device" in name.rsplit(".", 1)[-1].lower()

    def _small_statement(self, small: cst.BaseSmallStatement, env: Env) -> Env:
        if isinstance(small, cst.Assign):
            value = self.ev(small.value, env)
            env = dict(env)
            for target in small.targets:
                self._bind(target.target, value, env, small.value)
            return env
        if isinstance(small, cst.AnnAssign):
            if small.value is None:
                return env  # a bare annotation binds nothing
            value = self.ev(small.value, env)
            env = dict(env)
            self._bind(small.target, value, env, small.value)
            return env
        if isinstance(small, cst.AugAssign):
            # `x += y` on a tensor is in place: x keeps its storage, hence its origin.
            self.ev(small.value, env)
            self.ev(small.target, env)
            self._record_binding(small.target)
            return env
        if isinstance(small, cst.Del):
            env = dict(env)
            for element in flatten_targets(small.target):
                key = dotted(element)
                if key:
                    env.pop(key, None)
            return env
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            env = dict(env)
            for alias in small.names if not isinstance(small.names, cst.ImportStar) else []:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name):
                    self._bind(bound, UNKNOWN, env)  # a module or library object: no tensor we know
            return env
        self._visit_children(small, env)  # Expr, Return, Assert, Raise...: evaluate what they hold
        return env

    # ------------------------------------------------------------------ bindings
    def _record_binding(self, target: cst.BaseExpression) -> None:
        key = dotted(target)
        if key:
            self.bindings.setdefault(key, []).append(self.statement)

    def _bind(
        self,
        target: cst.BaseExpression,
        value: Value,
        env: Env,
        value_node: cst.BaseExpression | None = None,
    ) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            values: list[Value]
            if (
                isinstance(value_node, (cst.Tuple, cst.List))
                and len(value_node.elements) == len(elements)
                and not any(isinstance(e, cst.StarredElement) for e in value_node.elements)
            ):
                values = [self.value_of(e.value) for e in value_node.elements]
            else:
                values = [UNKNOWN] * len(elements)  # unpacking an opaque value: unknown parts
            for element, element_value in zip(elements, values):
                self._bind(element, element_value, env)
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, UNKNOWN, env)  # `*rest` collects a list: not a tensor
            return
        if isinstance(target, cst.Subscript):
            # `buf[i] = v` writes into buf: its storage (and pinnedness) is unchanged.
            self.ev(target, env)
            return
        key = dotted(target)
        if key is None:
            self._visit_children(target, env)
            return
        self.bindings.setdefault(key, []).append(self.statement)
        # Rebinding `x` invalidates what we knew about `x.attr`.
        prefix = key + "."
        for stale in [k for k in env if k.startswith(prefix)]:
            del env[stale]
        env[key] = value

    # ------------------------------------------------------------------ expressions
    def ev(self, node: cst.BaseExpression, env: Env) -> Value:
        value = self._evaluate(node, env)
        self._values[id(node)] = value
        for origin in value:
            if origin.node is node:  # born here: remember its statement for `# noqa`
                self.statement_of.setdefault(id(node), self.statement)
        return value

    def _evaluate(self, node: cst.BaseExpression, env: Env) -> Value:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return PYDATA
            return env.get(node.value, UNKNOWN)  # unbound here: a global, builtin or closure
        if isinstance(node, cst.Attribute):
            key = dotted(node)
            if key is not None and key in env:
                return env[key]
            self.ev(node.value, env)
            return UNKNOWN  # an attribute set outside this function: unknown provenance
        if isinstance(node, cst.Call):
            return self._call(node, env)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            return PYDATA
        if isinstance(node, (cst.List, cst.Tuple, cst.ListComp, cst.Set, cst.SetComp)):
            self._visit_children(node, env)
            return PYDATA
        if isinstance(node, cst.Subscript):
            return self._subscript(node, env)
        if isinstance(node, cst.BinaryOperation):
            left = self.ev(node.left, env)
            right = self.ev(node.right, env)
            if is_pydata(left) and is_pydata(right):
                return PYDATA  # e.g. `[0] + lens`, `n * 2`
            return combine([left, right], node, "an arithmetic result")
        if isinstance(node, cst.Comparison):
            values = [self.ev(node.left, env)] + [self.ev(c.comparator, env) for c in node.comparisons]
            if all(is_pydata(v) for v in values):
                return PYDATA
            return combine(values, node, "a comparison result")
        if isinstance(node, cst.UnaryOperation):
            operand = self.ev(node.expression, env)
            if is_pydata(operand):
                return PYDATA
            return derived(operand, node, "an arithmetic result")
        if isinstance(node, cst.IfExp):
            self.ev(node.test, env)
            return self.ev(node.body, env) | self.ev(node.orelse, env)
        if isinstance(node, cst.NamedExpr):
            value = self.ev(node.value, env)
            key = dotted(node.target)
            if key:
                env[key] = value  # the walrus binds in the enclosing scope
            return value
        if isinstance(node, cst.Lambda):
            return UNKNOWN  # its body runs later, with arguments we do not know
        self._visit_children(node, env)
        return UNKNOWN  # any other expression (await, dict, f-string...): not a host tensor we know

    def _visit_children(self, node: cst.CSTNode, env: Env) -> None:
        """Evaluate the expressions inside ``node`` (for the copies they may hold)."""
        # Common shapes first: libcst's generic `children` is slow on big functions.
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for element in node.elements:
                self.ev(element.value, env)
        elif isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self.ev(element.key, env)
                self.ev(element.value, env)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            self.ev(node.elt, env)
            self._comprehension(node.for_in, env)
        elif isinstance(node, cst.DictComp):
            self.ev(node.key, env)
            self.ev(node.value, env)
            self._comprehension(node.for_in, env)
        elif isinstance(node, cst.BooleanOperation):
            self.ev(node.left, env)
            self.ev(node.right, env)
        elif isinstance(node, (cst.Await, cst.StarredElement)):
            self.ev(node.expression if isinstance(node, cst.Await) else node.value, env)
        elif isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Ellipsis)):
            return  # strings hold no copies worth following
        elif isinstance(node, cst.Expr):
            self.ev(node.value, env)
        elif isinstance(node, cst.Return):
            if node.value is not None:
                self.ev(node.value, env)
        else:
            for child in node.children:
                if isinstance(child, cst.BaseExpression):
                    self.ev(child, env)
                else:
                    self._visit_children(child, env)

    def _comprehension(self, for_in: cst.CompFor, env: Env) -> None:
        self.ev(for_in.iter, env)
        for condition in for_in.ifs:
            self.ev(condition.test, env)
        if for_in.inner_for_in is not None:
            self._comprehension(for_in.inner_for_in, env)

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self.ev(node.value, env)
        basic = True
        for element in node.slice:
            self._visit_children(element, env)
            inner = element.slice
            if isinstance(inner, cst.Index):
                index_value = self.value_of(inner.value)
                if is_tensor(index_value) or isinstance(
                    inner.value, (cst.List, cst.Tuple, cst.Comparison, cst.BooleanOperation, cst.Call)
                ):
                    basic = False  # advanced (mask or index-list) indexing copies into a new tensor
        if is_pydata(base):
            return UNKNOWN  # an element of Python data may be anything (even an ndarray)
        if basic:
            return base  # a view shares the base's storage: same origin, same pinnedness
        return derived(base, node, "an indexing result")

    # ------------------------------------------------------------------ calls
    def _call(self, call: cst.Call, env: Env) -> Value:
        func = call.func
        torch_name = self.names.torch_function(func)
        if torch_name is not None:
            arg_values = [self.ev(arg.value, env) for arg in call.args]
            return torch_semantics.torch_call(self, torch_name, call, arg_values)
        taught = dotted(func)
        pinned_functions = self.file_names.pinned_functions
        host_functions = self.file_names.host_functions
        if taught is not None and (taught in pinned_functions or taught in host_functions):
            for arg in call.args:
                self.ev(arg.value, env)
            if taught in pinned_functions:
                return PINNED  # the project says this returns pinned host memory
            return pageable(call, pinnable=False, what=f"{taught}(...)")
        if self.names.is_numpy_call(func):
            for arg in call.args:
                self.ev(arg.value, env)
            return NUMPY
        if isinstance(func, cst.Attribute):
            receiver = self.ev(func.value, env)
            for arg in call.args:
                self.ev(arg.value, env)
            return torch_semantics.method_call(self, func.attr.value, func.value, receiver, call)
        self.ev(func, env)
        for arg in call.args:
            self.ev(arg.value, env)
        if isinstance(func, cst.Name) and func.value in torch_api.PYTHON_DATA_BUILTINS and func.value not in env:
            return PYDATA
        return UNKNOWN  # a call into project or library code: unknown provenance


def _device_tested(test: cst.BaseExpression) -> set[str]:
    """Names/attribute chains whose device or pinnedness an ``if`` test inspects."""
    found: set[str] = set()
    stack: list[cst.BaseExpression] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute):
            if node.attr.value in _DEVICE_ATTRIBUTES:
                key = dotted(node.value)
                if key:
                    found.add(key)
            stack.append(node.value)
        elif isinstance(node, cst.Call):
            stack.append(node.func)
            stack.extend(arg.value for arg in node.args)
        elif isinstance(node, cst.Comparison):
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
    return found


def _merge(a: Env, b: Env) -> Env:
    if a is b:
        return a
    out: Env = {}
    for key in a.keys() | b.keys():
        va = a.get(key)
        vb = b.get(key)
        if va is None or vb is None:
            # Bound on one path only: on the other it holds whatever it held before (unknown).
            out[key] = (va or vb or UNKNOWN) | UNKNOWN
        else:
            out[key] = va | vb
    return out
