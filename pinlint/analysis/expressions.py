"""Expression evaluation for the interpreter: what value (see ``values``) an expression has in
the current environment, reporting the copies it makes on the way (see ``torch_semantics``).

Every bail-out (a value becomes ``unknown``) says why in a comment: precision first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import d2h, objects, torch_semantics
from pinlint.analysis.budget import _DEADLINE_EVERY, SCOPE_STEP_BUDGET, BudgetExceeded
from pinlint.analysis.builtins import READ_ONLY_BUILTINS, constant_truth, never_iterates, repeats_a_list
from pinlint.analysis.callargs import is_false
from pinlint.analysis.cst_walk import EXPRESSION_TYPES, children, mentioned
from pinlint.analysis.device_tests import compared_to_another_device, host_side
from pinlint.analysis.devices import DeviceClass, classify_device
from pinlint.analysis.dict_uses import key_decides, only_read, rekeyed_in_walk
from pinlint.analysis.env import Env
from pinlint.analysis.events import EventSink, UncalledIsPinned
from pinlint.analysis.host_uses import HostUses
from pinlint.analysis.names import FileNames
from pinlint.analysis.scopes import ScopeNames, dotted, flatten_targets, iter_statements, named_parameter
from pinlint.analysis.text_patterns import (
    DECLARING_TEXT,
    DEVICE_SAMPLES_TEXT,
    LOADER_CHANGING_TEXT,
    LOADER_CLASS_PATCHING_TEXT,
    MEMORY_REPLACING_TEXT,
    PINNED_SAMPLES_TEXT,
)
from pinlint.analysis.values import (
    DTYPE,
    FALSE,
    FIELD_ITEM,
    FIELD_NAME,
    HOST,
    HOST_DEVICE,
    HOST_KINDS,
    HOST_ORIGIN,
    ITEM_PART,
    KEY_TESTED_ITEMS,
    MAYBE_PINNED_KINDS,
    NUMPY,
    PINNED,
    PYDATA,
    TRUE,
    UNKNOWN,
    Kind,
    Origin,
    Value,
    batches,
    combine,
    derived,
    device_of,
    handle_kind,
    host_handle,
    is_pydata,
    is_tensor,
    is_true,
    loaded,
    loaded_items,
    pageable,
    self_attribute,
    walked_attribute,
)


class Summaries(Protocol):
    """What the rest of the file says about names this function does not bind itself."""

    def attribute(self, evaluator: Evaluator, key: str) -> Value | None: ...

    def attribute_elements(self, evaluator: Evaluator, key: str, suffix: str) -> Value | None: ...

    def call(self, evaluator: Evaluator, call: cst.Call) -> Value | None: ...

    def call_elements(self, evaluator: Evaluator, call: cst.Call, count: int | None) -> list[Value] | None: ...

    def call_containers(self, evaluator: Evaluator, call: cst.Call) -> dict[str, Value] | None: ...

    def checked_on_host(self, evaluator: Evaluator, call: cst.Call) -> list[cst.BaseExpression]: ...

    def forward_arguments(self, evaluator: Evaluator, call: cst.Call) -> None: ...

    def method_may_assign(self, evaluator: Evaluator, method: str, attr: str) -> bool: ...

    def is_method(self, evaluator: Evaluator, name: str) -> bool: ...

    def referenced_methods(self, evaluator: Evaluator) -> frozenset[str]: ...

    def host_device_constant(self, name: str) -> bool: ...

    def module_constant_truth(self, name: str) -> bool | None: ...

    def text_matches(self, pattern: re.Pattern[str]) -> bool: ...

    def matched_around(self, pattern: re.Pattern[str]) -> bool: ...


class Evaluator:
    """The expression half of the interpreter (``Interpreter`` adds statements)."""

    def __init__(
        self,
        names: FileNames,
        scope: cst.FunctionDef | cst.Module,
        events: EventSink,
        *,
        budget: int = SCOPE_STEP_BUDGET,
        deadline: float | None = None,
        summaries: Summaries | None = None,
    ) -> None:
        self.file_names = names
        self.scope = scope
        self.events = events
        self.names = ScopeNames(names, scope)
        self.env = Env()
        #: name or attribute chain -> the statements that bind it (the fixer checks that a
        #: device expression is not rebound between the construction and the copy).
        self.bindings: dict[str, list[cst.CSTNode]] = {}
        self.statement: cst.CSTNode = scope
        #: The test of the conditional expression being evaluated (PIN004 reads it as a truth test).
        self.truth_test: cst.CSTNode | None = None
        #: The call of an expression statement being evaluated (its result is thrown away).
        self.discarded: cst.CSTNode | None = None
        #: Inside ``with torch.device(...)``, or a file that calls ``set_default_device``:
        #: factories without ``device=`` may allocate on an accelerator.
        self.default_device_unknown = names.sets_default_device
        self._values: dict[int, Value] = {}
        #: id(construction node) -> the statement it sits in (for the rows noqa comments are read on).
        self.statement_of: dict[int, cst.CSTNode] = {}
        #: Analysis steps taken (deterministic: tests assert how it grows).
        self.steps = 0
        self._budget = budget
        self._deadline = deadline
        self.timed_out = False
        #: Host writes and escapes of the tensors a fix would pin (see ``host_uses``).
        self.uses = HostUses()
        self._captured_done: set[int] = set()
        self._captures: list[tuple[cst.CSTNode, cst.CSTNode, str]] = []
        #: name -> every value bound to it during the walk (for captures by nested functions).
        self.ever_bound: dict[str, Value] = {}
        #: ids of the loops being walked, innermost last.
        self.loop_stack: list[int] = []
        #: ids of tuple/list literals that are not containers a tensor could escape into (the
        #: direct arguments of torch calls, the right side of an unpacking assignment).
        self._transparent: set[int] = set()
        #: What other functions of the file do (attributes they set, what they return, which
        #: parameters they copy); None: this function is analysed on its own.
        self.summaries = summaries
        #: ``self.<attr>`` -> every value this function assigns to it.
        self.attribute_values: dict[str, Value] = {}
        self.data_not_python: set[int] = set()
        #: Parameters whose default is ``True`` (``non_blocking=True``, ``pin=True``).
        self.default_true_params: set[str] = set()
        #: Pageable origins that reach only where a default-True flag is false (``if pin: t =
        #: t.pin_memory()``): a copy ``non_blocking=pin`` of them blocks (see ``guard_by_flag``).
        self.flag_guarded: dict[Origin, set[str]] = {}
        #: Origins made only on paths where a name was (not) None, with that name's value then:
        #: ``if x is None: t = pageable`` then ``if x is not None: copy(t)`` never copies it.
        self.none_guarded: dict[Origin, list[tuple[str, bool, Value | None]]] = {}
        #: The values of this function's ``return`` statements.
        self.returns: list[Value] = []
        #: The values its ``yield`` statements give (a generator), and whether one is not known
        #: (``yield from``): what a loop over a call of it takes.
        self.yields: list[Value] = []
        self.yields_unknown = False
        #: The same returns element by element where each returns a tuple display (``return a,
        #: b``), else None for that return (unpacked by a caller: ``x, y = f()``).
        self.tuple_returns: list[list[Value] | None] = []
        #: The same returns as containers, where each returns a list, tuple or dict whose
        #: elements are known (``.[]``, ``.{}``, ``.{key}`` -> value, as ``set_elements`` keeps
        #: them), else None for that return (``out = helper(); out["mask"]`` in a caller).
        self.container_returns: list[dict[str, Value] | None] = []
        #: Nested ``def``s of this function, by name.
        self.local_functions: dict[str, cst.FunctionDef] = {}
        #: Lists whose elements may no longer be the recorded ones (``iterated``).
        self.lists_changed: set[str] = set()
        #: Names (chains) that another name, attribute or container display also holds
        #: (``other = tap``, ``[tap]``): an attribute stored through one is not seen through
        #: the other, so what is stored in their attributes is not known from then on.
        self.aliased: set[str] = set()
        self._local_names: tuple[int, set[str]] = (0, set())
        self._lambdas: list[cst.Lambda] = []
        #: Lists whose items may have moved (``sort``, ``reverse``, ``insert``): a ``zip``, which
        #: stops at its shortest list, may reach other items than their order said.
        self.lists_reordered: set[str] = set()
        #: Dicts this function stores items into by a computed key (``d[k] = t``).
        self._keyed_stores: set[str] = set()
        #: name -> whether this scope only reads the dict it holds (``dict_uses.only_read``).
        #: (name, fields) -> whether this scope only reads the dict (the object's fields) it holds.
        self._only_read: dict[tuple[str, bool], bool] = {}
        #: Whether the function replaces some tensor's memory in place (``fields_trusted``).
        self._replaces_memory: bool | None = None
        #: Parameters kept past a test of their place (``if t.is_cuda:``): tensors, not objects
        #: whose fields a caller could say.
        self._place_tested: set[str] = set()
        self._declared: tuple[set[str], bool] | None = None
        #: id(argument) -> what the list (dict) it names held when handed to a call (the call
        #: may change it after: it is forgotten then, but its callee copies what it was given).
        self._handed_containers: dict[int, dict[str, Value]] = {}
        #: id of an argument node -> what this function had stored in its attributes when it
        #: was handed to a call (``batch.ids = t; upload(batch)``): forgotten past the call.
        self._handed_fields: dict[int, dict[str, Value]] = {}
        #: name -> (the call bound to it, the value bound): `pair = helper()`, whose items a
        #: constant index may pick (`pair[1]`), asked of the helper only then (see `_item`).
        self.bound_calls: dict[str, tuple[cst.Call, Value]] = {}
        #: A data loader (its construction's id) -> the arguments (ids) by which it was handed to
        #: code that may change it (`setattr(loader, k, v)`, `vars(loader).update(...)`).
        self._loaders_handed: dict[int, set[int]] = {}
        #: ``self.<attr>.[]`` / ``self.<attr>.{}`` -> every element this function put in the list
        #: (dict) it stored there: what other methods read from it (``attribute_elements``).
        self.attribute_elements: dict[str, Value] = {}
        #: Tensors named by code that a module constant rules out -> that constant (``rule_out``).
        self.assumed: dict[Origin, str] = {}
        #: The module constant the last ``test_truth`` read, until ``rule_out`` takes it.
        self.constant_tested: str | None = None
        #: The fields ``for f in fields(self):`` walks in this method (``_getattr``).
        self.own_fields: tuple[str, ...] = ()
        #: ``self.<field>`` nodes that ``getattr`` reads are evaluated as (kept alive: values
        #: are memoised by node id).
        self._read_attributes: dict[tuple[str, str], cst.Attribute] = {}
        #: ids of calls whose result is called at once (``getattr(self, "repin")()``).
        self._called_results: set[int] = set()

    @property
    def loops(self) -> tuple[int, ...]:
        return tuple(self.loop_stack)

    def host_write(self, value: Value, node: cst.CSTNode, what: str) -> None:
        self.uses.record("write", value, node, what, self.loops)

    def host_escape(self, value: Value, node: cst.CSTNode, what: str) -> None:
        self.uses.record("escape", value, node, what, self.loops)

    def captured(self, body: cst.CSTNode, node: cst.CSTNode, what: str) -> None:
        """Names of this scope that a nested function or lambda mentions escape into it."""
        if id(node) in self._captured_done:
            return  # looked at on an earlier walk of the same loop
        self._captured_done.add(id(node))
        # Resolved when the walk ends (`resolve_captures`): the names may be bound after the def.
        self._captures.append((body, node, what))

    def resolve_captures(self) -> None:
        """Everything ever bound to a name a nested function or lambda mentions escapes into it."""
        from pinlint.analysis.cst_walk import mentioned

        if not self.uses.tracking:
            return  # no tensor a fix would pin was born here: nothing to escape
        for body, node, what in self._captures:
            for name in mentioned(body):
                value = self.ever_bound.get(name)
                if value:
                    self.uses.record("escape", value, node, f"captured by {what}", ())

    def value_of(self, node: cst.BaseExpression) -> Value:
        return self._values.get(id(node), UNKNOWN)

    def list_elements(self, node: cst.BaseExpression) -> Value | None:
        key = dotted(node)
        elements = self.env.get(key + ".[]") if key is not None else None
        return elements or None  # an empty list: nothing known to combine

    def is_sequence(self, node: cst.BaseExpression) -> bool:
        key = dotted(node)
        if key is None:
            return False
        if key + ".[]" in self.env:
            return True  # bound to a list or tuple display (or comprehension) here, not since rebound
        if type(node) is not cst.Name or type(self.scope) is not cst.FunctionDef:
            return False
        params = self.scope.params
        param = next(
            (p for p in [*params.posonly_params, *params.params, *params.kwonly_params] if p.name.value == key), None
        )
        bound = self.env.get(key) or frozenset()
        if param is None or len(bound) != 1 or next(iter(bound)).node is not param:
            return False  # not a parameter, or bound again since
        return _sequence_annotation(param.annotation)

    def dict_call(self, node: cst.Call) -> bool:
        """``dict(a=x, b=y)`` of the builtin, keywords only: a dict display by another spelling."""
        return (
            type(node.func) is cst.Name
            and node.func.value == "dict"
            and "dict" not in self.env
            and "dict" not in self.file_names.module_level_bindings
            and all(a.keyword is not None and not a.star for a in node.args)
        )

    def _zipped_dict(self, node: cst.Call) -> Value | None:
        """``dict(zip(keys, values))`` of the builtins, ``values`` a list whose items are known:
        those items."""
        builtin = {
            name
            for name in ("dict", "zip")
            if name not in self.env and name not in self.file_names.module_level_bindings
        }
        if not (
            type(node.func) is cst.Name
            and node.func.value == "dict"
            and "dict" in builtin
            and len(node.args) == 1
            and node.args[0].keyword is None
            and not node.args[0].star
        ):
            return None
        inner = node.args[0].value
        if not (
            type(inner) is cst.Call
            and type(inner.func) is cst.Name
            and inner.func.value == "zip"
            and "zip" in builtin
            and len(inner.args) == 2
            and all(a.keyword is None and not a.star for a in inner.args)
        ):
            return None
        held = self.container_of(inner.args[1].value)
        return held.get(".[]") if held is not None else None

    def item_positions(self, node: cst.Subscript, count: int) -> list[Value] | None:
        """``variants[k]`` unpacked into ``count`` names, of a list of tuple displays of that length
        this function built: each position's items, where they agree (see ``_item``)."""
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return None
        key = dotted(node.value)
        if key is None or key in self.lists_changed:
            return None
        held = self.positions(key)
        if held is None or len(held) != count or key + ".[]%d" % count in self.env:
            return None
        return [value if _agree(value) else UNKNOWN for value in held]

    def container_of(self, node: cst.BaseExpression) -> dict[str, Value] | None:
        """What the list, tuple or dict ``node`` (already evaluated) holds, as the element keys
        of ``set_elements`` (``.[]``; ``.{}`` and ``.{key}``); None when not known."""
        kind = type(node)
        if kind is cst.Call and self.dict_call(node):  # type: ignore[arg-type]
            values = {a.keyword.value: self.value_of(a.value) for a in node.args}  # type: ignore[attr-defined]
            found = {".{%s}" % name: held for name, held in values.items()}
            found[".{}"] = frozenset().union(*values.values()) if values else frozenset()
            return found
        zipped = self._zipped_dict(node) if kind is cst.Call else None
        if zipped is not None:
            return {".{}": zipped}  # `dict(zip(names, tensors))`: the tensors are its values
        if kind in (cst.List, cst.Tuple):
            if not all(type(e) is cst.Element for e in node.elements):  # type: ignore[attr-defined]
                return None  # `*rest`
            return {".[]": frozenset().union(*(self.value_of(e.value) for e in node.elements))}  # type: ignore[attr-defined]
        if kind is cst.ListComp:
            return {".[]": self.value_of(node.elt)}  # type: ignore[attr-defined]
        if kind is cst.DictComp:
            return {".{}": self.value_of(node.value)}  # type: ignore[attr-defined]
        if kind is cst.Dict:
            if not distinct_keys(node):  # type: ignore[arg-type]
                return None  # `**other`, or a key that may be given twice (the later value wins)
            found = {".{}": frozenset().union(*(self.value_of(e.value) for e in node.elements))}  # type: ignore[attr-defined]
            for element in node.elements:  # type: ignore[attr-defined]
                name = literal_key(element.key)
                if name is not None:
                    found[".{%s}" % name] = self.value_of(element.value)
            return found
        sequence_builtin = (
            kind is cst.Call
            and type(node.func) is cst.Name  # type: ignore[attr-defined]
            and node.func.value in ("list", "tuple")  # type: ignore[attr-defined]
            and node.func.value not in self.env  # type: ignore[attr-defined]
            and node.func.value not in self.file_names.module_level_bindings  # type: ignore[attr-defined]
        )
        if sequence_builtin and not node.args:  # type: ignore[attr-defined]
            return {".[]": frozenset()}  # `list()`: an empty list
        if sequence_builtin and len(node.args) == 1 and not node.args[0].star:  # type: ignore[attr-defined]
            given = node.args[0].value  # type: ignore[attr-defined]
            if type(given) is cst.GeneratorExp:
                # `tuple(x.cpu() for x in xs)`: what its element gives, as a list comprehension's.
                return {".[]": self.value_of(given.elt)}
            inner = self.container_of(given)
            if inner is None or ".[]" not in inner:
                return None
            return {k: v for k, v in inner.items() if k.startswith(".[]")}  # `tuple(bufs)`: the same items
        if kind is cst.Call and self.summaries is not None:
            return self.summaries.call_containers(self, node)  # type: ignore[arg-type]
        key = dotted(node)
        if key is None or key in self.lists_changed:
            return None
        if (self.local_functions or self._lambdas) and key.split(".", 1)[0] in self._named_by_local_functions():
            return None  # a nested function or lambda may change what it holds
        found = {}
        for stale in self.env.keys_under(key):
            suffix = stale[len(key) :]
            if suffix.startswith((".[]", ".{")) and "." not in suffix[1:]:
                found[suffix] = self.env.get(stale) or frozenset()
        return found or None

    def set_elements(self, key: str, suffix: str, value: Value) -> None:
        """What the list (``.[]``) or dict (``.{}``) bound to ``key`` may hold now: every element
        ever put in it, as far as this function sees (an over-approximation)."""
        self.env.set(key + suffix, value)
        if key.startswith("self.") and key.count(".") == 1:
            element_key = key + suffix
            self.attribute_elements[element_key] = self.attribute_elements.get(element_key, frozenset()) | value

    def add_elements(self, node: cst.BaseExpression, value: Value) -> None:
        """``bufs.extend(xs)``, ``bufs += xs``, ``d.update(m)``: ``value`` may be among its elements now."""
        key = dotted(node)
        if key is None:
            return
        for suffix in (".[]", ".{}"):
            current = self.env.get(key + suffix)
            if current is not None:
                self.set_elements(key, suffix, current | value)
        self.set_positions(key, [None], fresh=False)  # tuples of other shapes, perhaps

    def _built_list(self, call: cst.Call) -> Value | None:
        """The elements of the list that ``call``'s one argument names, when this function built
        it and has not changed it since (``xs`` of ``bufs.extend(xs)``); else None."""
        node = _sole_argument(call)
        if type(node) is not cst.Name or node.value in self.lists_changed:  # type: ignore[union-attr]
            return None  # (an attribute's list may be changed through another name for its object)
        return self.env.get(node.value + ".[]")  # type: ignore[union-attr]

    def _extended_by(self, call: cst.Call, built: Value | None) -> Value | None:
        """The elements ``bufs.extend(xs)`` adds: of a list (tuple) display or comprehension, or
        ``built``, those of a list this function built (``_built_list``); None when not known."""
        node = _sole_argument(call)
        if node is None:
            return None
        if type(node) in (cst.List, cst.Tuple):
            if not all(type(e) is cst.Element for e in node.elements):  # type: ignore[attr-defined]
                return None  # `*rest`: elements not known
            return frozenset().union(*(self.value_of(e.value) for e in node.elements))  # type: ignore[attr-defined]
        if type(node) is cst.ListComp:
            return self.value_of(node.elt)  # type: ignore[attr-defined]
        return built

    def tuple_parts(self, node: cst.BaseExpression) -> list[Value] | None:
        """The values of a tuple display's items (``(ids, meta, n)``), else None."""
        if type(node) is cst.Tuple and node.elements and all(type(e) is cst.Element for e in node.elements):
            return [self.value_of(e.value) for e in node.elements]
        return None

    def positions(self, key: str) -> list[Value] | None:
        """For a list of tuples of one length: the values at each position (``.[]0``, ...)."""
        found = []
        while key + ".[]%d" % len(found) in self.env:
            found.append(self.env.get(key + ".[]%d" % len(found)) or frozenset())
        return found or None

    def set_positions(self, key: str, added: list[list[Value] | None], fresh: bool) -> None:
        """The list at ``key`` gets tuples ``added`` (None: not a tuple display we read): position
        by position, their items join what it held (``fresh``: it held nothing). Tuples of
        another length, or anything else, make every position unknown."""
        current = None if fresh else self.positions(key)
        if fresh and added and all(parts is not None for parts in added):
            lengths = {len(parts) for parts in added}  # type: ignore[arg-type]
            if len(lengths) == 1:
                for i in range(lengths.pop()):
                    self.set_elements(key, ".[]%d" % i, frozenset().union(*(parts[i] for parts in added)))  # type: ignore[index]
                return
        if current is None:
            return
        if all(parts is not None and len(parts) == len(current) for parts in added):
            for i, held in enumerate(current):
                self.set_elements(key, ".[]%d" % i, held.union(*(parts[i] for parts in added)))  # type: ignore[index]
        else:
            for i in range(len(current)):
                self.set_elements(key, ".[]%d" % i, UNKNOWN)

    def known_elements(self, key: str, suffix: str) -> Value | None:
        """The elements of the list (dict) at ``key`` that this function built, or that the
        class's methods put in ``self.<attr>``; None when not known (or possibly changed)."""
        if key in self.lists_changed:
            return None  # an item replaced or removed, or an alias written: not the recorded ones
        if (self.local_functions or self._lambdas) and key.split(".", 1)[0] in self._named_by_local_functions():
            return None  # a nested function or lambda may store other items when it runs
        elements = self.env.get(key + suffix)
        if elements is not None:
            return elements or None
        if self.summaries is not None and key.startswith("self.") and key.count(".") == 1 and key not in self.env:
            return self.summaries.attribute_elements(self, key, suffix)
        return None

    def may_rebind(self, name: str) -> bool:
        """Whether ``name`` may be bound out of this function's sight: a ``global`` or ``nonlocal``
        declaration of it anywhere in the function (its nested functions and classes included),
        or any ``match`` statement there (its patterns bind names)."""
        if self._declared is None:
            declared: set[str] = set()
            matches = False
            # The file's text first: most name no `global`, `nonlocal` or `match` at all.
            stack: list[cst.CSTNode] = (
                [self.scope] if self.summaries is None or self.summaries.text_matches(DECLARING_TEXT) else []
            )
            while stack and not matches:
                node = stack.pop()
                kind = type(node)
                if kind is cst.Global or kind is cst.Nonlocal:
                    declared.update(n.name.value for n in node.names)  # type: ignore[attr-defined]
                matches = kind is cst.Match
                stack.extend(children(node))
            self._declared = (declared, matches)
        declared, matches = self._declared
        return matches or name in declared

    def _named_by_local_functions(self) -> set[str]:
        """Every name the nested functions defined so far mention (kept while none is added)."""
        count = len(self.local_functions) + len(self._lambdas)
        if self._local_names[0] != count:
            from pinlint.analysis.cst_walk import mentioned

            names: set[str] = set()
            for function in [*self.local_functions.values(), *self._lambdas]:
                names |= mentioned(function)
            self._local_names = (count, names)
        return self._local_names[1]

    def step(self) -> None:
        self.steps += 1
        if self.steps > self._budget:
            raise BudgetExceeded(f"more than {self._budget:,} analysis steps")
        if self._deadline is not None and not self.steps % _DEADLINE_EVERY and time.monotonic() > self._deadline:
            self.timed_out = True
            raise BudgetExceeded("the file's time limit was reached")

    def ev(self, node: cst.BaseExpression) -> Value:
        self.step()
        value = self._evaluate(node)
        self._values[id(node)] = value
        for origin in value:
            if origin.node is node:  # born here: remember its statement (noqa comments are read there)
                self.statement_of.setdefault(id(node), self.statement)
                self.uses.birth_loops.setdefault(id(node), self.loops)
        return value

    def _evaluate(self, node: cst.BaseExpression) -> Value:
        if type(node) is cst.Name:
            if node.value == "True":
                return TRUE
            if node.value == "False":
                return FALSE  # (Python data; told apart for `pin_memory=pin` where `pin = False`)
            if node.value == "None":
                return PYDATA
            value = self.env.get(node.value)
            if value is None and self.names.is_dtype_attribute(node):
                return DTYPE  # `from torch import float16`
            if (
                value is None
                and self.summaries is not None
                and (node.value in self.file_names.module_level_bindings or node.value in self.file_names.from_imports)
                and self.summaries.host_device_constant(node.value)
            ):
                # `CPU = torch.device("cpu")` at module level, never rebound (here, or in the
                # project module this file imports it from)
                return HOST_DEVICE
            # Unbound here: a global, builtin or closure.
            return UNKNOWN if value is None else value
        if type(node) is cst.Attribute:
            key = dotted(node)
            known = self.env.get(key) if key is not None else None
            if known is not None:
                return known
            if self.names.is_dtype_attribute(node):
                return DTYPE  # `torch.float16`
            base = self.ev(node.value)
            if node.attr.value == "__dict__" and dotted(node.value) is not None:
                self.alias(dotted(node.value))  # `b.__dict__.update(...)`: its attributes, by another name
            if base == FIELD_ITEM and node.attr.value == "name":
                return FIELD_NAME  # `f.name` in `for f in fields(self):`
            if (
                self.summaries is not None
                and type(node.value) is cst.Name
                and node.value.value == "self"
                and self.summaries.is_method(self, node.attr.value)
            ):
                # `h = self.repin`: a bound method, called later through another name. What
                # it may assign is unknown from here on.
                self._receiver_called(node.value, node.attr.value)
                return UNKNOWN
            if (
                node.attr.value == "device"
                and base
                and all(o.whole_parameter for o in base)
                and not (type(node.value) is cst.Name and node.value.value == "self")
            ):
                # `grid.device` of a parameter: where the caller's argument is. (`self.device` is
                # an attribute of the object's own, which its class's methods assign.)
                return device_of(base)
            if node.attr.value == "device" and base and {o.kind for o in base} <= HOST_KINDS:
                return HOST_DEVICE  # `t.device` of a host tensor
            if node.attr.value in torch_api.PYTHON_NUMBER_ATTRIBUTES:
                return PYDATA  # `x.shape`: a tuple of Python ints on tensors and arrays alike
            if node.attr.value in torch_api.VIEW_ATTRIBUTES and is_tensor(base):
                # `t.T[0] = v`, `t.data.fill_(v)`: a view of its memory, which may be written.
                self.host_escape(base, node, f"a view of it (`.{node.attr.value}`), which may be written")
                if node.attr.value == "data" and (key is None or key not in self.env):
                    return base  # `t.data`: the same memory, shape and strides (pinned or not)
            if self.summaries is not None and key is not None and key.startswith("self.") and key.count(".") == 1:
                summary = self.summaries.attribute(self, key)
                if summary is not None and all(
                    o.kind is Kind.UNKNOWN and not o.class_name and not o.handle for o in summary
                ):
                    # Nothing known (`self.ids = ids` in `__init__`): a caller's object may know.
                    return summary | self_attribute(node.attr.value)
                if summary is not None:
                    return summary  # what the class's methods assign to it
            if self.summaries is not None:
                field = objects.attribute(self.summaries, base, node.attr.value)
                if field is not None and (not objects.is_object(base) or self.fields_trusted(node.value)):
                    return field  # an attribute of an object of a project class
                if key is not None and key.startswith("self.") and key.count(".") == 1:
                    # Unknown here, but a caller's object may know it (a dataclass field).
                    return self_attribute(node.attr.value)
            field = self.parameter_field(key) if key is not None else None
            if field is not None:
                return field
            return UNKNOWN  # an attribute set outside this function: unknown provenance
        if type(node) is cst.Call:
            value = self._call(node)
            if self.events.wants_d2h:
                d2h.after_call(self, node)  # PIN004: host reads of pending copies, synchronisations
            return value
        if type(node) in (cst.Integer, cst.Float, cst.Imaginary):
            return PYDATA
        if type(node) in (cst.List, cst.Tuple, cst.Set):
            transparent = id(node) in self._transparent
            for element in node.elements:
                value = self.ev(element.value)
                if not transparent:
                    self.host_escape(value, element.value, "put in a container")
                    self._contained(element.value)
                    held = dotted(element.value)
                    if held is not None and type(element.value) in (cst.Name, cst.Attribute):
                        self.alias(held)  # `[tap]`: `objs[0].valid = t` writes tap's
            return PYDATA
        if type(node) in (cst.ListComp, cst.SetComp):
            self._visit_children(node)
            return PYDATA
        if type(node) is cst.Subscript:
            return self._subscript(node)
        if type(node) is cst.BinaryOperation:
            left = self.ev(node.left)
            right = self.ev(node.right)
            if is_pydata(left) and is_pydata(right):
                return PYDATA  # e.g. `[0] + lens`, `n * 2`
            if type(node.operator) is cst.Multiply and repeats_a_list(node, left, right):
                return PYDATA  # `[0] * n`: a list repeated (n is a count)
            d2h.computed(self, node)  # PIN004: arithmetic on a pending host destination reads it
            return combine([left, right], node, "an arithmetic result")
        if type(node) is cst.Comparison:
            values = [self.ev(node.left)] + [self.ev(c.comparator) for c in node.comparisons]
            if all(is_pydata(v) for v in values):
                return PYDATA
            d2h.computed(self, node)
            return combine(values, node, "a comparison result")
        if type(node) is cst.UnaryOperation:
            operand = self.ev(node.expression)
            if is_pydata(operand):
                return PYDATA
            if type(node.operator) is not cst.Not:
                d2h.computed(self, node)  # `not x` is a truth test (read as one where it is tested)
            return derived(operand, node, "an arithmetic result")
        if type(node) is cst.IfExp:
            previous, self.truth_test = self.truth_test, node.test
            self.ev(node.test)
            self.truth_test = previous
            d2h.read(self, node.test, "a truth test")
            # `t if t.is_pinned() else t.pin_memory()`: as for an `if` statement.
            self.forget_tested(node.test)
            truth = self.test_truth(node.test)
            if truth is not None:
                self.rule_out(node.orelse if truth else node.body)
                return self.ev(node.body if truth else node.orelse)  # `x if 1 else y`: one side runs
            body, orelse = self.ev(node.body), self.ev(node.orelse)
            flag = self.flag_of(node.test) or self.device_type_of(node.test)
            if flag is not None:
                name, body_when_true = flag
                self.guard_by_flag(name, body if body_when_true else orelse, orelse if body_when_true else body)
            return body | orelse
        if type(node) is cst.NamedExpr:
            value = self.ev(node.value)
            key = dotted(node.target)
            if key:
                self.env.forget_under(key)  # what was known of the old value's items is not the new's
                self.env.set(key, value)  # the walrus binds in the enclosing scope
            return value
        if type(node) is cst.Lambda:
            self.captured(node.body, node, "a lambda")
            self._lambdas.append(node)  # it may change the containers it names when called
            return UNKNOWN  # its body runs later, with arguments we do not know
        self._visit_children(node)
        return UNKNOWN  # any other expression (await, dict, f-string...): not a host tensor we know

    def uncalled_is_pinned(self, test: cst.BaseExpression) -> None:
        """PIN006: ``t.is_pinned`` without the call, read as a truth value (``test``): a bound
        method, always true."""
        if not self.events.wants_uncalled:
            return
        called = {dotted(c.func.value) for c in _calls_in(test) if type(c.func) is cst.Attribute}
        for attribute in uncalled_methods(test, torch_api.PIN_TEST_METHOD):
            if dotted(attribute.value) in called:
                continue  # `t.is_pinned and t.is_pinned()`: a guard, and the call asks
            if is_tensor(self.value_of(attribute.value)):
                self.events.add(UncalledIsPinned(attribute, self.statement), ("uncalled", id(attribute)))

    def known_false(self, node: cst.BaseExpression) -> bool:
        """``node`` (evaluated) is ``False`` on every path: a local bound to it, or a module
        constant bound once to it (``PIN = False``), or the literal itself."""
        if is_false(node) or self.value_of(node) == FALSE:
            return True
        return (
            type(node) is cst.Name
            and node.value not in self.env
            and self.summaries is not None
            and self.summaries.module_constant_truth(node.value) is False
        )

    def test_truth(self, test: cst.BaseExpression) -> bool | None:
        """The truth of a constant test: a literal (``constant_truth``), or a module constant
        bound once to a literal (``if USE_STAGE:``, ``if not DEBUG:``); None otherwise."""
        truth = constant_truth(test)
        if truth is not None or self.summaries is None:
            return truth
        negated = False
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test = test.expression
            negated = not negated
        if type(test) is cst.Name and test.value in self.env:
            # A local bound to the literal `True` on every path (`pin = True`; `if pin:`); not a
            # parameter, whose default a caller may override.
            is_parameter = type(self.scope) is cst.FunctionDef and named_parameter(self.scope, test.value) is not None
            local_true = not is_parameter and is_true(self.env.get(test.value) or frozenset())
            return (not negated) if local_true else None
        if type(test) is not cst.Name:
            return None
        truth = self.summaries.module_constant_truth(test.value)
        if truth is None:
            return None
        self.constant_tested = test.value
        return truth != negated

    def rule_out(self, skipped: cst.CSTNode | None) -> None:
        """``skipped`` does not run, as the module constant just tested says: the tensors it
        names keep a fix unsafe (a patched constant would run it, and it may write them)."""
        constant, self.constant_tested = self.constant_tested, None
        if constant is None or skipped is None:
            return
        for name in mentioned(skipped):
            for key in (name, *self.env.keys_under(name)):
                for origin in self.env.get(key) or ():
                    if origin.node is not None:
                        self.assumed.setdefault(origin, constant)

    def _visit_children(self, node: cst.CSTNode) -> None:
        """Evaluate the expressions inside ``node`` (for the copies they may hold)."""
        # Common shapes first: libcst's generic `children` is slow on big functions.
        if type(node) in (cst.List, cst.Tuple, cst.Set):
            for element in node.elements:
                self.ev(element.value)
        elif type(node) is cst.Dict:
            for element in node.elements:
                if type(element) is cst.DictElement:
                    self.ev(element.key)
                self.host_escape(self.ev(element.value), element.value, "put in a container")
                if type(element) is cst.DictElement:
                    self._contained(element.value)
        elif type(node) in (cst.ListComp, cst.SetComp, cst.GeneratorExp):
            self._comprehension(
                node.for_in, lambda: self.host_escape(self.ev(node.elt), node.elt, "put in a container")
            )
            self._walrus_escaped(node)
        elif type(node) is cst.DictComp:
            self._comprehension(node.for_in, lambda: (self.ev(node.key), self.ev(node.value)))
            self._walrus_escaped(node)
        elif type(node) is cst.BooleanOperation:
            self.ev(node.left)
            self.ev(node.right)
        elif type(node) in (cst.Await, cst.StarredElement):
            inner = node.expression if type(node) is cst.Await else node.value
            self.host_escape(self.ev(inner), inner, "passed on")
        elif type(node) is cst.Yield:
            if isinstance(node.value, cst.BaseExpression):
                yielded = self.ev(node.value)
                self.yields.append(yielded)
                self.host_escape(yielded, node, "yielded")
            elif node.value is not None:
                self.yields_unknown = True  # `yield from it`: what `it` gives is not followed
                self.host_escape(self.ev(node.value.item), node, "yielded")
        elif type(node) in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Ellipsis):
            return  # strings hold no copies worth following
        elif type(node) is cst.Expr:
            self.ev(node.value)
        elif type(node) is cst.Return:
            if node.value is not None:
                value = self.ev(node.value)
                self.returns.append(value)
                self.tuple_returns.append(_displayed(self, node.value))
                self.container_returns.append(self.container_of(node.value))
                self.host_escape(value, node, "returned")
            else:
                self.returns.append(PYDATA)
                self.tuple_returns.append(None)
                self.container_returns.append(None)
        else:
            for child in children(node):
                if type(child) in EXPRESSION_TYPES:
                    self.ev(child)
                else:
                    self._visit_children(child)

    def _comprehension(self, for_in: cst.CompFor, element: Callable[[], object]) -> None:
        """A comprehension's ``for`` clauses, then its element (``element()``), in the
        comprehension's own scope: its targets are new names, whatever the function bound to
        them (``[t.to(dev) for t in xs]`` copies the elements of ``xs``, not a local ``t``)."""
        for walked in self.walked(for_in.iter, for_in.target):
            self.ev(walked)
        mark = self.env.mark()
        try:
            for target in flatten_targets(for_in.target):
                key = dotted(target.value if type(target) is cst.StarredElement else target)
                if key is not None:
                    self.env.forget_under(key)
                    self.env.set(key, UNKNOWN)  # an element of the iterable: unknown
            for target, value in self.iterated(for_in.iter, for_in.target, tests=for_in):
                self.env.set(target.value, value)  # an element of a list this function built
            for condition in for_in.ifs:
                self.ev(condition.test)
                # `[t for t in ts if t.is_pinned()]`: as for an `if` statement, a test of where
                # an element lives or whether it is pinned decides at run time which pass.
                self.forget_tested(condition.test)
            if for_in.inner_for_in is not None:
                self._comprehension(for_in.inner_for_in, element)
            else:
                element()
        finally:
            self.env.undo(mark)
            self.env.close(mark)

    def iterated(
        self,
        iterable: cst.BaseExpression,
        target: cst.BaseExpression,
        loop: cst.For | None = None,
        tests: cst.CSTNode | None = None,
    ) -> list[tuple[cst.Name, Value]]:
        """What a ``for`` target takes from a list of host tensors this function built (a
        display, a comprehension, ``.append``): its elements, joined (``for t in bufs:``, ``for
        i, t in enumerate(bufs):``). Nothing when the list may hold other elements now (an item
        assigned or deleted, ``pop``/``remove``/``clear``, or handed to other code)."""
        items = self.iterable(iterable)
        enumerated = items is not iterable
        zipped_loaders = self._zipped_loaders(iterable, target)
        if zipped_loaders:
            return zipped_loaders
        walked, counted = self._enumerated(iterable)
        loader = self.value_of(walked)
        walked_field = self._unknown_self_attribute(walked, loader)
        if self.walked_loader(loader) or walked_field is not None:
            # `for x, y in loader:` of a data loader that pins nothing: each batch, and every
            # tensor in it, is new pageable host memory (see `torch_api.HOST_BATCH_LOADERS`).
            # Of `self.loader` unknown here (stored from a parameter): marked parts, for a
            # caller whose object holds such a loader there (`FileSummaries.forward_fields`).
            parts = batches(loader) if walked_field is None else walked_attribute(walked_field)
            if counted:
                batch = target.elements[1].value if _pair(target) else None  # type: ignore[attr-defined]
                return _batch_names(batch, parts)
            return _batch_names(target, parts)
        zipped = self._zipped(items, target) if not enumerated else None
        if zipped is not None and any(self._known_empty(part) for part, _ in zipped):
            return []  # zip with a list known to be empty: the body never runs
        if zipped is not None:
            # `for dst, y in zip(dsts, ys):` each name walks its own list, as a loop over it would.
            # zip stops at the shortest list, so an item may never be walked: only a list in its
            # own order whose host tensors have one birth (a comprehension's, an `.append`
            # loop's), none pinned or on a device, says what is copied.
            return [
                (name, value)
                for part, target in zipped
                if dotted(part) not in self.lists_reordered
                for name, value in self.iterated(part, target)
                if all(o.kind in (Kind.PAGEABLE, Kind.UNKNOWN) for o in value)
                and len({o.node for o in value if o.kind is Kind.PAGEABLE}) == 1
            ]
        suffix = ".[]"
        paired = False  # `for k, v in d.items():` gives the values to the second name
        if (
            type(items) is cst.Call
            and type(items.func) is cst.Attribute
            and items.func.attr.value in ("values", "items")
            and not items.args
            and not enumerated
        ):
            # `for t in d.values():`, `for k, t in d.items():` of a dict it built
            paired = items.func.attr.value == "items"
            items, suffix = items.func.value, ".{}"
        # `for k, v in d.items(): if k == "ids": continue`: a test of the key (in the loop's body,
        # or a comprehension's `if`) may skip items.
        decided_in = tests if tests is not None else (loop.body if loop is not None else None)
        key_tested = (
            paired
            and decided_in is not None
            and type(target) is cst.Tuple
            and len(target.elements) == 2
            and type(target.elements[0].value) is cst.Name
            and key_decides(decided_in, target.elements[0].value.value)
        )
        names = (
            [e.value for e in target.elements if type(e) is cst.Element and type(e.value) is cst.Name]
            if type(target) is cst.Tuple and not enumerated and not paired
            else None
        )
        if names is not None and len(names) != len(target.elements):  # type: ignore[union-attr]
            return []  # `for a, *rest in ...`, nested targets: not followed
        if type(items) in (cst.List, cst.Tuple) and not paired:
            # `for t in (a, b):`, a display walked where it is written: its elements.
            if not all(type(e) is cst.Element for e in items.elements):
                return []  # `*rest`: elements not known
            if names is not None:
                # `for t, n in [(a, 1), (b, 2)]:` each name takes its position's items.
                rows = [self.tuple_parts(e.value) for e in items.elements]
                if not rows or any(r is None or len(r) != len(names) for r in rows):
                    return []
                return _positional(names, [frozenset().union(*(r[i] for r in rows)) for i in range(len(names))])  # type: ignore[index]
            elements = frozenset().union(*(self.value_of(e.value) for e in items.elements))
        elif (
            type(items) is cst.Call
            and self.summaries is not None
            and names is None
            and not paired
            and suffix == ".[]"
            and (yielded := self.summaries.call_yields(self, items)) is not None
        ):
            # `for t in batches(xs):` of a generator of the project: what its `yield`s give.
            elements = yielded
        elif type(items) is cst.Call and self.summaries is not None and not paired and suffix == ".[]":
            # `for ids, meta in helper():` of a list or tuple the helper builds and returns.
            held = self.summaries.call_containers(self, items) or {}
            if names is not None:
                parts = [held.get(".[]%d" % i) for i in range(len(names))]
                if any(part is None for part in parts) or ".[]%d" % len(names) in held:
                    return []
                return _positional(names, parts)  # type: ignore[arg-type]
            elements = held.get(".[]") or frozenset()
        elif type(items) is cst.Call and suffix == ".{}":
            # `for w in load_file(path).values():` the dict a loader has just read, which no
            # other code holds: every tensor in it is in pageable host memory.
            made = self.value_of(items)
            elements = made if made and all(o.kind is Kind.PAGEABLE and o.loaded for o in made) else frozenset()
        else:
            key = dotted(items)
            if key is None:
                return []  # not a list we follow
            root = key.split(".", 1)[0]
            if any(root in mentioned(function) for function in self.local_functions.values()):
                return []  # a nested function may change it when it runs
            if names is not None:
                # `for ids, meta in buckets:` of a list of tuples it built, position by position.
                held = self.positions(key) if key not in self.lists_changed else None
                if held is None and self._parts_of_parameter_items(key):
                    return [(name, _item_parts(key)) for name in names]
                if held is None or len(held) != len(names) or key + ".[]%d" % len(names) in self.env:
                    return []
                return _positional(names, held)
            elements = self.known_elements(key, suffix) or frozenset()
            if not elements and "." not in key:
                loaded_value = self.env.get(key)
                if loaded_items(loaded_value, suffix == ".{}") and self.only_reads(key):
                    # `for k, v in state.items():` of what `torch.load(f, map_location="cpu")`
                    # read, `for t in batch:` of a data loader's batch: pageable host tensors.
                    elements = loaded_value  # type: ignore[assignment]
            if (
                not elements
                and self._own_parameter(key)
                and (self.only_reads(key) or (loop is not None and paired and rekeyed_in_walk(self.scope, key, loop)))
            ):
                # `for t in bufs:` of a parameter: each item is what the caller's list (dict)
                # holds, named so that a caller can say (see `FileSummaries.forward_arguments`).
                # Under a test of the key, which of the caller's items it copies depends on
                # their keys: named so that only a caller whose items are of one birth says.
                items_of = KEY_TESTED_ITEMS if key_tested else suffix[1:]
                item = Origin(Kind.UNKNOWN, what=f"an item of parameter `{key}`", parameter=key + items_of)
                elements = frozenset({item})
                if enumerated or paired:
                    if (
                        type(target) is cst.Tuple
                        and len(target.elements) == 2
                        and all(type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements)
                    ):
                        return [(target.elements[1].value, elements)]  # type: ignore[list-item]
                    second = target.elements[1].value if enumerated and _pair(target) else None  # type: ignore[attr-defined]
                    parts = _names_of(second)
                    if parts and suffix == ".[]":
                        # `for i, (x, y) in enumerate(loader):` each name a part of an item.
                        return [(name, _item_parts(key)) for name in parts]
                    return []
                return [(target, elements)] if type(target) is cst.Name else []
        if not elements or not (any(o.kind in HOST_KINDS for o in elements) or _objects_holding_host(elements)):
            return []  # no host tensor we know in it (nor an object holding one): its items stay unknown
        if key_tested and len(elements) > 1:
            return []  # a test of the key may skip the items of one birth: which ones are copied is not known
        if _mixed(elements) and not _every_item_walked(loop, tests):
            # Pageable and pinned (or device) items: a body that tests or leaves (`if v.dtype ==
            # torch.long: continue`, `break`) may copy only the pinned ones.
            return []
        if enumerated or paired:
            if (
                type(target) is cst.Tuple
                and len(target.elements) == 2
                and all(type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements)
            ):
                return [(target.elements[1].value, elements)]  # type: ignore[list-item]
            return []
        return [(target, elements)] if type(target) is cst.Name else []

    def _zipped(
        self, items: cst.BaseExpression, target: cst.BaseExpression
    ) -> list[tuple[cst.BaseExpression, cst.Name]] | None:
        """``zip(a, b)`` of the builtin walked by a tuple of as many plain names: each list with
        its name. (``strict=`` changes no item; ``*lists`` and other targets are not followed.)"""
        if not (
            type(items) is cst.Call
            and type(items.func) is cst.Name
            and items.func.value == "zip"
            and "zip" not in self.env
            and "zip" not in self.file_names.module_level_bindings
            and type(target) is cst.Tuple
        ):
            return None
        lists = [a.value for a in items.args if a.keyword is None]
        if any(a.star for a in items.args) or any(
            a.keyword is not None and a.keyword.value != "strict" for a in items.args
        ):
            return None
        names = [e.value for e in target.elements if type(e) is cst.Element and type(e.value) is cst.Name]
        if len(names) != len(target.elements) or len(names) != len(lists):
            return None
        return list(zip(lists, names))  # type: ignore[arg-type]

    def only_reads(self, name: str) -> bool:
        """This scope only reads the dict ``name`` holds (asked again at each walk of a loop)."""
        return self._reads_only(name, fields=False)

    def _reads_only(self, name: str, *, fields: bool) -> bool:
        if (name, fields) not in self._only_read:
            self._only_read[(name, fields)] = only_read(self.scope, name, fields=fields)
        return self._only_read[(name, fields)]

    def _parts_of_parameter_items(self, key: str) -> bool:
        """``for x, y in loader:`` of a parameter this function only reads: each name is a part
        of an item, which a caller passing a data loader says (``FileSummaries.forward_arguments``;
        for a list of tuples the parts are not followed)."""
        return "." not in key and self._own_parameter(key) and self.only_reads(key)

    def parameter_items(self, node: cst.BaseExpression, call: cst.Call) -> Value | None:
        """For a list parameter this function only reads, but for handing it to ``call`` (a
        torch function: ``torch.cat(ws)`` of ``def f(ws)``): its items, named so that a call's
        summary gives the caller's (``FileSummaries``)."""
        key = dotted(node)
        if type(node) is not cst.Name or key is None or not self._own_parameter(key):
            return None
        if not only_read(self.scope, key, handed=call):
            return None  # it may hold other items by then (`ws.append(t)`, `ws[0] = ...`)
        return frozenset({Origin(Kind.UNKNOWN, what=f"an item of parameter `{key}`", parameter=key + "[]")})

    def parameter_field(self, key: str) -> Value | None:
        """``batch.ids`` of a parameter ``batch`` that this function only reads fields of (no
        method of it called, no field written, not handed to other code): unknown here, named
        so that a caller whose argument's field is known can say (``forward_arguments``)."""
        holder, _, attr = key.partition(".")
        if not attr or "." in attr or holder in ("self", "cls") or key in self.env:
            return None
        if not self._own_parameter(holder):
            return None  # not the parameter (rebound, or an item of one)
        if holder in self._place_tested:
            return None  # `batch.is_cuda` may be the property of an object of the caller's class
        if not self._reads_only(holder, fields=True):
            return None  # a method call, a write or a hand-over may have replaced the field
        return frozenset({Origin(Kind.UNKNOWN, what=f"`{key}` of a parameter", parameter=key)})

    def _own_parameter(self, key: str) -> bool:
        """``key`` is a parameter of this function that still holds what the caller passed."""
        if "." in key or key in self.lists_changed:
            return False
        bound = self.env.get(key)
        return bound is not None and len(bound) == 1 and next(iter(bound)).parameter == key

    def iterable(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """What a ``for`` walks: ``xs`` for ``enumerate(xs)`` (the builtin, one argument: it only
        reads ``xs`` for the loop), else ``node`` itself."""
        walked = self._enumerate_of(node, 1)
        return walked if walked is not None else node

    def _enumerated(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
        """``(xs, True)`` for ``enumerate(xs)`` or ``enumerate(xs, start)`` of the builtin, else
        ``(node, False)``."""
        walked = self._enumerate_of(node, 2)
        return (walked, True) if walked is not None else (node, False)

    def _zipped_loaders(self, node: cst.BaseExpression, target: cst.BaseExpression) -> list[tuple[cst.Name, Value]]:
        """``for (xs, _), (xt, _) in zip(source, target):`` of the builtin ``zip`` over data
        loaders (and other iterables), walked by a tuple of as many targets: each loader's part
        of the target takes its batches (the other parts stay unknown)."""
        if (
            type(node) is not cst.Call
            or type(node.func) is not cst.Name
            or node.func.value != "zip"
            or "zip" in self.env
            or "zip" in self.file_names.module_level_bindings
            or any(a.star or a.keyword is not None for a in node.args)
            or type(target) is not cst.Tuple
            or len(target.elements) != len(node.args)
            or not all(type(e) is cst.Element for e in target.elements)
        ):
            return []
        bound: list[tuple[cst.Name, Value]] = []
        for arg, element in zip(node.args, target.elements):
            walked = self.value_of(arg.value)
            if self.walked_loader(walked):
                bound.extend(_batch_names(element.value, batches(walked)))
        return bound

    def _enumerate_of(self, node: cst.BaseExpression, most: int) -> cst.BaseExpression | None:
        """``xs`` of a call of the builtin ``enumerate`` with at most ``most`` arguments, ``xs``
        first and none starred; else None."""
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Name
            and node.func.value == "enumerate"
            and "enumerate" not in self.env
            and "enumerate" not in self.file_names.module_level_bindings
            and 0 < len(node.args) <= most
            and node.args[0].keyword is None
            and not any(a.star for a in node.args)
        ):
            return node.args[0].value
        return None

    def walked(self, node: cst.BaseExpression, target: cst.BaseExpression) -> list[cst.BaseExpression]:
        """What a ``for`` reads: the list of ``enumerate(xs)``, each list of ``zip(xs, ys)`` walked
        by as many names (the builtins only read them, so no list escapes), else ``node``."""
        items = self.iterable(node)
        zipped = self._zipped(items, target) if items is node else None
        return [part for part, _ in zipped] if zipped is not None else [items]

    def _walrus_escaped(self, comprehension: cst.CSTNode) -> None:
        """A walrus in a comprehension binds in this function (``[(t := t.pin_memory()) for
        ...]``), once per item or never: what the names hold after it is not known."""
        stack: list[cst.CSTNode] = [comprehension]
        while stack:
            node = stack.pop()
            if type(node) is cst.NamedExpr:
                key = dotted(node.target)  # type: ignore[attr-defined]
                if key:
                    self.env.forget_under(key)
                    self.env.set(key, UNKNOWN)
                    self.lists_changed.add(key)
            stack.extend(children(node))

    def _known_empty(self, node: cst.BaseExpression) -> bool:
        """A list this function built and left empty (``names = []``), or an empty display."""
        if never_iterates(node):
            return True
        key = dotted(node)
        return key is not None and key not in self.lists_changed and self.env.get(key + ".[]") == frozenset()

    def _contained(self, node: cst.BaseExpression) -> None:
        """A list or dict of this function put in another container (``holders = [d]``), handed
        to other code, or one of its bound methods taken (``up = d.update``): it may be written
        through those (``holders[0]["a"] = t``, ``up(a=t)``), unseen."""
        if type(node) is cst.Attribute:
            node = node.value  # `d.update` without the call: d's method, to be called later
        key = dotted(node)
        if key is not None and (key + ".[]" in self.env or key + ".{}" in self.env):
            self.list_changed(node)

    def list_changed(self, node: cst.BaseExpression) -> None:
        """``node`` (a list) may now hold other elements than those recorded: not iterated as known."""
        key = dotted(node)
        if key is not None:
            self.lists_changed.add(key)

    def _subscript(self, node: cst.Subscript) -> Value:
        base = self.ev(node.value)
        basic = True
        for element in node.slice:
            self._visit_children(element)
            inner = element.slice
            if type(inner) is cst.Index:
                index_value = self.value_of(inner.value)
                if is_tensor(index_value) or type(inner.value) in (
                    cst.List,
                    cst.Tuple,
                    cst.Comparison,
                    cst.BooleanOperation,
                    cst.Call,
                ):
                    basic = False  # advanced (mask or index-list) indexing copies into a new tensor
        if type(node.value) is cst.Attribute and node.value.attr.value in torch_api.PYTHON_NUMBER_ATTRIBUTES:
            return base  # `x.shape[0]`, `x.shape[1:]`: Python ints
        if handle_kind(base) == "slice":
            # `f.get_slice(name)[0:4]` reads that part of the tensor from the file, into pageable memory.
            return loaded(node, f"`{next(iter(base)).what}[...]`")
        item = self._item(node, base)
        if item is not None:
            return item
        if is_pydata(base):
            return UNKNOWN  # an element of Python data may be anything (even an ndarray)
        if basic:
            return base  # a view shares the base's storage: same origin, same pinnedness
        return derived(base, node, "an indexing result")

    def _item(self, node: cst.Subscript, base: Value) -> Value | None:
        """``bufs[i]`` / ``d[k]`` of a list (dict) of tensors whose elements are known, when they
        all agree: an index picks one element, which one is not known here. (Mixed elements,
        pageable and pinned, could be the pinned one every time: unknown.)"""
        if is_tensor(base) or len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return None  # a tensor's own indexing, a slice (a list again) or several indices
        if node.slice[0].slice.star is not None:
            return None
        name = literal_key(node.slice[0].slice.value)
        if type(node.value) is cst.Call and self.summaries is not None:
            position = _literal_index(node.slice[0].slice.value)
            parts = self.summaries.call_elements(self, node.value, None) if position is not None else None
            if parts is not None and position is not None and position < len(parts):
                return parts[position]  # `helper()[1]` of a helper returning `(t, u)`: exactly u
            # `helper()["mask"]`, `helper()[i]` of a container the helper builds and returns.
            held = self.summaries.call_containers(self, node.value) or {}
            if name is not None and ".{%s}" % name in held:
                return held[".{%s}" % name]
            found = held.get(".[]") or held.get(".{}")
            return found if found and _agree(found) else None
        key = dotted(node.value)
        if key is None:
            return None
        position = _literal_index(node.slice[0].slice.value)
        if position is not None and key not in self.lists_changed:
            held = self._tuple_items(key)
            if held is None:
                held = self._returned_tuple(key)
            if held is not None and position < len(held):
                return held[position]  # `pair[0]` of `pair = (t, 1)` (or of a helper's): exactly t
        if (
            name is not None
            and key not in self.lists_changed
            and key + ".{%s}" % name in self.env
            and not (
                (self.local_functions or self._lambdas) and key.split(".", 1)[0] in self._named_by_local_functions()
            )
        ):
            return self.env.get(key + ".{%s}" % name)  # `d["mask"]` of a dict display: that value
        for suffix in (".[]", ".{}"):
            elements = self.known_elements(key, suffix)
            if not elements:
                continue
            return elements if _agree(elements) else None
        return None

    def _returned_tuple(self, key: str) -> list[Value] | None:
        """The items of the tuple display every return of the helper gives, for ``pair =
        helper()`` still bound as it was (a tuple never changes), else None."""
        bound = self.bound_calls.get(key)
        if bound is None or self.summaries is None or self.env.get(key) is not bound[1]:
            return None  # not bound to a call, or bound again since (a join of paths too)
        return self.summaries.call_elements(self, bound[0], None)

    def _tuple_items(self, key: str) -> list[Value] | None:
        """The items of the tuple display bound to ``key`` in this function, else None. (Not
        when a nested function or lambda names it: it may bind it again when it runs.)"""
        found: list[Value] = []
        while key + TUPLE_ITEM % len(found) in self.env:
            found.append(self.env.get(key + TUPLE_ITEM % len(found)) or UNKNOWN)
        if not found:
            return None
        if (self.local_functions or self._lambdas) and key.split(".", 1)[0] in self._named_by_local_functions():
            return None
        return found

    # ------------------------------------------------------------------ calls
    def _library_source(self, func: cst.BaseExpression) -> str | None:
        """A known host-returning library function that ``func`` names (``load_file``,
        ``safetensors.torch.load_file``, ``st.load_file``), through this function's imports or
        the file's."""
        chain = dotted(func)
        if chain is None:
            return None
        root = chain.partition(".")[0]
        return self.names.library_source(func, self.env.get(root) if root in self.env else None)

    def _call(self, call: cst.Call) -> Value:
        func = call.func
        torch_name = self.names.torch_function(func)
        chain = dotted(func)
        root, _, rest = (chain or "").partition(".")
        if root in self.names.torch_modules and rest in torch_api.MEMORY_SWAPPING_FUNCTIONS:
            # `torch.utils.swap_tensors(a, b)`: each now holds the other's memory.
            for arg in call.args:
                self.ev(arg.value)
                swapped = dotted(arg.value)
                if swapped is not None and swapped in self.env:
                    self.replace_memory(swapped, UNKNOWN)
                if type(arg.value) is cst.Subscript:
                    self.list_changed(arg.value.value)  # `swap_tensors(ys[0], t)`: an item changed
            return UNKNOWN
        if torch_name is not None:
            # Torch functions read their tensor arguments (lists of tensors included); `out=`
            # is written.
            self._transparent.update(id(a.value) for a in call.args if type(a.value) in (cst.List, cst.Tuple))
            arg_values = [self.ev(arg.value) for arg in call.args]
            for arg, value in zip(call.args, arg_values):
                if arg.keyword is not None and arg.keyword.value == "out":
                    self.host_write(value, call, f"`out=` of `torch.{torch_name}()`")
            if torch_name.endswith("_") and not torch_name.endswith("__") and arg_values:
                # `torch.fill_(t, v)`, `torch.nn.init.ones_(t)`: in place, on the first argument.
                self.host_write(arg_values[0], call, f"`torch.{torch_name}()`")
            return torch_semantics.torch_call(self, torch_name, call, arg_values)
        if objects.is_dataclasses_fields(self, func):
            for arg in call.args:
                self.ev(arg.value)  # it reads the object's class, and changes nothing
            return UNKNOWN  # field descriptors, no tensor
        functional = self.names.functional(func)
        if functional in torch_api.FUNCTIONAL_DATA_FIRST and call.args:
            values = [self.ev(arg.value) for arg in call.args]
            return derived(values[0], call, f"F.{functional}(...)") if is_tensor(values[0]) else UNKNOWN
        taught = dotted(func)
        pinned_functions = self.file_names.pinned_functions
        host_functions = self.file_names.host_functions
        if taught is not None and (taught in pinned_functions or taught in host_functions):
            self._escaping_args(call, f"`{taught}()`")
            if taught in pinned_functions:
                return PINNED  # the project says this returns pinned host memory
            return pageable(call, pinnable=False, what=f"{taught}(...)")
        if self.names.is_numpy_call(func):
            # numpy may return a view of the tensor's memory, written later through it.
            self._escaping_args(call, "numpy")
            return NUMPY
        library = self._library_source(func)
        if library is not None and library in torch_api.DEVICE_KEEPING_LIBRARY_FUNCTIONS:
            values = [self.ev(arg.value) for arg in call.args]  # read, never changed
            first = values[0] if call.args and call.args[0].keyword is None and not call.args[0].star else UNKNOWN
            if first and all(o.kind is Kind.PAGEABLE for o in first):
                return derived(first, call, f"`{library}(...)`")  # a view or a copy: pageable either way
            return UNKNOWN  # of pinned memory a copy is pageable, a view is not: not known
        if library is not None and library in torch_api.HOST_FILE_HANDLES:
            self._escaping_args(call, f"`{dotted(func)}()`")
            if not _opens_on_host(library, call):
                return UNKNOWN  # opened on a device, for numpy, or as chosen at run time
            return host_handle(call, "file", f"{library}(...)")
        if library is not None and library in torch_api.PASS_THROUGH_ITERATORS:
            self._escaping_args(call, f"`{dotted(func)}()`", changes_loaders=False)
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args) or not positional:
                return UNKNOWN
            wrapped = positional if torch_api.PASS_THROUGH_ITERATORS[library] == "all" else positional[:1]
            walked = frozenset().union(*(self.value_of(a.value) for a in wrapped))
            return walked if handle_kind(walked) == "loader" else UNKNOWN  # `tqdm(loader)`: its batches
        if library is not None and library in torch_api.DEFAULT_COLLATE_FUNCTIONS:
            self._escaping_args(call, f"`{dotted(func)}()`")
            return UNKNOWN  # stacked where the samples are
        if library is not None and library in torch_api.TENSOR_DATASETS:
            self._escaping_args(call, f"`{dotted(func)}()`")
            if all({o.kind for o in self.value_of(a.value)} <= HOST_KINDS for a in call.args):
                return UNKNOWN  # of host tensors: its batches are stacked on the host
            # Of tensors that may be on a device: so are the batches a loader stacks of them.
            return host_handle(call, "device-dataset", f"`{dotted(func)}(...)`")
        if library is not None and library in torch_api.HOST_BATCH_LOADERS:
            self._escaping_args(call, f"`{dotted(func)}()`")
            return self._data_loader(call, library)
        if library is not None:
            self._escaping_args(call, f"`{dotted(func)}()`")
            if not _loads_on_host(library, call):
                return UNKNOWN  # loaded onto a device, or one chosen at run time
            return loaded(call, f"`{library}(...)`")
        if type(func) is cst.Attribute:
            receiver = self.ev(func.value)
            method = func.attr.value
            if handle_kind(receiver) == "file" and (
                method in torch_api.HANDLE_TENSOR_METHODS or method in torch_api.HANDLE_SLICE_METHODS
            ):
                for arg in call.args:
                    self.ev(arg.value)  # the tensor's name
                what = next(iter(receiver)).what
                if method in torch_api.HANDLE_SLICE_METHODS:
                    return host_handle(call, "slice", f"{what}.{method}(...)")
                return loaded(call, f"`{what}.{method}(...)`")
            if method in torch_semantics.TENSOR_METHODS or method.endswith("_") and is_tensor(receiver):
                for arg in call.args:
                    self.ev(arg.value)  # a tensor method reads its arguments
            else:  # (`torch.nn.init.ones_(t)`: an in-place function of a module writes `t`)
                # `bufs.extend(xs)` of a list `xs` built here: its elements, read before the
                # hand-over below marks `xs` as possibly changed.
                extended_list = self._built_list(call) if method == "extend" else None
                self._escaping_args(call, f"`.{method}()`")
            if method in torch_api.ALIASING_METHODS and is_tensor(receiver):
                # Views (`t.split(2)`, `t.flatten()`) or its storage: a write through them writes it.
                self.host_escape(receiver, func.value, f"`.{method}()`, whose result may share its memory")
            if method.endswith("_") and not method.endswith("__"):
                self.host_write(receiver, call, f"`.{method}()`")  # PyTorch's in-place convention
            if method in torch_api.STORAGE_REPLACING_METHODS and type(func.value) is cst.Subscript:
                self.list_changed(func.value.value)  # `d["a"].set_(other)`: an item now holds other memory
            if method in torch_api.STORAGE_REPLACING_METHODS:
                replaced = dotted(func.value)
                if replaced is not None and replaced in self.env:
                    # `t.set_(other)`: now other's memory (no argument: an empty tensor).
                    other = self.value_of(call.args[0].value) if call.args and call.args[0].keyword is None else UNKNOWN
                    self.replace_memory(replaced, other if is_tensor(other) else UNKNOWN)
            elif method in ("numpy", "__array__"):
                self.host_write(receiver, call, "a numpy view (`.numpy()`), which may be written")
                if is_tensor(receiver):
                    # `n = t.numpy()` before the copy, `n[0] = 9` after it: the array is t's memory.
                    self.host_escape(receiver, call, "viewed as a numpy array (`.numpy()`), which shares its memory")
            if method == "append" and type(func.value) in (cst.Name, cst.Attribute):
                self._appended(func.value, call)
            elif method in _LIST_REPLACING_METHODS:
                self.list_changed(func.value)  # `bufs.clear()`: what it held is gone
            elif method in _LIST_GROWING_METHODS:
                # `bufs.extend(xs)`: other elements too, those of `xs` where it is a list this
                # function built (or a display); else not known.
                added = self._extended_by(call, extended_list) if method == "extend" else None
                self.add_elements(func.value, UNKNOWN if added is None else added)
            if method in _LIST_REORDERING_METHODS:
                reordered = dotted(func.value)
                if reordered is not None:
                    self.lists_reordered.add(reordered)  # which items a `zip` reaches may change
            if (
                self.summaries is not None
                and type(func.value) is cst.Name
                and func.value.value == "self"
                and method not in torch_semantics.TENSOR_METHODS
            ):
                if not self.summaries.is_method(self, method):
                    self.ev(func)  # `self.embed(ids)`: an object stored there, called (its `__call__`)
                result = self._summarised(call)
                self._receiver_called(func.value, method)
                return result
            if self.summaries is not None and objects.is_object(receiver):
                result = self._summarised(call)  # a method of an object of a project class
                self._receiver_called(func.value, method)
                return result
            if (
                self.summaries is not None
                and self.summaries.project is not None
                and type(func.value) is cst.Name
                and func.value.value not in self.env
                and _module_name(self.file_names, func.value.value)
            ):
                made = objects.construct(self.summaries, self, call)
                if made is not None:
                    return made  # `mod.Batch(...)`: an object of a class of an imported project module
                if self.summaries.project.function(self.file_names, func) is not None:
                    return self._summarised(call)  # `helpers.f(...)`: a function of an imported project module
            if (
                self.summaries is not None
                and self.summaries.project is not None
                and type(func.value) is cst.Attribute
                and (dotted(func.value) or "").split(".", 1)[0] not in self.env
                and self.summaries.project.function(self.file_names, func) is not None
            ):
                return self._summarised(call)  # `pkg.helpers.f(...)` after `import pkg.helpers`
            if (
                self.summaries is not None
                and type(func.value) is cst.Name
                and func.value.value not in self.env
                and func.value.value not in self.file_names.from_imports
                and func.value.value not in self.file_names.modules
                and objects.class_of_file(self.summaries, func.value.value) is not None
                and objects.class_level_method(self.summaries, func.value.value, method)
            ):
                return self._summarised(call)  # `Batch.from_list(...)`: a classmethod of this file
            if (
                type(func.value) is cst.Name
                and func.value.value not in self.env
                and f"{self.file_names.modules.get(func.value.value)}.{method}" in torch_api.PYTHON_BUFFERS
            ):
                return PYDATA  # `array.array("q")`: memory Python owns (what `torch.frombuffer` may wrap)
            result = torch_semantics.method_call(self, method, func.value, receiver, call)
            if method not in torch_semantics.TENSOR_METHODS and not method.endswith("_"):
                self._receiver_called(func.value, method)
                if (
                    type(func.value) is cst.Call
                    and type(func.value.func) is cst.Name
                    and func.value.func.value == "super"
                ):
                    self._receiver_called(cst.Name("self"), method)  # `super().repin()` runs on self
            return result
        if type(func) is cst.Call:
            self._called_results.add(id(func))  # `getattr(self, "repin")()`: see `_getattr`
        self.ev(func)
        # A builtin unless bound here or at module level (`len = np.asarray` is no builtin).
        builtin = (
            type(func) is cst.Name
            and func.value not in self.env
            and func.value not in self.file_names.module_level_bindings
        )
        if builtin and func.value == "getattr":
            read = self._getattr(call)
            if read is not None:
                return read
        if builtin and func.value in READ_ONLY_BUILTINS:
            for arg in call.args:
                self.ev(arg.value)
            if func.value == "bool" and len(call.args) == 1 and not call.args[0].star:
                self.uncalled_is_pinned(call.args[0].value)  # `bool(t.is_pinned)`: a truth value
        elif builtin and func.value in _COPYING_BUILTINS and len(call.args) == 1 and not call.args[0].star:
            # `tuple(bufs)`: a new sequence of the same items; bufs itself is not changed (its
            # items escape: a tensor's rows are views of it).
            value = self.ev(call.args[0].value)
            self.host_escape(value, call.args[0].value, f"passed to `{func.value}()`")  # type: ignore[union-attr]
        else:
            walks = builtin and func.value in _WALKING_BUILTINS  # (they only walk a data loader)
            self._escaping_args(call, f"`{dotted(func) or 'a call'}()`", changes_loaders=not walks)
        if builtin and func.value in ("iter", "next") and call.args and call.args[0].keyword is None:
            walked = self.value_of(call.args[0].value)
            if self.walked_loader(walked) and not call.args[0].star:
                # `next(iter(loader))`: a batch of a data loader that pins nothing.
                return walked if func.value == "iter" else batches(walked)
        if builtin and func.value in torch_api.PYTHON_DATA_BUILTINS:
            return PYDATA
        if (type(func) is cst.Name and func.value in self.env and func.value not in self.local_functions) or type(
            func
        ) is cst.Subscript:
            self._callable_called()
        if type(func) is cst.Name and func.value in self.local_functions:
            # A nested function that declares `nonlocal t` may rebind `t` when it runs.
            for name in _nonlocal_names(self.local_functions[func.value]):
                if name in self.env:
                    self.env.set(name, UNKNOWN)
            # It may set attributes of what it names (`p.offsets = p.offsets.pin_memory()`).
            for name in mentioned(self.local_functions[func.value]):
                if name in self.env:
                    self.alias(name)
        if self.summaries is not None and type(func) is cst.Name:
            made = objects.construct(self.summaries, self, call)
            if made is not None:
                return made  # an object of a class of the project
            return self._summarised(call)
        return UNKNOWN  # a call into project or library code: unknown provenance

    def _getattr(self, call: cst.Call) -> Value | None:
        """``getattr(self, "name")`` is ``self.name``; ``getattr(self, f.name)`` in a ``for f in
        fields(self):`` loop is each field in turn (their values joined, as for branches). None
        for any other ``getattr``: it is then a call that may change what its arguments hold."""
        args = call.args
        if not 2 <= len(args) <= 3 or any(a.keyword is not None or a.star for a in args):
            return None
        if id(call) in self._called_results:
            return None  # called (`getattr(self, "repin")()`): it may change what `self` holds
        obj, name = args[0].value, args[1].value
        if type(obj) is not cst.Name or obj.value != "self":
            return None  # another object's attribute may be a method, called later through it
        if type(name) not in (cst.SimpleString, cst.Name, cst.Attribute):
            return None  # a computed name: which attribute is read is not known
        # (A read only: evaluated again, harmlessly, when this returns None.)
        name_value = self.ev(name)
        if type(name) is cst.SimpleString:
            literal = name.evaluated_value
            if not isinstance(literal, str) or not literal.isidentifier():
                return None  # `getattr(x, "a.b")` raises, `getattr(x, "not valid")` is no attribute we read
            attributes: tuple[str, ...] = (literal,)
        elif self.own_fields and name_value == FIELD_NAME:
            attributes = self.own_fields  # `getattr(self, f.name)` in `for f in fields(self):`
        else:
            return None  # a computed name: which attribute is read is not known
        if self.summaries is None or any(self.summaries.is_method(self, a) for a in attributes):
            return None  # a bound method, called later (what it assigns is then unknown): as before
        values = [self.ev(a.value) for a in args[2:]]  # the default, when the attribute is missing
        for attribute in attributes:
            key = (obj.value, attribute)
            node = self._read_attributes.get(key)
            if node is None:
                node = self._read_attributes[key] = cst.Attribute(value=cst.Name(obj.value), attr=cst.Name(attribute))
            values.append(self.ev(node))
        return frozenset().union(*values)

    def _summarised(self, call: cst.Call) -> Value:
        """A call to another function of this file: what it returns, and the copies it makes of
        the arguments it is given."""
        assert self.summaries is not None
        self.summaries.forward_arguments(self, call)
        self.summaries.forward_fields(self, call)
        # What a call returns matters only where it is used (`self.refresh(x)` as a statement:
        # not worth parsing the callee for).
        summary = self.summaries.call(self, call) if call is not self.discarded else None
        for argument in self.summaries.checked_on_host(self, call):
            # `validate_cpu(lens)` raises unless `lens` is on the CPU: past the call, it is.
            key = dotted(argument)
            if key is not None and key in self.env:
                self.on_host(key, self.env.get(key))
        return UNKNOWN if summary is None else summary  # not summarised: unknown provenance

    def stored_item(self, target: cst.Subscript, value: Value) -> bool:
        """``d[k] = t`` into a dict this function built (``d = {}``), where ``t`` is a pageable
        host tensor: ``t`` is one of its items now, and nothing it held is lost unseen. An item
        whose value is not known, pinned or on a device, or one that may replace an item of
        another birth (a second key written with ``d[k]``, a literal key written again with
        another value), leaves the dict's items unknown (the caller marks it changed)."""
        key = dotted(target.value)
        if (
            key is None
            or "." in key
            or key in self.lists_changed
            or key + ".{}" not in self.env
            or len(target.slice) != 1
            or type(target.slice[0].slice) is not cst.Index
            or not value
            or any(o.kind is not Kind.PAGEABLE for o in value)
        ):
            return False
        held = self.env.get(key + ".{}") or frozenset()
        named = literal_key(target.slice[0].slice.value)
        written = [k for k in self.env.keys_under(key) if k.startswith(key + ".{") and k != key + ".{}"]
        if named is not None:
            if key in self._keyed_stores:
                return False  # a key written with `d[k]` may be this one: its item may be lost unseen
            before = self.env.get(key + ".{%s}" % named)
            if before is not None and before != value:
                return False  # replaces an item of another birth, still among the dict's items
            self.env.set(key + ".{%s}" % named, value)
        else:
            if written or not held <= value:
                return False  # may replace an item put in another way (a literal key, a display)
            self._keyed_stores.add(key)
        self.set_elements(key, ".{}", held | value)
        return True

    def _appended(self, target: cst.BaseExpression, call: cst.Call) -> None:
        """``parts.append(t)``: remember what the list holds, for ``torch.cat(parts)``."""
        key = dotted(target)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if key is None or len(args) != 1 or key + ".[]" not in self.env:
            return  # not a list this function built: its elements are not ours to know
        current = self.env.get(key + ".[]")
        self.set_positions(key, [self.tuple_parts(args[0])], fresh=not current)
        self.set_elements(key, ".[]", (current or frozenset()) | self.value_of(args[0]))

    def _escaping_args(self, call: cst.Call, callee: str, changes_loaders: bool = True) -> None:
        """Evaluate arguments handed to code we do not see: it may keep or write them, and
        rebind their attributes. ``changes_loaders``: False for code that only walks a data
        loader (``iter``, ``enumerate``, a progress bar)."""
        handed = []
        for arg in call.args:
            value = self.ev(arg.value)
            self.host_escape(value, arg.value, f"passed to {callee}")
            handed.append((arg.value, value))
            if changes_loaders:
                for origin in value:
                    if origin.handle == "loader":
                        self._loaders_handed.setdefault(id(origin.node), set()).add(id(arg.value))
        for node, value in handed:
            if type(node) is cst.Name and self.summaries is not None:
                held = self.container_of(node)
                if held:
                    self._handed_containers[id(node)] = held
                fields = self.stored_fields(node)
                if fields:
                    self._handed_fields[id(node)] = fields
            self._handed_over(node, value)

    def _data_loader(self, call: cst.Call, library: str) -> Value:
        """The handle of a data loader whose batches are new pageable host tensors (see
        ``torch_api.HOST_BATCH_LOADERS``), else unknown."""
        collate = _argument(call, torch_api.LOADER_PARAMETERS.index("collate_fn"), "collate_fn")
        if collate is not None and (
            (type(collate) is cst.Name and collate.value == "None")
            or self._library_source(collate) in torch_api.DEFAULT_COLLATE_FUNCTIONS
        ):
            collate = None  # `collate_fn=None`, `collate_fn=default_collate`: the loader's own
        if collate is not None:
            return UNKNOWN  # the project's collate function may pin, or build on a device
        if not _loads_pageable_batches(call, self.known_false):
            return UNKNOWN  # pinned, or as chosen at run time
        if self.summaries is None or self.summaries.text_matches(LOADER_CHANGING_TEXT):
            return UNKNOWN  # `loader.pin_memory = True` may run before the loop
        if self.summaries.matched_around(LOADER_CLASS_PATCHING_TEXT):
            return UNKNOWN  # a package `__init__.py` or an imported module may patch the loader class
        dataset = _argument(call, 0, "dataset")
        if dataset is None:
            return UNKNOWN
        on_device, pinned = self._dataset_samples(self.value_of(dataset))
        if on_device:
            return UNKNOWN  # its samples may be on a device: so are the batches stacked of them
        batch_size = _argument(call, 1, "batch_size")
        if batch_size is not None and self._may_be_none(batch_size):
            return UNKNOWN  # `batch_size=None` gives the dataset's samples as they are (pinned?)
        if pinned and batch_size is not None and type(batch_size) is not cst.Integer:
            return UNKNOWN  # pinned samples, and a batch size that may be `None` at run time
        return host_handle(call, "loader", f"`{dotted(call.func)}(...)`", library)

    def _dataset_samples(self, dataset: Value) -> tuple[bool, bool]:
        """Whether a dataset's samples may be on a device, and whether they may be pinned (a
        batch stacks them into new host memory; without batching they are given as they are).
        A ``TensorDataset`` of tensors not provably on the host may give device samples; an
        object of a project class whose source names a device (``cuda``, ``device``, ``.to(``)
        or pinning (``pin_memory``, ``is_pinned``), or that was built from (or holds) device or
        pinned tensors, may give those. Any other dataset (a parameter's, a library's) is taken
        to give host samples in pageable memory, as the default collate function's input."""
        if any(o.handle == "device-dataset" for o in dataset):
            return True, False
        texts = objects.class_texts(self.summaries, dataset) if self.summaries is not None else None
        on_device = texts is not None and any(DEVICE_SAMPLES_TEXT.search(text) for text in texts)
        pinned = texts is not None and any(PINNED_SAMPLES_TEXT.search(text) for text in texts)
        for origin in dataset if objects.is_object(dataset) else ():
            held = [value for _, value in origin.fields]
            if type(origin.node) is cst.Call:
                for arg in origin.node.args:
                    held.append(self.value_of(arg.value))
                    held.extend((self.held_by_argument(arg.value) or {}).values())
            found = frozenset().union(*held) if held else frozenset()
            on_device = on_device or any(o.kind is Kind.DEVICE for o in found)
            pinned = pinned or any(o.kind in MAYBE_PINNED_KINDS for o in found)
        return on_device, pinned

    def _may_be_none(self, node: cst.BaseExpression) -> bool:
        """``node`` names ``None`` (``None``, ``None if pre_batched else 32``), or is a name this
        function binds to an expression naming it (a parameter defaulting to ``None`` too)."""
        if _names_none(node):
            return True
        if type(node) is not cst.Name or type(self.scope) is not cst.FunctionDef:
            return False
        param = named_parameter(self.scope, node.value)
        if param is not None and param.default is not None and _names_none(param.default):
            return True
        lines = iter_statements(list(self.scope.body.body))
        for statement in (small for line in lines if type(line) is cst.SimpleStatementLine for small in line.body):
            if type(statement) in (cst.Assign, cst.AnnAssign, cst.AugAssign):
                targets = statement.targets if type(statement) is cst.Assign else [statement]  # type: ignore[attr-defined]
                value = statement.value  # type: ignore[attr-defined]
                named = any(node.value in mentioned(t.target) for t in targets)  # type: ignore[attr-defined]
                if named and value is not None and _names_none(value):
                    return True
        return False

    def walked_loader(self, value: Value, handed: cst.BaseExpression | None = None, also: Sequence[int] = ()) -> bool:
        """``value`` is a data loader that pins nothing on every path, never handed (but as
        ``handed``, the argument asked about, or as one of the argument nodes whose ids are
        ``also``) to code that may change it before it is walked."""
        if handle_kind(value) != "loader":
            return False
        here = {id(handed), *also} if handed is not None else set(also)
        return not any(self._loaders_handed.get(id(o.node), set()) - here for o in value)

    def _unknown_self_attribute(self, walked: cst.BaseExpression, value: Value) -> str | None:
        """``attr`` of a walk of ``self.<attr>`` whose value nothing here knows (stored from a
        parameter: ``self.loader = loader`` in ``__init__``), in a method; else None."""
        if type(walked) is not cst.Attribute or type(walked.value) is not cst.Name or walked.value.value != "self":
            return None
        attr = walked.attr.value
        if not value or not all(o.kind is Kind.UNKNOWN and not o.class_name and not o.handle for o in value):
            return None
        return attr if any(o.attribute == attr for o in value) else None

    def held_by_argument(self, node: cst.BaseExpression) -> dict[str, Value] | None:
        """What the list or dict passed as ``node`` held when the call was made."""
        return self._handed_containers.get(id(node)) or self.container_of(node)

    def fields_trusted(self, node: cst.BaseExpression) -> bool:
        """Whether what this function knows of the fields of the object ``node`` holds may be
        handed to a callee: no tensor's memory is replaced in place anywhere in the function
        (``t.data = p``, ``t.set_(p)``, ``swap_tensors``: a field may be that tensor), and no
        nested function or lambda names the object (it may change a field when it runs)."""
        if self._replaces_memory is None:
            # (In this function: a call is assumed to replace no tensor's memory, as for tensors
            # handed to it directly.) The file's text is asked first: most files name none of
            # these, and the walk of every node is a tenth of some files' analysis.
            may = self.summaries is None or self.summaries.text_matches(MEMORY_REPLACING_TEXT)
            self._replaces_memory = may and _replaces_memory(self.scope)
        if self._replaces_memory:
            return False
        key = dotted(node)
        root = key.split(".", 1)[0] if key is not None else None
        if root is not None and root in self.aliased:
            return False  # held under another name too (`b.__dict__`, `other = b`)
        if root is not None and (self.local_functions or self._lambdas) and root in self._named_by_local_functions():
            return False
        return True

    def stored_fields(self, node: cst.BaseExpression) -> dict[str, Value]:
        """What this function stored in the attributes of ``node`` (``batch.ids = t``) and still
        knows; for an argument, what they held when the call was made."""
        if id(node) in self._handed_fields:
            return self._handed_fields[id(node)]
        key = dotted(node)
        if key is None:
            return {}
        prefix = key + "."
        fields = {}
        for stored in self.env.keys_under(key):
            attr = stored[len(prefix) :]
            if stored.startswith(prefix) and attr.isidentifier():
                fields[attr] = self.env.get(stored) or UNKNOWN
        return fields

    def _handed_over(self, node: cst.BaseExpression, value: Value) -> None:
        """``node`` went to code that may rebind its attributes (``pin(batch)`` setting
        ``batch.ids = batch.ids.pin_memory()``, ``setattr(batch, ...)``): what this function knew
        of them, and the fields an object was built with, are unknown from here on. (A tensor
        itself keeps its storage: no call makes it pinned in place.)"""
        self._contained(node)  # a list or dict handed over may be written by whoever keeps it
        key = dotted(node)
        if key is None:
            return
        if self._aliases_self(key):
            self.env.forget_under("self")  # `o = self; hook(o)`
        self.env.forget_under(key)
        if objects.is_object(value):
            self.env.set(key, UNKNOWN)

    def on_host(self, key: str, before: Value | None) -> None:
        """A check proved ``key`` to be on the CPU. What was known of it on the host stays; an
        unknown value becomes a host tensor of unknown pinnedness (a parameter stays named: its
        callers' arguments may be known, and its copies are theirs)."""
        value: set[Origin] = set()
        for origin in before or UNKNOWN:
            if origin.kind in HOST_KINDS:
                value.add(origin)
            elif origin.kind is Kind.UNKNOWN and origin.parameter:
                value.add(Origin(Kind.HOST, origin.node, what=origin.what, parameter=origin.parameter))
            elif origin.kind is Kind.UNKNOWN:
                value.add(HOST_ORIGIN)
            # (a device or Python value on some path: not on the path past the check)
        self.env.set(key, frozenset(value) or HOST)

    def forget_tested(self, test: cst.BaseExpression) -> tuple[dict[str, Value], bool]:
        """A test of where a tensor lives or whether it is pinned (``if t.is_pinned():``): which
        way it goes is decided at run time, so what was known of the tensor is forgotten.
        Returned: what the side of an ``if`` where the test is the second item may know again
        (``if t.device != target:`` of a tensor pageable on some path, or of a parameter: inside,
        t is what it was and target another device; past ``if t.device == target: return t``
        too)."""
        self.uncalled_is_pinned(test)
        compared, differ_when, target = compared_to_another_device(test) or (None, True, None)
        hosted, host_when = host_side(test) or (None, True)
        kept: dict[str, Value] = {}
        for key in device_tested(test):
            before = self.env.get(key) if key in self.env else self.parameter_field(key)
            if before is None:
                continue  # nothing known of it to forget
            before = before or UNKNOWN
            known = {o.kind for o in before}
            copied_from = Kind.PAGEABLE in known or any(o.parameter for o in before)
            if key == compared and copied_from and Kind.DEVICE not in known and target is not None:
                kept_value = self._kept_past_device_test(before, target)
                if kept_value is not None:
                    kept[key] = kept_value
            elif key == hosted and all(o.parameter for o in before):
                # `if t.is_cuda: return t` of a parameter: where t may be on the host, it is what
                # the caller passed (its host tensors take that side). Not for a tensor made
                # here: testing its place says it may be elsewhere (a default device set by
                # other code), which the test then decides at run time.
                kept[key] = before
                differ_when = host_when
                self._place_tested.add(key)
            self.env.set(key, UNKNOWN)
        return kept, differ_when

    def _kept_past_device_test(self, before: Value, target: cst.BaseExpression) -> Value | None:
        """What ``t`` is where ``t.device`` differs from ``target``: what it was, when the target
        may be another device than the host. None (unknown) where the target is the host (that
        side never runs for a host tensor), or a parameter deciding it for a local tensor (its
        callers may pass the host); a parameter ``t`` compared to a parameter ``home`` keeps
        ``home``'s name, so that a caller passing the host copies nothing."""
        target_value = self.value_of(target)
        key = dotted(target)
        if key is not None and key.startswith("self.") and self.summaries is not None:
            # `self.device`: what the class's methods assign to it (`torch.device("cpu")`?).
            target_value = self.summaries.attribute(self, key) or target_value
        if target_value == HOST_DEVICE or classify_device(target, self.names.torch_function) is DeviceClass.HOST:
            return None  # `t.device == torch.device("cpu")`: the other side never runs for a host tensor
        home = target.value if type(target) is cst.Name and self._own_parameter(target.value) else ""
        if not home:
            return before
        if any(not o.parameter for o in before):
            return None  # a tensor of this function, compared to a device its callers choose
        return frozenset(replace(o, unless_host=home) for o in before)

    def guard_by_none_facts(self, facts: set[tuple[str, bool]], before: dict[str, Value | None], mark: int) -> None:
        """The origins a side of an ``if`` made (present now, not in ``before``) exist only where
        its test's facts held (``x is None``): remembered for a later test of the same ``x``.
        Not inside a loop (another iteration may see another ``x``), and not when the side
        rebinds ``x``."""
        if not facts or self.loop_stack:
            return
        changed = self.env.changes_since(mark)
        facts = {(key, is_none) for key, is_none in facts if key not in changed and key in self.env}
        if not facts:
            return
        # Made on this side: in no value before it (one that existed, `t = t0`, is no new origin).
        known: frozenset[Origin] = frozenset().union(*before.values()) if before else frozenset()
        for value in changed.values():
            for origin in (value or frozenset()) - known:
                if origin.kind in (Kind.PAGEABLE, Kind.PINNED):
                    guards = self.none_guarded.setdefault(origin, [])
                    guards.extend((name, is_none, self.env.get(name)) for name, is_none in facts)

    def prune_by_none_facts(self, facts: set[tuple[str, bool]]) -> None:
        """Entering a side of an ``if`` where ``facts`` hold: drop the origins made only where
        one of them was the other way (the same ``x``, still bound to the same value)."""
        if not facts or not self.none_guarded:
            return
        for key, value in self.env.items():
            kept = frozenset(
                o
                for o in value
                if not any(
                    (name, not is_none) in facts and self.env.get(name) == then
                    for name, is_none, then in self.none_guarded.get(o, ())
                )
            )
            if kept != value:
                self.env.set(key, kept or UNKNOWN)

    def flag_of(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """``(flag, whether the test holds when the flag is true)`` for a test of a parameter
        whose default is ``True`` (``pin``, ``not pin``, ``bool(pin)``), else None."""
        negated = False
        node = test
        while True:
            if type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
                negated, node = not negated, node.expression
            elif (
                type(node) is cst.Call
                and type(node.func) is cst.Name
                and node.func.value == "bool"
                and "bool" not in self.env
                and len(node.args) == 1
            ):
                node = node.args[0].value
            else:
                break
        if type(node) is cst.Name and node.value in self.default_true_params and self.env.get(node.value) == TRUE:
            return node.value, not negated
        return None

    def device_type_of(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """``("device:<X>", whether the test holds when X is an accelerator)`` for a test of a
        device's type (``X.type == "cuda"``, ``X.type != "cpu"``, ``not ...``), else None."""
        negated = False
        node = test
        while type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
            negated, node = not negated, node.expression
        if type(node) is not cst.Comparison or len(node.comparisons) != 1:
            return None
        left, comparison = node.left, node.comparisons[0]
        if (
            type(left) is not cst.Attribute
            or left.attr.value != "type"
            or type(comparison.comparator) is not cst.SimpleString
        ):
            return None
        device = dotted(left.value)
        literal = comparison.comparator.evaluated_value
        if device is None or not isinstance(literal, str):
            return None
        if literal.startswith(torch_api.ACCELERATOR_DEVICE_PREFIXES):
            holds = True
        elif literal.startswith(torch_api.HOST_DEVICE_PREFIXES):
            holds = False
        else:
            return None
        if type(comparison.operator) is cst.NotEqual:
            holds = not holds
        elif type(comparison.operator) is not cst.Equal:
            return None
        return f"device:{device}", holds != negated

    def guard_by_flag(self, flag: str, when_true: Value, when_false: Value) -> None:
        """After a test of ``flag``: the pageable origins only its false side holds, where its
        true side pins (``if pin: t = t.pin_memory()``), reach a copy only with the flag false."""
        if not any(o.kind is Kind.PINNED for o in when_true):
            return
        for origin in when_false - when_true:
            if origin.kind is Kind.PAGEABLE:
                self.flag_guarded.setdefault(origin, set()).add(flag)

    def replace_memory(self, key: str, value: Value) -> None:
        """``key``'s tensor now uses other memory (``t.data = v``, ``t.set_(v)``): so does every
        name bound to the same tensor (``u = t`` before)."""
        old = self.env.get(key)
        if old is None:
            return
        for other in [k for k, v in self.env.items() if v == old and k != key]:
            self.env.set(other, value)
        self.env.set(key, value)

    def alias(self, key: str) -> None:
        """``key`` is held under another name too: its attributes are unknown from here on (see
        ``aliased``). (Items of a list or dict it holds are another matter: ``lists_changed``.)"""
        if key == "self":
            return  # `o = self`: `_aliases_self`
        self.aliased.add(key)
        prefix = key + "."
        for stored in self.env.keys_under(key):
            if stored.startswith(prefix) and stored[len(prefix) :].replace(".", "_").isidentifier():
                self.env.set(stored, UNKNOWN)

    def aliased_root(self, key: str) -> bool:
        """``key`` (``tap.valid``) is an attribute of something held under another name too."""
        parts = key.split(".")
        return any(".".join(parts[:i]) in self.aliased for i in range(1, len(parts)))

    def _aliases_self(self, key: str) -> bool:
        """``key`` holds this method's ``self`` (``o = self``)."""
        own = self.env.get("self")
        return key != "self" and own is not None and self.env.get(key) == own

    def _callable_called(self) -> None:
        """A callable held in a variable (``for hook in self.hooks: hook()``) may be a bound
        method of ``self`` that the file hands around (``s.hooks.append(s.repin)``): what those
        methods may assign is unknown from here on."""
        if self.summaries is None or "self" not in self.env:
            return
        for method in sorted(self.summaries.referenced_methods(self)):
            self._receiver_called(cst.Name("self"), method)

    def _receiver_called(self, receiver: cst.BaseExpression, method: str) -> None:
        """``x.method()`` may rebind ``x``'s attributes: those this function set are unknown
        from here on. For ``self``, only those the called method may assign (see
        ``Summaries.method_may_assign``)."""
        key = dotted(receiver)
        if key is None:
            return
        if self._aliases_self(key):
            self._receiver_called(cst.Name("self"), method)  # `o = self; o.repin()`
        for stale in self.env.keys_under(key):
            attr = stale[len(key) + 1 :].split(".", 1)[0]
            if attr.startswith(("[]", "{")):
                continue  # what a list (dict) holds: its own methods keep that up to date
            if (
                key == "self"
                and self.summaries is not None
                and not self.summaries.method_may_assign(self, method, attr)
            ):
                continue
            self.env.set(stale, UNKNOWN)


def _agree(elements: Value) -> bool:
    """Items of which any one may be picked (``bufs[i]``) and each gives the same answer: all
    pageable, all pinned or on a device, or all Python data (``d[k]`` of a dict of lists: a list)."""
    return bool(elements) and (
        all(o.kind is Kind.PAGEABLE for o in elements)
        or all(o.kind in MAYBE_PINNED_KINDS or o.kind is Kind.DEVICE for o in elements)
        or all(o.kind is Kind.PYDATA for o in elements)
    )


def _every_item_walked(loop: cst.For | None, comprehension: cst.CSTNode | None) -> bool:
    """The body runs in full for every item: a ``for`` whose body is plain statements, none of
    them ``continue``, ``break``, ``return`` or ``raise``; a comprehension without ``if``."""
    if loop is not None:
        body = loop.body.body
        if not all(type(line) is cst.SimpleStatementLine for line in body):
            return type(loop.body) is cst.SimpleStatementSuite and not _leaves(loop.body.body)  # type: ignore[arg-type]
        return not any(_leaves(line.body) for line in body)  # type: ignore[union-attr]
    if type(comprehension) is cst.CompFor:
        return not comprehension.ifs and comprehension.inner_for_in is None
    return False


def _leaves(smalls: Sequence[cst.BaseSmallStatement]) -> bool:
    return any(type(small) in (cst.Continue, cst.Break, cst.Return, cst.Raise) for small in smalls)


def _mixed(elements: Value) -> bool:
    """Items both pageable and pinned or on a device."""
    found = {o.kind for o in elements}
    return Kind.PAGEABLE in found and bool(found & {Kind.PINNED, Kind.HOST, Kind.DEVICE})


#: Names that swap two tensors' memory (``torch.utils.swap_tensors``), however imported.
_SWAPPING_NAMES = frozenset(f.rsplit(".", 1)[-1] for f in torch_api.MEMORY_SWAPPING_FUNCTIONS)


def _replaces_memory(scope: cst.CSTNode) -> bool:
    """``t.data = p``, ``t.set_(p)`` or ``swap_tensors(a, b)`` somewhere in ``scope``."""
    stack: list[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute and (
            node.attr.value in torch_api.STORAGE_REPLACING_METHODS or node.attr.value in _SWAPPING_NAMES
        ):
            return True
        if type(node) is cst.AssignTarget and type(node.target) is cst.Attribute:
            owner = node.target.value
            if node.target.attr.value in torch_api.STORAGE_ATTRIBUTES and not (
                type(owner) is cst.Name and owner.value == "self"
            ):
                return True  # `t.data = p` (`self.data = x` is an attribute of the object's own)
        if type(node) is cst.Name and node.value in _SWAPPING_NAMES:
            return True
        stack.extend(children(node))
    return False


def _objects_holding_host(elements: Value) -> bool:
    """Every element is an object of a project class, and one's construction put a host tensor
    in a field (``[Batch(ids=t)]``): a loop's ``x.to_device(...)`` copies it."""
    return objects.is_object(elements) and any(
        o.kind in HOST_KINDS for origin in elements for _, value in origin.fields for o in value
    )


def _positional(names: list[cst.Name], values: list[Value]) -> list[tuple[cst.Name, Value]]:
    """Each loop name with its position's items, when a host tensor is among any of them."""
    if not any(o.kind in HOST_KINDS for value in values for o in value):
        return []  # no host tensor we know in it: its items stay unknown
    return list(zip(names, values))


def distinct_keys(node: cst.Dict) -> bool:
    """A dict display whose every item stays in it: no ``**other`` (which may replace items),
    and one item, or keys that are distinct string literals (``{"ids": a, "ids": b}`` keeps only
    ``b``; ``{1: a, 1.0: b}`` or computed keys may collide)."""
    if not all(type(e) is cst.DictElement for e in node.elements):
        return False
    if len(node.elements) <= 1:
        return True
    keys = [e.key.evaluated_value if type(e.key) is cst.SimpleString else None for e in node.elements]  # type: ignore[union-attr]
    return all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys)


#: The key suffix of a tuple display's item at a position (``pair.(0)``).
TUPLE_ITEM = ".(%d)"


def _literal_index(node: cst.BaseExpression) -> int | None:
    """``0``, ``1``: a non-negative integer literal index, else None. (Not ``-1``: paths that
    bind tuples of other lengths join their items position by position from the start.)"""
    return node.evaluated_value if type(node) is cst.Integer else None  # type: ignore[return-value]


def literal_key(node: cst.BaseExpression) -> str | None:
    """The text of a plain string literal made of word characters (``"mask"``), else None."""
    if type(node) is not cst.SimpleString or node.prefix:
        return None
    text = node.raw_value
    return text if text and (text.isidentifier() or text.isalnum()) and "." not in text else None


#: Builtins that make a new list or tuple of their argument's items without changing it.
_COPYING_BUILTINS = frozenset({"list", "tuple"})
#: Builtins that only walk what they are given (a data loader passed to them is not changed).
_WALKING_BUILTINS = frozenset({"iter", "next", "enumerate", "zip"})
_SEQUENCE_TYPES = frozenset({"list", "List", "tuple", "Tuple", "Sequence"})


def _sequence_annotation(annotation: cst.Annotation | None) -> bool:
    """``list[int]``, ``List[int]``, ``tuple[int, ...]``, ``Sequence[int]`` or a bare ``list``."""
    if annotation is None:
        return False
    node = annotation.annotation
    if type(node) is cst.Subscript:
        node = node.value
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value in ("typing", "collections"):
        node = node.attr
    return type(node) is cst.Name and node.value in _SEQUENCE_TYPES


#: List and dict methods after which it may hold other elements than the ones recorded (removed
#: or replaced ones).
#: (A dict's ``update`` and ``|=`` replace the values of the keys they name: not only added items.)
_LIST_REPLACING_METHODS = frozenset(
    {"pop", "remove", "clear", "__setitem__", "__delitem__", "popitem", "update", "__ior__"}
)
#: List and dict methods that add elements we do not follow.
_LIST_GROWING_METHODS = frozenset({"extend", "insert", "setdefault", "__iadd__"})
#: List methods that move items to other positions.
_LIST_REORDERING_METHODS = frozenset({"insert", "sort", "reverse"})


def _nonlocal_names(function: cst.FunctionDef) -> set[str]:
    """The names ``function`` (or a function nested in it) declares ``nonlocal`` or ``global``
    (a global this scope also declares is rebound for it too)."""
    found: set[str] = set()
    for statement in iter_statements([function], into_functions=True):
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) in (cst.Nonlocal, cst.Global):
                    found.update(item.name.value for item in small.names)
    return found


def _module_name(names: FileNames, local: str) -> bool:
    """``local`` is bound by an import (``import pkg.mod as local``, ``from pkg import local``)."""
    return local in names.modules or local in names.from_imports


def _opens_on_host(library: str, call: cst.Call) -> bool:
    """``safe_open(path, framework="pt")`` on the host: the framework a literal torch name, the
    device absent (the CPU) or the literal ``"cpu"``; no ``*args``/``**kwargs`` that may hold them."""
    (framework_at, framework_keyword), (device_at, device_keyword) = torch_api.HOST_FILE_HANDLES[library]
    if any(a.star for a in call.args):
        return False
    framework = _argument(call, framework_at, framework_keyword)
    device = _argument(call, device_at, device_keyword)
    if not (type(framework) is cst.SimpleString and framework.evaluated_value in torch_api.TORCH_FRAMEWORK_NAMES):
        return False  # numpy, jax, ...: not torch tensors; a name: chosen at run time
    return device is None or type(device) is cst.SimpleString and device.evaluated_value == "cpu"


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument passed for a parameter (by keyword, or at its position), if any."""
    found = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    if found is not None:
        return found
    positional = [a for a in call.args if a.keyword is None]
    return positional[position].value if len(positional) > position else None


def _item_parts(key: str) -> Value:
    """A part of an item of parameter ``key`` (``x`` of ``for x, y in key:``)."""
    return frozenset({Origin(Kind.UNKNOWN, what=f"a part of an item of parameter `{key}`", parameter=key + ITEM_PART)})


def _names_of(target: cst.BaseExpression | None) -> list[cst.Name]:
    """The names of a tuple target of plain names (``x, y``), else none."""
    if type(target) is not cst.Tuple or not all(
        type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements
    ):
        return []
    return [e.value for e in target.elements]  # type: ignore[misc]


def _names_none(node: cst.BaseExpression) -> bool:
    """``None`` appears in ``node``."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name and current.value == "None":
            return True
        stack.extend(children(current))
    return False


def _pair(target: cst.BaseExpression) -> bool:
    """``i, batch`` (of ``enumerate``): a two-element tuple without a starred element."""
    return (
        type(target) is cst.Tuple and len(target.elements) == 2 and all(type(e) is cst.Element for e in target.elements)
    )


def _sole_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The one positional argument of ``call`` (not starred), else None."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _batch_names(target: cst.BaseExpression | None, batch: Value) -> list[tuple[cst.Name, Value]]:
    """The names a loop target binds to parts of a loaded batch, each to ``batch`` (every
    tensor in it is in pageable host memory): ``batch``, ``x, y``, ``(x, (y, z))``; a starred
    name collects a list (left unknown)."""
    if type(target) is cst.Name:
        return [(target, batch)]
    if type(target) in (cst.Tuple, cst.List):
        return [
            bound
            for element in target.elements  # type: ignore[union-attr]
            if type(element) is cst.Element
            for bound in _batch_names(element.value, batch)
        ]
    return []  # nothing, an attribute or a subscript: not followed


def _loads_pageable_batches(call: cst.Call, known_false: Callable[[cst.BaseExpression], bool]) -> bool:
    """A data loader that pins nothing: ``pin_memory=`` absent, ``False`` or a name known to be
    ``False`` (``Evaluator.known_false``), at most
    six positional arguments (a seventh is the collate function, the eighth ``pin_memory``), and
    no ``*args``/``**kwargs`` that may hold them. (Its collate function and batch size are
    ``Evaluator._data_loader``'s to judge.)"""
    if any(a.star for a in call.args):
        return False
    if len([a for a in call.args if a.keyword is None]) > torch_api.LOADER_PARAMETERS.index("collate_fn"):
        return False  # a collate function or pin_memory passed by position
    pin = _argument(call, torch_api.LOADER_PARAMETERS.index("pin_memory"), "pin_memory")
    return pin is None or known_false(pin)


def _loads_on_host(library: str, call: cst.Call) -> bool:
    """A known host-returning library call whose device argument, if it takes one, is absent
    or the literal ``"cpu"``."""
    where = torch_api.HOST_LIBRARY_DEVICE_ARGUMENT.get(library)
    if where is None:
        return True
    position, keyword = where
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return False  # `**kwargs` may hold the device
    device = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    if device is None and len(positional) > position:
        device = positional[position].value
    if device is None:
        return True  # the default: the CPU
    return type(device) is cst.SimpleString and device.evaluated_value == "cpu"


def _calls_in(test: cst.BaseExpression) -> list[cst.Call]:
    """The ``x.is_pinned()`` calls made in ``test``."""
    found: list[cst.Call] = []
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value == torch_api.PIN_TEST_METHOD
        ):
            found.append(node)
        stack.extend(children(node))
    return found


