"""Step 4 of the pipeline: a function-local walk that computes host provenance and finds copies.

One ``FunctionFlow`` walks one function body (or a module body) in statement order, keeping an
environment from local names and attribute chains (``self.x_cpu``) to values (see ``values``).
Branches are walked on copies of the environment and merged; loops are walked twice so that a
value assigned late in the body reaches a copy early in the next iteration.

Every bail-out (a value becomes ``unknown``) says why in a comment: precision first.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.helpers

from .. import torch_api
from .names import FileNames
from .values import (
    DEVICE,
    NUMPY,
    PINNED,
    PYDATA,
    UNKNOWN,
    Origin,
    Value,
    combine,
    derived,
    is_host,
    is_tensor,
    kinds,
    pageable,
)

Env = dict[str, Value]


@dataclass(frozen=True)
class SinkHit:
    """A pageable origin that reaches a non_blocking host-to-device copy."""

    origin: Origin
    sink: cst.Call
    api: str
    #: The copy's target device expression; None for ``.cuda()`` (current device).
    device: cst.BaseExpression | None
    #: For ``dst.copy_(src)``: the ``dst`` expression (the device is ``dst.device``).
    copy_dst: cst.BaseExpression | None
    #: The construction is the copy's receiver itself (``torch.tensor(x).to(...)``).
    chained: bool
    sink_statement: cst.CSTNode


@dataclass(frozen=True)
class DeviceConstruction:
    """``torch.tensor(<python data>, device=<not provably host>)``: a blocking pageable copy (PIN003)."""

    call: cst.Call
    factory: str
    device_arg: cst.Arg
    statement: cst.CSTNode


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _keyword_args(call: cst.Call) -> dict[str, cst.Arg]:
    return {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}


def _positional(call: cst.Call) -> list[cst.BaseExpression] | None:
    """Positional argument values; None when a ``*args``/``**kwargs`` hides what is passed."""
    out = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            out.append(arg.value)
    return out


def _string_value(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd literals (bytes, escapes): treat as unknown
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        # f"cuda:{rank}": the static prefix is enough to tell host from accelerator.
        first = node.parts[0] if node.parts else None
        if isinstance(first, cst.FormattedStringText):
            return first.value
    return None


class FunctionFlow:
    """Walks one scope; collects ``hits`` (PIN001/PIN002) and ``constructions`` (PIN003)."""

    def __init__(self, names: FileNames, scope: cst.FunctionDef | cst.Module, device_rule: bool) -> None:
        self.names = names
        self.scope = scope
        self.device_rule = device_rule
        self.hits: list[SinkHit] = []
        self.constructions: list[DeviceConstruction] = []
        #: name or attribute chain -> the target nodes that bind it (the fixer checks that a
        #: device expression is not rebound between the construction and the copy).
        self.bindings: dict[str, list[cst.CSTNode]] = {}
        self._statement: cst.CSTNode = scope
        #: Inside ``with torch.device(...)``, or a file that calls ``set_default_device``:
        #: factories without ``device=`` may allocate on an accelerator.
        self._default_device_unknown = names.sets_default_device
        self._seen_hits: set[tuple[int, int]] = set()
        self._seen_constructions: set[int] = set()
        self._cached: dict[int, Value] = {}
        #: id(construction node) -> the statement it sits in (for ``# noqa`` rows).
        self.statement_of: dict[int, cst.CSTNode] = {}
        self.torch_modules, self.torch_functions = self._torch_names_in_scope()

    # ------------------------------------------------------------------ names
    def _torch_names_in_scope(self) -> tuple[set[str], dict[str, str]]:
        torch_modules = set(self.names.torch_modules)
        torch_functions = dict(self.names.torch_functions)
        if isinstance(self.scope, cst.FunctionDef):
            collector = _BoundNames()
            collector.params(self.scope.params)
            collector.statements(statements_in(self.scope.body))
            # A parameter or local that reuses a torch name shadows it for the whole function
            # (Python scoping: a name assigned anywhere in a function is local everywhere in it).
            for name in collector.names - collector.torch_imports - collector.torch_function_imports.keys():
                torch_modules.discard(name)
                torch_functions.pop(name, None)
            torch_modules |= collector.torch_imports
            torch_functions.update(collector.torch_function_imports)
        return torch_modules, torch_functions

    def _torch_function(self, func: cst.BaseExpression) -> str | None:
        if isinstance(func, cst.Name):
            return self.torch_functions.get(func.value)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.value.value in self.torch_modules:
                return func.attr.value
        return None

    def _is_numpy_call(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name):
            return self.names.numpy_functions.get(func.value) in torch_api.NUMPY_ARRAY_FUNCTIONS
        if isinstance(func, cst.Attribute):
            root = dotted(func)
            if root and root.split(".", 1)[0] in self.names.numpy_modules:
                return func.attr.value in torch_api.NUMPY_ARRAY_FUNCTIONS
        return False

    def _is_dtype(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            if node.value.value in self.torch_modules:
                return node.attr.value in torch_api.DTYPES
        if isinstance(node, cst.Name) and self.torch_functions.get(node.value) in torch_api.DTYPES:
            return True
        name = dotted(node)
        # `x.to(dtype, non_blocking=True)`, `x.to(self.torch_dtype)`: by convention a dtype.
        return bool(name) and "dtype" in name.rsplit(".", 1)[-1].lower()

    def classify_device(self, node: cst.BaseExpression) -> str:
        """'host', 'accelerator', 'other' (e.g. "meta": not an H2D copy) or 'unknown'."""
        text = _string_value(node)
        if text is not None:
            lowered = text.strip().lower()
            if lowered.startswith(torch_api.HOST_DEVICE_PREFIXES):
                return "host"
            if lowered.startswith(torch_api.ACCELERATOR_DEVICE_PREFIXES):
                return "accelerator"
            return "other" if isinstance(node, cst.SimpleString) else "unknown"
        if isinstance(node, cst.Integer):
            return "accelerator"  # a bare index names an accelerator device
        if isinstance(node, cst.Call) and self._torch_function(node.func) == "device":
            positional = _positional(node)
            if positional:
                return self.classify_device(positional[0])
            kw = _keyword_args(node).get("type")
            return self.classify_device(kw.value) if kw else "unknown"
        return "unknown"

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
            env = self._statement_(statement, env)
        return env

    def _suite(self, suite: cst.BaseSuite, env: Env) -> Env:
        if isinstance(suite, cst.IndentedBlock):
            return self._block(list(suite.body), env)
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self._statement = suite
                env = self._small(small, env)
            return env
        return env

    def _statement_(self, statement: cst.CSTNode, env: Env) -> Env:
        if isinstance(statement, cst.SimpleStatementLine):
            self._statement = statement
            for small in statement.body:
                env = self._small(small, env)
            return env
        if isinstance(statement, cst.If):
            self._statement = statement.test
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
                other = self._statement_(statement.orelse, dict(env))
            else:
                other = self._suite(statement.orelse.body, dict(env))
            return _merge(taken, other)
        if isinstance(statement, (cst.For, cst.While)):
            if isinstance(statement, cst.For):
                self._statement = statement.iter
                self.ev(statement.iter, env)
                env = dict(env)
                self._bind(statement.target, UNKNOWN, env)
            else:
                self._statement = statement.test
                self.ev(statement.test, env)
            first = self._suite(statement.body, dict(env))
            # A second pass lets values assigned at the end of the body reach the next iteration.
            second = self._suite(statement.body, _merge(env, first))
            after = _merge(env, second)
            if statement.orelse is not None:
                after = self._suite(statement.orelse.body, after)
            return after
        if isinstance(statement, (cst.Try, cst.TryStar)):
            body = self._suite(statement.body, dict(env))
            outcomes = [body]
            for handler in statement.handlers:
                handler_env = _merge(env, body)
                if handler.name is not None:
                    self._bind(handler.name.name, UNKNOWN, handler_env)
                outcomes.append(self._suite(handler.body, handler_env))
            if statement.orelse is not None:
                outcomes[0] = self._suite(statement.orelse.body, body)
            merged = outcomes[0]
            for outcome in outcomes[1:]:
                merged = _merge(merged, outcome)
            if statement.finalbody is not None:
                merged = self._suite(statement.finalbody.body, merged)
            return merged
        if isinstance(statement, cst.With):
            env = dict(env)
            previous = self._default_device_unknown
            for item in statement.items:
                self._statement = item
                self.ev(item.item, env)
                if self._sets_default_device(item.item):
                    self._default_device_unknown = True
                if item.asname is not None:
                    self._bind(item.asname.name, UNKNOWN, env)
            try:
                return self._suite(statement.body, env)
            finally:
                self._default_device_unknown = previous
        if isinstance(statement, cst.Match):
            self._statement = statement.subject
            self.ev(statement.subject, env)
            merged: Env | None = None
            for case in statement.cases:
                outcome = self._suite(case.body, dict(env))
                merged = outcome if merged is None else _merge(merged, outcome)
            return _merge(env, merged) if merged is not None else env
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            # Nested functions and classes are scopes of their own, analysed separately.
            env = dict(env)
            self._bind(statement.name, UNKNOWN, env)
            return env
        return env

    def _sets_default_device(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            return self._torch_function(node.func) == "device"
        name = dotted(node)
        return bool(name) and "device" in name.rsplit(".", 1)[-1].lower()

    def _small(self, small: cst.BaseSmallStatement, env: Env) -> Env:
        if isinstance(small, cst.Assign):
            value = self.ev(small.value, env)
            env = dict(env)
            for target in small.targets:
                self._bind(target.target, value, env, small.value)
            return env
        if isinstance(small, cst.AnnAssign):
            if small.value is None:
                return env
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
            for element in _flatten_targets(small.target):
                key = dotted(element)
                if key:
                    env.pop(key, None)
            return env
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            env = dict(env)
            for alias in small.names if not isinstance(small.names, cst.ImportStar) else []:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name):
                    self._bind(bound, UNKNOWN, env)
            return env
        self._visit_children(small, env)  # Expr, Return, Assert, Raise...: evaluate what they hold
        return env

    # ------------------------------------------------------------------ bindings
    def _record_binding(self, target: cst.BaseExpression) -> None:
        key = dotted(target)
        if key:
            self.bindings.setdefault(key, []).append(self._statement)

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
            if isinstance(value_node, (cst.Tuple, cst.List)) and len(value_node.elements) == len(elements) and not any(
                isinstance(e, cst.StarredElement) for e in value_node.elements
            ):
                values = [self._cached.get(id(e.value), UNKNOWN) for e in value_node.elements]
            else:
                values = [UNKNOWN] * len(elements)  # unpacking an opaque value: unknown parts
            for element, element_value in zip(elements, values):
                self._bind(element, element_value, env)
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, UNKNOWN, env)
            return
        if isinstance(target, cst.Subscript):
            # `buf[i] = v` writes into buf: its storage (and pinnedness) is unchanged.
            self.ev(target, env)
            return
        key = dotted(target)
        if key is None:
            self._visit_children(target, env)
            return
        self.bindings.setdefault(key, []).append(self._statement)
        # Rebinding `x` invalidates what we knew about `x.attr`.
        prefix = key + "."
        for stale in [k for k in env if k.startswith(prefix)]:
            del env[stale]
        env[key] = value

    # ------------------------------------------------------------------ expressions
    def ev(self, node: cst.BaseExpression, env: Env) -> Value:
        value = self._ev(node, env)
        self._cached[id(node)] = value
        for origin in value:
            if origin.node is node:  # born here: remember its statement for `# noqa`
                self.statement_of.setdefault(id(node), self._statement)
        return value

    def _ev(self, node: cst.BaseExpression, env: Env) -> Value:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return PYDATA
            return env.get(node.value, UNKNOWN)
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
            if kinds(left) <= {"pydata"} and kinds(right) <= {"pydata"}:
                return PYDATA  # e.g. `[0] + lens`, `n * 2`
            return combine([left, right], node, "an arithmetic result")
        if isinstance(node, cst.Comparison):
            values = [self.ev(node.left, env)] + [self.ev(c.comparator, env) for c in node.comparisons]
            if all(kinds(v) <= {"pydata"} for v in values):
                return PYDATA
            return combine(values, node, "a comparison result")
        if isinstance(node, cst.UnaryOperation):
            operand = self.ev(node.expression, env)
            if kinds(operand) <= {"pydata"}:
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
        return UNKNOWN

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
                index_value = self._cached.get(id(inner.value), UNKNOWN)
                if is_tensor(index_value) or isinstance(
                    inner.value, (cst.List, cst.Tuple, cst.Comparison, cst.BooleanOperation, cst.Call)
                ):
                    basic = False  # advanced (mask or index-list) indexing copies into a new tensor
        if kinds(base) <= {"pydata"}:
            return UNKNOWN  # an element of Python data may be anything (even an ndarray)
        if basic:
            return base  # a view shares the base's storage: same origin, same pinnedness
        return derived(base, node, "an indexing result")

    # ------------------------------------------------------------------ calls
    def _call(self, call: cst.Call, env: Env) -> Value:
        func = call.func
        torch_name = self._torch_function(func)
        if torch_name is not None:
            arg_values = [self.ev(arg.value, env) for arg in call.args]
            return self._torch_call(torch_name, call, arg_values)
        taught = dotted(func)
        if taught is not None and (taught in self.names.pinned_functions or taught in self.names.host_functions):
            for arg in call.args:
                self.ev(arg.value, env)
            if taught in self.names.pinned_functions:
                return PINNED  # the project says this returns pinned host memory
            return pageable(call, pinnable=False, what=f"{taught}(...)")
        if self._is_numpy_call(func):
            for arg in call.args:
                self.ev(arg.value, env)
            return NUMPY
        if isinstance(func, cst.Attribute):
            receiver = self.ev(func.value, env)
            arg_values = [self.ev(arg.value, env) for arg in call.args]
            return self._method_call(func.attr.value, func.value, receiver, call, arg_values)
        self.ev(func, env)
        for arg in call.args:
            self.ev(arg.value, env)
        if isinstance(func, cst.Name) and func.value in torch_api.PYTHON_DATA_BUILTINS and func.value not in env:
            return PYDATA
        return UNKNOWN  # a call into project or library code: unknown provenance

    def _device_kw(self, call: cst.Call) -> tuple[str, cst.Arg | None]:
        arg = _keyword_args(call).get("device")
        if arg is None:
            return ("default", None)
        return (self.classify_device(arg.value), arg)

    def _pinned_kw(self, call: cst.Call) -> bool | None:
        """True: pin_memory=<not False>; False: pin_memory=False; None: absent."""
        arg = _keyword_args(call).get("pin_memory")
        if arg is None:
            return None
        return not _is_false(arg.value)

    def _allocated_value(self, call: cst.Call, what: str, *, data: Value | None = None) -> Value:
        """The value of a factory call that accepts ``pin_memory=`` (where it allocates)."""
        if any(arg.star == "**" for arg in call.args):
            return UNKNOWN  # `**kwargs` may carry device= or pin_memory=
        pinned = self._pinned_kw(call)
        device, _ = self._device_kw(call)
        if device in ("accelerator", "unknown"):
            # A run-time device (`device=dev`) may well be the host, but host-ness then rests on a
            # run-time condition: treated like a device value, so that a sibling path that is
            # host-pageable is not flagged on its own (precision first).
            return DEVICE
        if device == "other":
            return UNKNOWN  # e.g. "meta": no memory at all
        if pinned:
            return PINNED
        if device == "default" and self._default_device_unknown:
            return UNKNOWN  # a default device may be set: the factory may allocate on it
        data_is_python = data is not None and kinds(data) <= {"pydata"}
        return pageable(call, pinnable=True, what=what, data_is_python=data_is_python)

    def _torch_call(self, name: str, call: cst.Call, arg_values: list[Value]) -> Value:
        keywords = _keyword_args(call)
        if "out" in keywords:
            return self._cached.get(id(keywords["out"].value), UNKNOWN)  # the result *is* `out`
        positional_values = [v for arg, v in zip(call.args, arg_values) if arg.keyword is None and not arg.star]
        first = positional_values[0] if positional_values else UNKNOWN
        if name in ("tensor", "as_tensor", "asarray") and _is_empty_data(call):
            return UNKNOWN  # `torch.tensor([])`: no bytes to copy, nothing to pin or wait for
        if name == "tensor":
            self._check_device_construction(call, name, first)
            if kinds(first) & {"device"} and is_tensor(first):
                return DEVICE if self._device_kw(call)[0] == "default" else UNKNOWN
            if is_tensor(first) or kinds(first) == {"numpy"}:
                device, _ = self._device_kw(call)
                if device != "default" and device != "host":
                    return UNKNOWN if device == "other" else DEVICE  # a run-time device: see _allocated_value
                if self._default_device_unknown and device == "default":
                    return UNKNOWN
                what = "torch.tensor(<numpy array>)" if kinds(first) == {"numpy"} else "torch.tensor(<tensor>)"
                # `pin_memory=True` raises for numpy or tensor data: this cannot be pinned at birth.
                return pageable(call, pinnable=False, what=what)
            return self._allocated_value(call, "torch.tensor(...)", data=first)
        if name in torch_api.PINNABLE_FACTORIES:
            if name in torch_api.SIZED_FACTORIES and _is_zero_size(call):
                return UNKNOWN  # an empty tensor copies no bytes: nothing to pin
            return self._allocated_value(call, f"torch.{name}(...)")
        if name in torch_api.PINNABLE_LIKE_FACTORIES:
            device, _ = self._device_kw(call)
            if device == "default" and not is_host(first):
                if first and kinds(first) == {"device"}:
                    return DEVICE
                return UNKNOWN  # allocates on its argument's device, which we do not know
            return self._allocated_value(call, f"torch.{name}(...)")
        if name in torch_api.UNPINNABLE_DATA_FACTORIES:
            self._check_device_construction(call, name, first)
            device, _ = self._device_kw(call)
            if device in ("accelerator", "unknown"):
                return DEVICE  # a run-time device: see _allocated_value
            if device == "other":
                return UNKNOWN
            if self._default_device_unknown and device == "default":
                return UNKNOWN
            if kinds(first) <= {"pydata"} and first or kinds(first) == {"numpy"}:
                return pageable(call, pinnable=False, what=f"torch.{name}(...)")
            if is_tensor(first):
                # as_tensor of a tensor returns it (or a converted copy on the same device).
                return first if "dtype" not in keywords else derived(first, call, f"torch.{name}(...)")
            return UNKNOWN
        if name in torch_api.MEMORY_SHARING_FACTORIES:
            return pageable(call, pinnable=False, what=f"torch.{name}(...)")
        if name in torch_api.COMBINING_FUNCTIONS:
            inputs: list[Value] = []
            for arg, value in zip(call.args, arg_values):
                if arg.keyword is not None:
                    continue
                if isinstance(arg.value, (cst.List, cst.Tuple)):
                    inputs.extend(self._cached.get(id(e.value), UNKNOWN) for e in arg.value.elements)
                else:
                    inputs.append(value)
            if not inputs or any(kinds(v) <= {"pydata"} for v in inputs[:1]):
                return UNKNOWN  # e.g. torch.cat(list_of_tensors): the elements are not visible
            return combine(inputs, call, f"torch.{name}(...)")
        return UNKNOWN

    def _check_device_construction(self, call: cst.Call, name: str, data: Value) -> None:
        if not self.device_rule or id(call) in self._seen_constructions:
            return
        device, arg = self._device_kw(call)
        if arg is None or device not in ("accelerator", "unknown"):
            return  # no device=, or provably the host / a non-copy target such as "meta"
        if not (data and kinds(data) <= {"pydata"}):
            return  # only Python data is copied from pageable memory by the constructor itself
        self._seen_constructions.add(id(call))
        self.constructions.append(DeviceConstruction(call, name, arg, self._statement))

    def _method_call(
        self,
        method: str,
        receiver_node: cst.BaseExpression,
        receiver: Value,
        call: cst.Call,
        arg_values: list[Value],
    ) -> Value:
        if method == torch_api.TO_METHOD:
            return self._to_call(receiver_node, receiver, call)
        if method == torch_api.CUDA_METHOD:
            positional = _positional(call)
            keywords = _keyword_args(call)
            if positional is None:
                return DEVICE
            nb = keywords.get("non_blocking")
            non_blocking = _is_true(nb.value) if nb else (len(positional) >= 2 and _is_true(positional[1]))
            device = keywords["device"].value if "device" in keywords else (positional[0] if positional else None)
            if non_blocking:
                self._sink(receiver_node, receiver, call, ".cuda", device, None)
            return DEVICE
        if method == torch_api.COPY_METHOD:
            positional = _positional(call)
            keywords = _keyword_args(call)
            if not positional:
                return receiver
            nb = keywords.get("non_blocking")
            non_blocking = _is_true(nb.value) if nb else (len(positional) >= 2 and _is_true(positional[1]))
            if non_blocking and not is_host(receiver):
                # The destination is not provably host memory: a host-to-device copy.
                source_value = self._cached.get(id(positional[0]), UNKNOWN)
                self._sink(positional[0], source_value, call, ".copy_", None, receiver_node)
            return receiver  # copy_ returns its destination
        if method == torch_api.PIN_METHOD:
            return PINNED
        if method in torch_api.VIEW_METHODS:
            return receiver
        if method in torch_api.TO_HOST_METHODS:
            if kinds(receiver) == {"pinned"}:
                return receiver  # .cpu() of a host tensor returns it unchanged
            if not receiver or kinds(receiver) <= {"pydata", "numpy"}:
                return UNKNOWN
            return pageable(call, pinnable=False, what=".cpu()")
        if method in torch_api.NEW_TENSOR_METHODS:
            return derived(receiver, call, f".{method}()")
        if method == "numpy":
            return NUMPY
        if method in torch_api.PYTHON_DATA_METHODS:
            return PYDATA
        if method in torch_api.PINNABLE_NEW_METHODS:
            device, _ = self._device_kw(call)
            if device == "default":
                if is_host(receiver):
                    return self._allocated_value(call, f".{method}(...)")
                return DEVICE if kinds(receiver) == {"device"} else UNKNOWN
            return self._allocated_value(call, f".{method}(...)")
        return UNKNOWN  # any other method: unknown provenance

    def _to_call(self, receiver_node: cst.BaseExpression, receiver: Value, call: cst.Call) -> Value:
        positional = _positional(call)
        keywords = _keyword_args(call)
        if positional is None:
            return UNKNOWN  # `x.to(*args, **kw)`: the target is not visible
        device: cst.BaseExpression | None = keywords["device"].value if "device" in keywords else None
        nb_position = 2
        if device is None and positional:
            if self._is_dtype(positional[0]):
                nb_position = 1
            else:
                device = positional[0]
                if is_tensor(self._cached.get(id(positional[0]), UNKNOWN)):
                    nb_position = 1  # `.to(other_tensor, non_blocking)`
        nb = keywords.get("non_blocking")
        non_blocking = _is_true(nb.value) if nb else (len(positional) > nb_position and _is_true(positional[nb_position]))
        if device is None:
            return derived(receiver, call, "a dtype cast")  # dtype-only cast: a new host tensor
        other_value = self._cached.get(id(device), UNKNOWN)
        if is_tensor(other_value):
            target = "host" if is_host(other_value) else ("accelerator" if kinds(other_value) == {"device"} else "unknown")
        else:
            target = self.classify_device(device)
        if target == "host":
            if is_host(receiver):
                return receiver  # already on the host: .to("cpu") returns self
            if non_blocking:
                return UNKNOWN  # a non_blocking D2H copy lands in pinned memory
            if not receiver or kinds(receiver) <= {"pydata", "numpy"}:
                return UNKNOWN
            return pageable(call, pinnable=False, what='.to("cpu")')  # a D2H copy lands in pageable memory
        if target == "other":
            return UNKNOWN
        if non_blocking:
            self._sink(receiver_node, receiver, call, ".to", device, None)
        return DEVICE

    def _sink(
        self,
        source_node: cst.BaseExpression,
        source: Value,
        call: cst.Call,
        api: str,
        device: cst.BaseExpression | None,
        copy_dst: cst.BaseExpression | None,
    ) -> None:
        source_kinds = kinds(source)
        if "device" in source_kinds:
            # Host-ness rests on a run-time condition (some path is already on a device).
            return
        for origin in source:
            if origin.kind != "pageable" or origin.node is None:
                continue
            key = (id(origin.node), id(call))
            if key in self._seen_hits:
                continue
            self._seen_hits.add(key)
            chained = _strip_views(source_node) is origin.node
            self.hits.append(SinkHit(origin, call, api, device, copy_dst, chained, self._statement))


def _strip_views(node: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.tensor(x)[:n].view(-1)`` -> ``torch.tensor(x)``: the construction behind views."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in torch_api.VIEW_METHODS
        ):
            node = node.func.value
        else:
            return node


_DEVICE_ATTRIBUTES = frozenset({"is_cpu", "is_cuda", "device", "is_pinned", "is_meta"})


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


def _is_empty_data(call: cst.Call) -> bool:
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return bool(positional) and isinstance(positional[0], (cst.List, cst.Tuple)) and not positional[0].elements


def _is_zero_size(call: cst.Call) -> bool:
    """``torch.zeros(0, ...)``, ``torch.empty((0,))``: a literal size of zero elements."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if not positional:
        return False
    first = positional[0]
    if isinstance(first, (cst.Tuple, cst.List)):
        return any(isinstance(e.value, cst.Integer) and e.value.value == "0" for e in first.elements)
    return isinstance(first, cst.Integer) and first.value == "0"


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