def uncalled_methods(test: cst.BaseExpression, method: str) -> list[cst.Attribute]:
    """``x.<method>`` read as a truth value (the test itself, under ``not``, ``and``, ``or``, a
    walrus) without being called: a bound method, which is always true."""
    found: list[cst.Attribute] = []
    stack: list[cst.BaseExpression] = [test]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Attribute and node.attr.value == method:  # type: ignore[attr-defined]
            found.append(node)  # type: ignore[arg-type]
        elif kind is cst.UnaryOperation and type(node.operator) is cst.Not:  # type: ignore[attr-defined]
            stack.append(node.expression)  # type: ignore[attr-defined]
        elif kind is cst.BooleanOperation:
            stack.extend((node.left, node.right))  # type: ignore[attr-defined]
        elif kind is cst.NamedExpr:
            stack.append(node.value)  # type: ignore[attr-defined]
    return found


def device_tested(test: cst.BaseExpression) -> set[str]:
    """Names/attribute chains whose device or pinnedness an ``if`` test inspects."""
    found: set[str] = set()
    stack: list[cst.BaseExpression] = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute:
            if node.attr.value in torch_api.DEVICE_TEST_ATTRIBUTES:
                inner = node.value.target if type(node.value) is cst.NamedExpr else node.value
                key = dotted(inner)
                if key:
                    found.add(key)
            stack.append(node.value)
        elif type(node) is cst.Call:
            stack.append(node.func)
            stack.extend(arg.value for arg in node.args)
        elif type(node) is cst.Comparison:
            stack.append(node.left)
            stack.extend(c.comparator for c in node.comparisons)
        elif type(node) is cst.BooleanOperation:
            stack.extend((node.left, node.right))
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.NamedExpr:
            stack.append(node.value)  # `if not (p := t.is_pinned()):`
    return found


def _displayed(evaluator: Evaluator, node: cst.BaseExpression) -> list[Value] | None:
    """The element values of a tuple display without ``*`` (``return a, b``), else None."""
    if type(node) is not cst.Tuple or any(type(e) is cst.StarredElement for e in node.elements):
        return None
    return [evaluator.value_of(e.value) for e in node.elements]