def _flatten_targets(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, (cst.Tuple, cst.List)):
        out: list[cst.BaseExpression] = []
        for element in node.elements:
            out.extend(_flatten_targets(element.value))
        return out
    return [node]


def _suites(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """The blocks of statements directly inside a compound statement (not an elif's)."""
    out: list[cst.BaseSuite] = []
    body = getattr(statement, "body", None)
    if isinstance(body, cst.BaseSuite):
        out.append(body)
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.Else):
        out.append(orelse.body)
    finalbody = getattr(statement, "finalbody", None)
    if isinstance(finalbody, cst.Finally):
        out.append(finalbody.body)
    for handler in getattr(statement, "handlers", ()):
        out.append(handler.body)
    for case in getattr(statement, "cases", ()):
        out.append(case.body)
    return out


def statements_in(suite: cst.BaseSuite) -> list[cst.CSTNode]:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return [suite]
    return []


def iter_statements(statements: list[cst.CSTNode], into_functions: bool = False):  # type: ignore[no-untyped-def]
    """Every statement below ``statements`` (walking blocks of compound statements, an
    ``elif`` chain included), without descending into nested functions and classes unless
    asked. Manual recursion: libcst's visitor machinery costs ~10x the parse."""
    stack = list(reversed(statements))
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and not into_functions:
            continue
        children: list[cst.CSTNode] = []
        if isinstance(statement, cst.If) and isinstance(statement.orelse, cst.If):
            children.append(statement.orelse)
        for suite in _suites(statement):
            children.extend(statements_in(suite))
        stack.extend(reversed(children))


class _BoundNames:
    """Every name a function binds (parameters, assignments, loops, imports, nested defs)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.torch_imports: set[str] = set()
        self.torch_function_imports: dict[str, str] = {}

    def params(self, params: cst.Parameters) -> None:
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self.names.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.names.add(star.name.value)

    def statements(self, statements: list[cst.CSTNode]) -> None:
        for statement in iter_statements(statements):
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                self.names.add(statement.name.value)
            elif isinstance(statement, cst.For):
                self._targets(statement.target)
            elif isinstance(statement, cst.With):
                for item in statement.items:
                    if item.asname is not None:
                        self._targets(item.asname.name)
            elif isinstance(statement, (cst.Try, cst.TryStar)):
                for handler in statement.handlers:
                    if handler.name is not None and isinstance(handler.name.name, cst.Name):
                        self.names.add(handler.name.name.value)
            smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
            for small in smalls:
                self._small(small)

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self._targets(target.target)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            self._targets(small.target)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                name = alias.evaluated_alias or alias.evaluated_name.split(".", 1)[0]
                self.names.add(name)
                if alias.evaluated_name == "torch" or (alias.asname is None and alias.evaluated_name.startswith("torch.")):
                    self.torch_imports.add(name)
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            module = cst.helpers.get_full_name_for_node(small.module) if small.module else None
            for alias in small.names:
                local = alias.evaluated_alias or alias.evaluated_name
                self.names.add(local)
                if module == "torch" and not small.relative:
                    self.torch_function_imports[local] = alias.evaluated_name
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                self.names.add(item.name.value)

    def _targets(self, node: cst.BaseExpression) -> None:
        for element in _flatten_targets(node):
            if isinstance(element, cst.Name):
                self.names.add(element.value)
            elif isinstance(element, cst.StarredElement) and isinstance(element.value, cst.Name):
                self.names.add(element.value.value)
