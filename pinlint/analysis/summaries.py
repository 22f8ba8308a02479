"""Provenance across the functions of one file: what a class's methods assign to ``self.x``,
what a function returns, which parameters a function copies non_blocking.

Summaries are demand-driven: the interpreter asks for one when it meets ``self.x`` it did not
bind, or a call to a function of this file. The functions needed are found by a text scan
(cheap), cut out and parsed with libcst alone, and interpreted once (memoised). The depth of
nested requests is bounded and a function already being summarised answers "unknown", so
recursion and cycles terminate. Anything not found, ambiguous or too deep is unknown: precision
first.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from pinlint import torch_api
from pinlint.analysis import objects
from pinlint.analysis.builtins import constant_truth
from pinlint.analysis.classes import _method_classes
from pinlint.analysis.copy_text import MAY_COPY, may_copy
from pinlint.analysis.cst_walk import children
from pinlint.analysis.decorators import passes_through
from pinlint.analysis.device_tests import on_host_when
from pinlint.analysis.devices import DeviceClass, classify_device
from pinlint.analysis.dict_uses import only_read
from pinlint.analysis.events import EventSink, ParameterCopy, SinkHit
from pinlint.analysis.file_text import FileText
from pinlint.analysis.names import AMBIGUOUS_IMPORT, LIBRARY_ROOTS, FileNames
from pinlint.analysis.parse import parse
from pinlint.analysis.positions import Positions
from pinlint.analysis.project_modules import ModuleFiles
from pinlint.analysis.scopes import dotted, iter_statements, named_parameter
from pinlint.analysis.text_patterns import LOADER_CHANGING_TEXT
from pinlint.analysis.triage import Segment, segment_for, segment_text
from pinlint.analysis.values import (
    FALSE,
    HOST_DEVICE,
    HOST_KINDS,
    ITEM_PART,
    KEY_TESTED_ITEMS,
    PYDATA,
    UNKNOWN,
    Kind,
    Value,
    batches,
    is_true,
    loaded_items,
    only,
    replayed,
)

if TYPE_CHECKING:
    from pinlint.analysis.events import AttributeCopy
    from pinlint.analysis.expressions import Evaluator
    from pinlint.analysis.interpreter import Interpreter
    from pinlint.analysis.project_summaries import ProjectSummaries

#: How many summaries deep one request may go (a helper calling a helper calling a helper).
MAX_DEPTH = 3
#: How many calls a parameter is followed through before the one that copies it (``MAX_DEPTH``
#: bounds the interpretations each call asks for; this, the length of a recorded chain).
MAX_CHAIN = 3
#: How many callers of the functions that copy a parameter one file's analysis follows (a
#: bound: generated code can call a helper thousands of times).
CALLERS_FOLLOWED = 64
#: ``non_blocking`` of a forwarded copy that no caller decides: true whatever it passes.
ALWAYS = cst.Name("True")


@dataclass
class Parsed:
    module: cst.Module
    segment: Segment
    source: str
    interpreters: list[Interpreter]
    positions: Positions | None = None
    #: The lines of the file it was cut from (decorators above its `def` are not in it).
    file_lines: list[str] | None = None


T = TypeVar("T")


class FileSummaries:
    """The summaries of one file, computed on demand."""

    def __init__(
        self,
        names: FileNames,
        lines: list[str],
        listened: frozenset[type],
        make_interpreter,  # type: ignore[no-untyped-def]
        scan: FileText | None = None,
        parses: dict[int, object] | None = None,
    ) -> None:
        self.names = names
        self.lines = lines
        self.text = "".join(lines)
        self.listened = listened
        self._make = make_interpreter
        self._parsed: dict[int, Parsed | None] = {}
        self._running: set[int] = set()
        self._scopes: dict[int, Interpreter | None] = {}
        self._running_scopes: set[int] = set()
        self.depth = 0
        #: What text scans of the file say (classes, defs, `self.x =` lines), found on first need.
        self.scan = scan if scan is not None else FileText(lines)
        #: Parsed segments by def line, shared with other analyses of the same content (a
        #: project file many files import); None: this analysis's own.
        self._parses = parses
        #: Scopes that hit the step budget: (row, name, why).
        self.over_budget: list[tuple[int, str, str]] = []
        #: The other files of the project, for calls to functions imported from them (None: this
        #: file is itself another file's callee, and answers from within itself).
        self.project: ProjectSummaries | None = None
        #: def line of a method -> (its segment, whether it calls other methods of `self`).
        self._method_bodies: dict[int, tuple[Segment, bool]] = {}
        #: This file's absolute path (None: not known, as for stdin without a name).
        self.path: str | None = None
        #: id of a parsed function -> the parameters it checks are on the CPU.
        self._host_checked: dict[int, set[str]] = {}
        #: id of a parsed function -> whether calling it runs none of it (generator, coroutine).
        self._not_run_memo: dict[int, bool] = {}
        #: class -> the parameters its ``__init__`` stores as attributes (see ``objects``).
        self.init_stores: dict[str, dict[str, tuple[int | None, str]]] = {}
        #: class -> the attributes its ``__init__`` allocates on a device parameter (``objects``).
        self.init_allocations: dict[str, dict[str, tuple[int | None, str, bool]]] = {}
        #: class -> its own ``__init__``, parsed with ``ast`` (None: none to read).
        self.init_trees: dict[str, ast.FunctionDef | None] = {}
        #: pattern -> whether the file's text matches it (``text_matches``).
        self._text_matches: dict[re.Pattern[str], bool] = {}
        #: def line -> the depth its interpretation in ``_parsed`` was made at.
        self._parsed_depth: dict[int, int] = {}
        #: def line -> the text of its segment (read to decide whether to parse it).
        self._sources: dict[int, str | None] = {}
        #: (def line, depth) -> whether it may copy non_blocking (``copy_text.may_copy``).
        self._may_copy: dict[tuple[int, int], bool] = {}
        #: The text without its ``class`` lines (``_constructed_here``), made on first need.
        self._without_class_lines: str | None = None

    def callers_of_copying_functions(self, limit: int = CALLERS_FOLLOWED) -> list[int]:
        """0-based ``def`` lines of functions that call a function of this file which copies
        one of its parameters non_blocking (the callers' arguments are then copied)."""
        names: set[str] = set()
        methods: set[str] = set()  # methods that copy a parameter or a field of `self` (`obj.to_device(dev)`)
        called: set[str] = set()  # classes whose objects copy what they are called with (`tap(t)`)
        for parsed in self.all_parsed():
            for interpreter in parsed.interpreters:
                events = interpreter.events
                if not isinstance(interpreter.scope, cst.FunctionDef):
                    continue
                method = interpreter.class_name is not None
                if events.parameter_copies or events.conditional_copies or (events.computed_copies and not method):
                    names.add(interpreter.scope.name.value)
                if events.decided_by_callers and method and self._constructed_here(interpreter.class_name):  # type: ignore[arg-type]
                    # A method: `obj.send(t)` on an object of its class, made in this file
                    # (resolved there; a class this file never constructs has no such object).
                    methods.add(interpreter.scope.name.value)
                if events.attribute_copies:
                    methods.add(interpreter.scope.name.value)
                if (
                    method
                    and interpreter.scope.name.value in objects.CALLED_METHODS
                    and (events.parameter_copies or events.attribute_copies)
                ):
                    called.add(interpreter.class_name)  # type: ignore[arg-type]
        if any(p.segment.whole_file for p in self.all_parsed()):
            return []  # the whole file was analysed: every caller already was
        if self.project is not None:
            names |= self.project.imported_copiers(self.names, self.text)
            methods |= self.project.imported_copier_methods(self.names, self.text)
        covered = _Ranges([(p.segment.start, p.segment.end) for p in self.all_parsed()])
        found: list[int] = []
        past: list[tuple[int, str]] = []  # (start, callee) of the callers past the bound
        seen: set[int] = set()
        patterns = [(name, rf"(?<![\w.]){_spelled(name)}[ \t]*\(") for name in sorted(names)]
        patterns += [(name, rf"\.{re.escape(name)}[ \t]*\(") for name in sorted(methods)]
        for name in sorted(called):
            # An object of the class called where it is made (`tap = Tap(); tap(t)`), or through
            # the attribute a method stores it in (`self.embed = Embedder(...)`; `self.embed(ids)`).
            patterns.append((name, rf"(?<![\w.]){re.escape(name)}[ \t]*\("))
            stored = rf"\bself\.(\w+)[ \t]*=[ \t]*{re.escape(name)}[ \t]*\("
            patterns += [(name, rf"\bself\.{a}[ \t]*\(") for a in sorted(set(re.findall(stored, self.text)))]
        for name, pattern in patterns:
            for match in re.finditer(pattern, self.text):
                line = self.scan.line_of(match.start())
                if re.match(r"[ \t]*(?:async[ \t]+)?def[ \t]", self.lines[line]):
                    continue  # the definition itself
                start = self.scan.enclosing_def(line)
                if start is None or start in self._parsed or start in seen:
                    continue
                if covered.hold(start):
                    continue  # inside a function already analysed
                seen.add(start)
                if len(found) < limit:
                    found.append(start)
                else:
                    past.append((start, name))  # a bound: generated code can call a helper thousands of times
        if past:
            # Not silently: the first caller left out is reported, with how many more are.
            start, callee = past[0]
            defined = re.match(r"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", self.lines[start])
            self.over_budget.append(
                (
                    start + 1,
                    defined.group(1) if defined else "?",
                    f"it calls `{callee}`, which copies its parameter; only the first {limit} such callers are "
                    f"followed, {len(past)} are not",
                )
            )
        return found

    def _constructed_here(self, class_name: str) -> bool:
        """The text calls ``class_name(`` somewhere other than in its ``class`` line."""
        if self._without_class_lines is None:
            self._without_class_lines = _CLASS_LINES.sub("", self.text)
        return re.search(rf"(?<![\w.]){re.escape(class_name)}[ \t]*\(", self._without_class_lines) is not None

    # ------------------------------------------------------------------ segments
    def parsed(self, start: int) -> Parsed | None:
        """The function whose ``def`` is on 0-based line ``start`` (outermost), interpreted."""
        if start in self._parsed and self._parsed_depth.get(start, 0) <= self.depth:
            return self._parsed[start]
        if start in self._running:
            return None  # a cycle: the function is being summarised right now
        if self._parses is not None and start in self._parses:
            segment, source, module = self._parses[start]  # type: ignore[misc]
        else:
            segment = segment_for(self.lines, start)
            source = segment_text(self.lines, segment)
            module = parse(source) if source is not None else None
            if self._parses is not None:
                self._parses[start] = (segment, source, module)
        if not isinstance(module, cst.Module):
            self._parsed[start] = None  # a cut that does not parse: no summary (unknown)
            return None
        return self.interpret(start, module, segment, source)

    def interpret(self, start: int, module: cst.Module, segment: Segment, source: str) -> Parsed | None:
        if start in self._parsed:
            if self._parsed_depth.get(start, 0) <= self.depth:
                return self._parsed[start]
            # Interpreted before as a callee, deeper, where summaries stop sooner: what it
            # finds itself (and what shallower callers ask of it) is worked out again here.
            old = self._parsed.pop(start)
            if old is not None:
                # The same tree again: copies already reported through it keep their positions.
                module, segment, source = old.module, old.segment, old.source
                for interpreter in old.interpreters:
                    self._scopes.pop(id(interpreter.scope), None)

        self._running.add(start)
        try:
            scopes: list[cst.FunctionDef | cst.Module] = [module]
            scopes += [
                s for s in iter_statements(list(module.body), into_functions=True) if isinstance(s, cst.FunctionDef)
            ]
            interpreters = []
            classes = _method_classes(module) if segment.whole_file else {}
            for scope in scopes:
                interpreter = self.scope_interpreter(scope, start, segment, classes.get(id(scope)))
                if interpreter is not None:
                    interpreters.append(interpreter)
        finally:
            self._running.discard(start)
        parsed = Parsed(module, segment, source, interpreters, file_lines=self.lines)
        self._parsed[start] = parsed
        self._parsed_depth[start] = self.depth
        return parsed

    def scope_interpreter(
        self, scope: cst.FunctionDef | cst.Module, start: int, segment: Segment, class_name: str | None = None
    ) -> Interpreter | None:
        """One scope, interpreted once (a nested def may be asked for before its turn)."""
        from pinlint.analysis.budget import BudgetExceeded

        key = id(scope)
        if key in self._scopes:
            return self._scopes[key]
        if key in self._running_scopes:
            return None  # a closure calling itself: no summary
        self._running_scopes.add(key)
        interpreter = self._make(scope, EventSink(self.listened), self)
        interpreter.class_name = self.scan.class_at(segment.start) if not segment.whole_file else class_name
        interpreter.segment_start = start
        interpreter.segment = segment
        try:
            interpreter.run()
        except BudgetExceeded as exc:
            if interpreter.timed_out:
                raise
            # Its values past the budget are unknown: drop what it found.
            name = scope.name.value if isinstance(scope, cst.FunctionDef) else "<module>"
            self.over_budget.append((segment.start + 1 if not segment.whole_file else 0, name, str(exc)))
            interpreter = None
        finally:
            self._running_scopes.discard(key)
        self._scopes[key] = interpreter
        return interpreter

    def all_parsed(self) -> list[Parsed]:
        return [p for p in self._parsed.values() if p is not None]

    # ------------------------------------------------------------------ summaries
    def attribute(self, evaluator: Evaluator, key: str) -> Value | None:
        """Every value the class's methods assign to ``self.<attr>``, or None (unknown)."""
        class_name = getattr(evaluator, "class_name", None)
        if class_name is None or self.depth >= MAX_DEPTH:
            return None
        return self.class_attribute(class_name, key.split(".", 1)[1], getattr(evaluator, "segment_start", None))

    def class_attribute(self, class_name: str, attr: str, asking: int | None = None) -> Value | None:
        """Every value the methods of ``class_name`` (of this file) assign to ``self.<attr>``, or
        None (unknown). ``asking``: the def line of the function that asks, if one of them."""
        if self.depth >= MAX_DEPTH:
            return None
        key = f"self.{attr}"
        lines = self.scan.attribute_lines(class_name, attr)
        if lines is None or self._registered_by_foreign_base(class_name, attr):
            return None
        if not lines:
            return self._inherited_attribute(class_name, attr)
        values: list[Value] = []
        for line in lines:
            value = self._assigned(line, key, asking)
            if value is None:
                return None  # one assignment we cannot follow: the attribute is unknown
            values.append(value)
        if not values:
            return None
        union = frozenset().union(*values)
        if len(values) > 1 and {o.kind for o in union} >= {Kind.PINNED, Kind.PAGEABLE}:
            # Pinned by one method, pageable by another (`pin()` replacing the buffer): which
            # ran last before the copy is not visible.
            return None
        return union

    def attribute_elements(self, evaluator: Evaluator, key: str, suffix: str) -> Value | None:
        """The elements of the list (``.[]``) or dict (``.{}``) that the class's methods store in
        ``self.<attr>`` and fill (displays, comprehensions, ``.append``), when nothing else in
        the file can change what it holds; else None (unknown)."""
        class_name = getattr(evaluator, "class_name", None)
        if class_name is None or self.depth >= MAX_DEPTH:
            return None
        attr = key.split(".", 1)[1]
        lines = self.scan.attribute_lines(class_name, attr)
        if not lines or self._registered_by_foreign_base(class_name, attr):
            return None
        starts = {self.scan.enclosing_def(line) for line in lines}
        if None in starts or getattr(evaluator, "segment_start", None) in starts:
            # At class level; or the asking method stores it too (its own walk knows what).
            return None
        if not self.scan.elements_only_read(class_name, attr, lines, starts):  # type: ignore[arg-type]
            return None
        values: list[Value] = []
        for start in sorted(starts):  # type: ignore[type-var]
            parsed = self._deeper(start)  # type: ignore[arg-type]
            if parsed is None:
                return None
            found: Value | None = None
            for interpreter in parsed.interpreters:
                if key in interpreter.lists_changed:
                    return None  # an item replaced or removed there
                elements = interpreter.attribute_elements.get(key + suffix)
                if elements is not None:
                    found = (found or frozenset()) | elements
            if found is None:
                return None  # stored something other than a list (dict) it builds: unknown
            values.append(found)
        return frozenset().union(*values) or None

    def _inherited_attribute(self, class_name: str, attr: str) -> Value | None:
        """``self.<attr>`` that no class of this file's family assigns: what the methods of its
        one base class from another project file assign (`class Sub(Base)`, `Base.__init__`
        setting `self.cpu_buf`), or None (unknown)."""
        found = self.foreign_base(class_name)
        if found is None:
            return None
        owner, base_name = found
        return self._one_level_deeper(owner, lambda: owner.class_attribute(base_name, attr))

    def foreign_base(self, class_name: str, beside_modules: bool = True) -> tuple[FileSummaries, str] | None:
        """The summaries of the other project file that defines the one base of ``class_name``'s
                family (in this file) not defined here, and its name there; None when there is none, or
                several (a mixin may define what the other defines), or it is not one class of a project
                file. ``object`` does not count, nor, with ``beside_modules``, ``torch.nn.Module`` (it sets
        no attribute a project class names; its methods may be the ones a call runs)."""
        if self.project is None:
            return None
        here = {c.name for c in self.scan.classes()}
        elsewhere: set[str] = set()
        for cls in self.scan.family(class_name) or ():
            # `nn.Module`, resolved through the imports.
            torch_modules = objects.module_bases(self, cls) if beside_modules else set()
            for short, written in zip(cls.bases, cls.written):
                if short not in here and short not in torch_modules and written != "object":
                    elsewhere.add(written.split("[", 1)[0].strip())
        if len(elsewhere) != 1:
            return None
        [base] = elsewhere
        if not base.isidentifier():
            return None  # `mixins.Base`, `metaclass=...`: not followed
        target = self.project.target(self.names, cst.Name(base))
        foreign = self.project.file(target[0]) if target is not None and target[0] != self.path else None
        if foreign is None or len(foreign.file.scan.top_level_classes(target[1])) != 1:  # type: ignore[index]
            return None
        return foreign.summaries, target[1]  # type: ignore[index]

    def _registered_by_foreign_base(self, class_name: str, attr: str) -> bool:
        """A base class imported from another project file may register ``attr`` as a buffer or
        parameter: ``nn.Module.__setattr__`` then stores this file's ``self.<attr> = ...`` into
        it, and ``module.to(device)`` moves it, which no assignment here shows. (A base that
        is not resolved to a project file, e.g. ``nn.Module``, registers nothing by name.)"""
        if self.project is None:
            return False
        here = {c.name for c in self.scan.classes()}
        # The text of a base is not always a name: `Base[T]` is `Base`; `metaclass=ABCMeta` is none.
        named = {b.split("[", 1)[0].strip() for c in self.scan.family(class_name) or () for b in c.bases}
        bases = {b for b in named if b.isidentifier() and b not in here}
        for base in sorted(bases):
            target = self.project.target(self.names, cst.Name(base))
            read = self.project.modules.read(target[0]) if target is not None else None
            if read is not None and read.scan.registers_module_state(attr):
                return True
        return False

    def _assigned(self, line: int, key: str, current: int | None) -> Value | None:
        start = self.scan.enclosing_def(line)
        if start is None:
            return None  # at class level: not a method's assignment
        if start == current:
            # The function asking assigns it too: its own walk knows what it assigned on each
            # path; another call's assignment would be a guess.
            return None
        parsed = self._deeper(start)
        if parsed is None:
            return None
        value: Value = frozenset()
        for interpreter in parsed.interpreters:
            value = value | interpreter.attribute_values.get(key, frozenset())
        return value or None  # not assigned where the scan saw it (a string?): unknown

    def _deeper(self, start: int) -> Parsed | None:
        self.depth += 1
        try:
            return self.parsed(start)
        finally:
            self.depth -= 1

    def _function(
        self, evaluator: Evaluator, call: cst.Call, wants: TextTest | None = None
    ) -> tuple[Parsed | None, cst.FunctionDef] | None:
        """The function ``call`` runs, parsed; ``wants``: a test of its text that must hold for
        the answer to matter (else None, and it is not parsed)."""
        found = self._find_function(evaluator, call, wants)
        if found is None:
            return None
        parsed, function = found
        # A decorator may replace what it returns (`@wrap` pinning the result): a parsed segment
        # starts at its `def`, so the decorators above it are read from the text.
        lines = parsed.file_lines if parsed is not None else None
        accept = self._pass_through(function)
        if not transparent(function, accept) or (
            parsed is not None and not transparent_text(lines, parsed.segment.start, accept)
        ):
            return None
        return found

    def _pass_through(self, function: cst.FunctionDef) -> Callable[[str], bool]:
        """Whether a decorator of ``function`` (a plain name, as written above it) is a project
        function that passes the call through (see ``decorators``): defined in the function's
        module, or imported into it from a project module by name."""

        def accept(name: str) -> bool:
            owner = self.project.owner(function) if self.project is not None else None
            text, names, scan = (
                (self.text, self.names, self.scan)
                if owner is None
                else (
                    owner.file.text,
                    owner.names,
                    owner.file.scan,
                )
            )
            if passes_through(text, name):
                return True  # defined in the same module
            source = names.from_imports.get(name)
            if self.project is None or source is None or source == AMBIGUOUS_IMPORT:
                return False
            level, module, original = source
            if (not level and module.split(".", 1)[0] in LIBRARY_ROOTS) or not scan.bound_only_by_import(name):
                return False  # a library's decorator (only known ones are followed), or rebound
            modules = self.project.modules
            if owner is not None:
                # Resolved from the decorated function's file, as its own import is.
                modules = ModuleFiles(modules.root, owner.file.path, modules.overlay)
            path = modules.module_file(level, module)
            read = modules.read(path) if path is not None else None
            if modules is not self.project.modules:
                self.project.modules.consulted.update(modules.consulted)
            return read is not None and passes_through(read.text, original)

        return accept

    def _find_function(
        self, evaluator: Evaluator, call: cst.Call, wants: TextTest | None = None
    ) -> tuple[Parsed | None, cst.FunctionDef] | None:
        """The function of this file that ``call`` calls: a nested def, ``self.m`` of the class,
        or a module-level ``f``; None when not exactly one is found."""
        func = call.func
        if type(func) in (cst.Name, cst.Attribute) and objects.is_object(evaluator.value_of(func)):
            # `tap(dev)`, `self.embed(ids)` of an object of a project class: its `__call__`, or
            # the `forward` of a `torch.nn.Module` (which its `__call__` runs).
            return self._parsed_function(objects.called_method(self, evaluator.value_of(func)), wants)
        if isinstance(func, cst.Attribute) and objects.is_object(evaluator.value_of(func.value)):
            # `pool.alloc(...)` on an object of a project class: that class's method.
            return self._parsed_function(objects.method(self, evaluator.value_of(func.value), func.attr.value), wants)
        if isinstance(func, cst.Name):
            local = evaluator.local_functions.get(func.value)
            if local is not None:
                value = evaluator.env.get(func.value)
                if value is None or not any(o.node is local for o in value):
                    return None  # rebound since: not that function any more
                return None, local
            if func.value in evaluator.env:
                return None  # a local or parameter named like a function
            starts = [line for line, indented in self.scan.defs(func.value) if not indented]
            if not starts and self.project is not None:
                return self._foreign(func, _passes_host(evaluator, call), wants)
            if starts and (
                self.scan.rebinds(func.value)
                or self.scan.reassigned(func.value)
                or func.value in self.names.from_imports
                or func.value in self.names.modules
            ):
                # Bound again in module code (`make = make_pinned` under an `if`, an import of
                # that name, `global make` in a function): which function runs is not known.
                return None
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value not in evaluator.env
            and func.value.value not in self.names.from_imports
            and func.value.value not in self.names.modules
            and objects.class_of_file(self, func.value.value) is not None
        ):
            # `Batch.from_list(...)`: a classmethod (or staticmethod) of a class of this file.
            starts = objects.class_level_method(self, func.value.value, func.attr.value)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value != "self":
            if self.project is None or func.value.value in evaluator.env:
                return None  # a local object's method, not a module's function
            return self._foreign(func, _passes_host(evaluator, call), wants)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and self.project is not None:
            # `pkg.helpers.f(...)` after `import pkg.helpers` (the project resolves the chain).
            root = dotted(func.value)
            if root is None or root.split(".", 1)[0] in evaluator.env:
                return None  # not a module's chain, or a local object's attribute
            return self._foreign(func, _passes_host(evaluator, call), wants)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            class_name = getattr(evaluator, "class_name", None)
            family = self.scan.family(class_name) if class_name else None
            if family is None:
                return None
            methods = [line for line, indented in self.scan.defs(func.attr.value) if indented]
            starts = [line for line in methods if any(c.start < line < c.end for c in family)]
        else:
            return None
        if len(starts) != 1:
            return None  # not found, or overloaded / defined on several paths
        if not self.worth_parsing(starts[0], wants):
            return None
        parsed = self._deeper(starts[0])
        if parsed is None:
            return None
        top = next((s for s in parsed.module.body if isinstance(s, cst.FunctionDef)), None)
        return (parsed, top) if top is not None else None

    def _parsed_function(
        self, found: tuple[FileSummaries, int] | None, wants: TextTest | None
    ) -> tuple[Parsed | None, cst.FunctionDef] | None:
        """The function at (its file's summaries, 0-based def line), parsed one level deeper, when
        its text passes ``wants``."""
        if found is None:
            return None
        owner, start = found
        if not owner.worth_parsing(start, wants):
            return None
        parsed = self.parsed_in(owner, start)
        if parsed is None:
            return None
        top = next((s for s in parsed.module.body if isinstance(s, cst.FunctionDef)), None)
        return (parsed, top) if top is not None else None

    def _foreign(
        self, func: cst.BaseExpression, passes_host: bool = False, wants: TextTest | None = None
    ) -> tuple[Parsed | None, cst.FunctionDef] | None:
        """A function imported from another file of the project, parsed there. ``passes_host``:
        the call hands it a host tensor, so a function that only computes on its parameters
        (``return a[1:] - a[:-1]``) is followed too."""
        assert self.project is not None
        found = self.project.function(self.names, func, passes_host)
        return self._parsed_function((found[0].summaries, found[1]) if found is not None else None, wants)

    def worth_parsing(self, start: int, wants: TextTest | None) -> bool:
        """Whether the function at ``start`` passes ``wants`` (always, once it is parsed: then
        the answer costs nothing, and ``wants`` only ever skips what would be no answer)."""
        if wants is None or start in self._parsed:
            return True
        if wants is MAY_COPY:
            if may_copy(self.lines, self.text, self.scan, start, self._may_copy):
                return True
            # Or it hands its parameters on to a copy in another module (a wrapper).
            return self.project is not None and self.path is not None and self.project.forwards(self.path, start)
        if start not in self._sources:
            self._sources[start] = segment_text(self.lines, segment_for(self.lines, start))
        source = self._sources[start]
        return source is not None and wants(source)

    def parsed_in(self, owner: FileSummaries, start: int) -> Parsed | None:
        """The function at ``start`` of ``owner`` (this file's summaries or another file's),
        one level deeper than this request."""
        if owner is self:
            return self._deeper(start)
        return self._one_level_deeper(owner, lambda: owner.parsed(start))

    def _one_level_deeper(self, owner: FileSummaries, ask: Callable[[], T]) -> T:
        """``ask()`` of another file's summaries, one level deeper than this request (the depth
        bound spans files)."""
        saved = owner.depth
        owner.depth = max(saved, self.depth + 1)
        try:
            return ask()
        finally:
            owner.depth = saved

    def _interpreter_of(
        self, parsed: Parsed | None, function: cst.FunctionDef, evaluator: Evaluator
    ) -> Interpreter | None:
        if parsed is None:  # a nested def of the asking function's segment
            return self.scope_interpreter(function, evaluator.segment_start, evaluator.segment)
        return next((i for i in parsed.interpreters if i.scope is function), None)

    def _returning_callee(self, evaluator: Evaluator, call: cst.Call) -> tuple[cst.FunctionDef, Interpreter] | None:
        """The function ``call`` runs, interpreted, when what it returns is what the call gives
        (not past the depth bound; not a generator or a coroutine, whose call makes an object)."""
        if self.depth >= MAX_DEPTH:
            return None
        if evaluator.default_device_unknown:
            return None  # `with torch.device("cuda"): build(n)`: its factories allocate there
        found = self._function(evaluator, call, _may_return)
        if found is None or self._not_run(*found):
            return None
        interpreter = self._interpreter_of(*found, evaluator)
        return (found[1], interpreter) if interpreter is not None else None

    def call(self, evaluator: Evaluator, call: cst.Call) -> Value | None:
        """What the called function of this file returns (the union of its returns)."""
        callee = self._returning_callee(evaluator, call)
        if callee is None or not callee[1].returns:
            return None
        passed = _arguments(evaluator, callee[0], call, self)
        # What it returns of its parameters (`return t.contiguous()`, `return a[1:] - a[:-1]`),
        # replayed on what this call passes; None where an argument is not visible here.
        value = replayed(frozenset().union(*callee[1].returns), passed)
        if value is None:
            return None
        if {o.kind for o in value} >= {Kind.PINNED, Kind.PAGEABLE}:
            return None  # pinned or not depending on how it is called: the caller's business
        return value

    def call_yields(self, evaluator: Evaluator, call: cst.Call) -> Value | None:
        """What a loop over ``call`` of a generator function takes: the union of what its
        ``yield`` statements give, replayed on the call's arguments. None when the callee is no
        plain generator (a coroutine, a decorated or ``async`` one), yields with ``yield from``, or
        gives pinned or pageable tensors depending on how it is called."""
        if self.depth >= MAX_DEPTH or evaluator.default_device_unknown:
            return None  # (under a default device: see `_returning_callee`)
        found = self._function(evaluator, call, _may_yield)
        if found is None or found[1].asynchronous is not None or not self._not_run(*found):
            return None  # not a generator (its call's result is what it returns)
        interpreter = self._interpreter_of(*found, evaluator)
        if interpreter is None or interpreter.yields_unknown or not interpreter.yields:
            return None
        value = replayed(frozenset().union(*interpreter.yields), _arguments(evaluator, found[1], call, self))
        if value is None or {o.kind for o in value} >= {Kind.PINNED, Kind.PAGEABLE}:
            return None  # see `call`
        return value

    def call_elements(self, evaluator: Evaluator, call: cst.Call, count: int | None) -> list[Value] | None:
        """What unpacking the called function's result into ``count`` names gives each name,
        when every return of the function is a tuple display of that length; else None.
        ``count=None``: the items of the tuple it returns, whatever its length (all the same)."""
        callee = self._returning_callee(evaluator, call)
        if callee is None or not callee[1].tuple_returns:
            return None
        shapes = callee[1].tuple_returns
        if count is None and shapes[0] is not None:
            count = len(shapes[0])
        if any(shape is None or len(shape) != count for shape in shapes):
            return None  # a return that is not a tuple display of that length: unknown parts
        passed = _arguments(evaluator, callee[0], call, self)
        elements: list[Value] = []
        for i in range(count):
            value = replayed(frozenset().union(*(shape[i] for shape in shapes)), passed)  # type: ignore[index]
            if value is None or {o.kind for o in value} >= {Kind.PINNED, Kind.PAGEABLE}:
                value = UNKNOWN  # see `call`
            elements.append(value)
        return elements

    def call_containers(self, evaluator: Evaluator, call: cst.Call) -> dict[str, Value] | None:
        """What the list, tuple or dict the called function returns holds (element keys as
        ``Evaluator.set_elements`` keeps them), when every return of it is one whose elements
        are known; a key only where every return has it. None otherwise."""
        callee = self._returning_callee(evaluator, call)
        if callee is None or not callee[1].container_returns:
            return None
        shapes = callee[1].container_returns
        if any(shape is None for shape in shapes):
            return None  # a return that is not a container we know
        passed = _arguments(evaluator, callee[0], call, self)
        common = set.intersection(*(set(shape) for shape in shapes))  # type: ignore[arg-type]
        out: dict[str, Value] = {}
        for suffix in sorted(common):
            value = replayed(frozenset().union(*(shape[suffix] for shape in shapes)), passed)  # type: ignore[index]
            if value is None:
                value = UNKNOWN  # an argument not visible here
            out[suffix] = value
        return out or None

    def _not_run(self, parsed: Parsed | None, function: cst.FunctionDef) -> bool:
        if function.asynchronous is not None:
            return True
        if parsed is not None and "yield" not in parsed.source:
            return False  # no `yield` in the text it was parsed from: not a generator (and no walk)
        key = id(function)
        if key not in self._not_run_memo:
            self._not_run_memo[key] = _not_run_by_the_call(function)
        return self._not_run_memo[key]

    def checked_on_host(self, evaluator: Evaluator, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments of ``call`` that the called function checks are on the CPU before it
        can return (``if t.device.type != "cpu": raise ...`` first thing): past the call, they are."""
        if self.depth >= MAX_DEPTH:
            return []
        found = self._function(evaluator, call, _may_check_on_host)
        if found is None:
            return []
        function = found[1]
        if self._not_run(*found):
            return []  # its checks run later, if ever
        checked = self._host_checked.get(id(function))
        if checked is None:
            checked = self._host_checked[id(function)] = host_checked_parameters(function)
        arguments = (argument_for(function, call, name) for name in checked)
        return [argument for argument in arguments if argument is not None]

    def host_device_constant(self, name: str) -> bool:
        """``name`` is this module's constant for the host device (``CPU = torch.device("cpu")``),
        or one it imports from a project module, never bound again here."""
        if self.scan.host_device_constant(name):
            return True
        return (
            self.project is not None
            and name in self.names.from_imports
            and name not in self.names.ambiguous_modules  # `import x as name` too
            and self.project.imported_host_device_constant(self.names, name)
            and self.scan.bound_only_by_import(name)  # (after the module's answer: most names are no constant)
        )

    def text_matches(self, pattern: re.Pattern[str]) -> bool:
        """Whether the file's text matches ``pattern`` (one of the cheap over-approximations
        in ``text_patterns``)."""
        found = self._text_matches.get(pattern)
        if found is None:
            found = self._text_matches[pattern] = pattern.search(self.text) is not None
        return found

    def matched_around(self, pattern: re.Pattern[str]) -> bool:
        """``pattern`` matches code that runs before this file's: a package ``__init__.py`` above
        it, or a project module it (or such a package) imports."""
        return self.project is not None and bool(self.path) and self.project.matched_around(self.path, pattern)  # type: ignore[arg-type]

    def module_constant_truth(self, name: str) -> bool | None:
        """The truth of this module's literal constant ``name`` (``USE_STAGE = True``), if it is one."""
        return self.scan.module_constant_truth(name)

    def is_method(self, evaluator: Evaluator, name: str) -> bool:
        """``name`` is a method of the class of ``evaluator``'s function (one def in its family)."""
        class_name = getattr(evaluator, "class_name", None)
        return class_name is not None and self.scan.method_start(class_name, name) is not None

    def referenced_methods(self, evaluator: Evaluator) -> frozenset[str]:
        """The methods of ``evaluator``'s class that the file names without calling them."""
        class_name = getattr(evaluator, "class_name", None)
        return self.scan.referenced_methods(class_name) if class_name is not None else frozenset()

    def method_may_assign(self, evaluator: Evaluator, method: str, attr: str) -> bool:
        """Whether ``self.<method>()``, called by ``evaluator``'s function, may assign
        ``self.<attr>``: yes unless the method is one def of the class family whose lines hold
        no ``self.<attr> =`` and that calls no other method of ``self`` (which might)."""
        class_name = getattr(evaluator, "class_name", None)
        if class_name is None:
            return True  # not a method of a class of this file: anything may happen
        lines = self.scan.attribute_lines(class_name, attr)
        if lines is None:
            return True  # set in ways the text scan does not follow
        start = self.scan.method_start(class_name, method)
        if start is None:
            return True  # inherited from elsewhere, or defined twice: which one runs is unknown
        if start not in self._method_bodies:
            body = segment_for(self.lines, start)
            calls = _CALLS_SELF_METHOD.search("".join(self.lines[body.start + 1 : body.end])) is not None
            self._method_bodies[start] = (body, calls)
        body, calls_others = self._method_bodies[start]
        if any(body.start <= line < body.end for line in lines):
            return True
        if not calls_others:
            return False
        # It calls other methods: one of them may be any method that assigns the attribute,
        # other than the caller itself.
        caller: Segment | None = getattr(evaluator, "segment", None)
        if caller is None or caller.whole_file:
            return True
        return any(not caller.start <= line < caller.end for line in lines)

    def forward_fields(self, evaluator: Evaluator, call: cst.Call) -> None:
        """``obj.to_device(dev)`` where the method copies ``self.<field>`` non_blocking and
        ``obj``'s construction put a pageable tensor in that field: that tensor is copied."""
        if self.depth >= MAX_DEPTH or type(call.func) not in (cst.Name, cst.Attribute):
            return
        holder = _receiver_of(evaluator, call)
        if holder is None:
            return
        receiver = evaluator.value_of(holder)
        if not evaluator.fields_trusted(holder):
            return  # its fields may have been replaced in ways not followed
        # What this function stored in the object's attributes before the call (`tap.valid = t`).
        stored = evaluator.stored_fields(holder) if objects.is_object(receiver) else {}
        if not objects.is_object(receiver) or not any(
            o.kind is Kind.PAGEABLE or o.handle == "loader"
            for value in [*(v for origin in receiver for _, v in origin.fields), *stored.values()]
            for o in value
        ):
            return  # no field is known to hold a pageable tensor (or a data loader): nothing to report
        callee = self._copying_callee(evaluator, call)
        if callee is None:
            return
        function, interpreter = callee
        for copy in interpreter.events.attribute_copies:
            if copy.attribute.endswith(ITEM_PART):
                # A part of a batch of the data loader the object holds in that field.
                walked = self._field_batches(evaluator, receiver, stored, copy.attribute[: -len(ITEM_PART)])
                if walked is not None and _copies_here(evaluator, function, call, copy):
                    _copied_through(evaluator, call, holder, walked, copy)
                continue
            if copy.attribute in stored:
                held = [stored[copy.attribute]]  # stored here, just before the call
            elif any(objects.field_replaced(self, origin.class_file, copy.attribute) for origin in receiver):
                continue  # `obj.plan = pinned` (or a setattr) somewhere: not what was constructed
            else:
                held = [dict(origin.fields).get(copy.attribute) for origin in receiver]
            if any(value is None for value in held) or not _copies_here(evaluator, function, call, copy):
                continue  # a path's object does not say what it holds there; or no copy here
            _copied_through(evaluator, call, holder, frozenset().union(*held), copy)  # type: ignore[arg-type]

    def _field_batches(
        self, evaluator: Evaluator, receiver: Value, stored: dict[str, Value], field: str
    ) -> Value | None:
        """The batches of the data loader that the object ``receiver`` holds in ``field`` (stored
        there just before the call, or by its construction), when it pins nothing and was handed
        to no other code than that construction; None otherwise."""
        if field in stored:
            loader = stored[field]
            return batches(loader) if evaluator.walked_loader(loader) else None
        found: list[Value] = []
        for origin in receiver:
            loader = dict(origin.fields).get(field)
            if loader is None or objects.field_replaced(self, origin.class_file, field):
                return None  # not known, or `obj.loader = other` somewhere
            if objects.class_file_matches(self, origin.class_file, LOADER_CHANGING_TEXT):
                return None  # the class's file may set its `pin_memory` or `collate_fn`
            construction = origin.node
            handed = [id(a.value) for a in construction.args] if type(construction) is cst.Call else []
            if not evaluator.walked_loader(loader, also=handed):
                return None  # pins, may be changed by other code it was handed to, or no loader
            found.append(batches(loader))
        return frozenset().union(*found) if found else None

    def _copying_callee(
        self, evaluator: Evaluator, call: cst.Call, wants: TextTest | None = None
    ) -> tuple[cst.FunctionDef, Interpreter] | None:
        """The function ``call`` runs and its interpretation, for the copies it makes."""
        found = self._function(evaluator, call, wants)
        if found is None:
            return None
        interpreter = self._interpreter_of(*found, evaluator)
        return (found[1], interpreter) if interpreter is not None else None

    def forward_arguments(self, evaluator: Evaluator, call: cst.Call) -> None:
        """The callee copies a parameter non_blocking: the caller's argument for it is copied."""
        if self.depth >= MAX_DEPTH:
            return
        arguments = [evaluator.value_of(a.value) for a in call.args]
        for a in call.args:
            if type(a.value) in _CONTAINER_NODES:
                # A list or dict handed over: what it holds, for a callee that walks it.
                arguments.extend((evaluator.held_by_argument(a.value) or {}).values())
        for a in call.args:
            # An object whose fields hold what a callee may copy (`upload(batch)`).
            arguments.extend(evaluator.stored_fields(a.value).values())
            arguments.extend(value for o in evaluator.value_of(a.value) for _, value in o.fields)
        passes_true = any(is_true(value) for value in arguments)
        passes_parameter = SinkHit in self.listened and any(o.parameter for value in arguments for o in value)
        # (A data loader that pins nothing gives pageable batches to a callee that walks it.)
        pageable = any(o.kind is Kind.PAGEABLE or o.handle == "loader" for value in arguments for o in value)
        if not passes_true and not pageable:
            if not passes_parameter:
                return  # nothing pageable, no `True` flag and no parameter is passed: no copy to report
            # Only a parameter of this function is handed on: worth following only where the
            # callee (or a function of its file it calls) copies something non_blocking.
            callee = self._copying_callee(evaluator, call, MAY_COPY)
        else:
            callee = self._copying_callee(evaluator, call)
        if callee is None:
            return
        function, interpreter = callee
        self._computed_copies(evaluator, function, call, interpreter)
        for conditional in interpreter.events.conditional_copies if passes_true else []:
            # `self._plan(n, non_blocking)` with `non_blocking=True` here, and in `_plan` a local
            # pageable tensor copied with `non_blocking=non_blocking`.
            passed = argument_for(function, call, conditional.flag)
            if passed is None or not is_true(evaluator.value_of(passed)):
                continue
            # The callee's parameters are its callers' business; the rest (a device value on
            # some path included, which `copy` declines) as the copy saw it.
            local = frozenset(o for o in conditional.source if not o.parameter)
            if any(o.kind is Kind.PAGEABLE for o in local):
                evaluator.events.copy(
                    conditional.source_node,
                    local,
                    conditional.sink,
                    conditional.api,
                    conditional.device,
                    conditional.copy_dst,
                    conditional.sink_statement,
                    conditional.loops,
                )
        for copy in interpreter.events.parameter_copies:
            name, items = _item_parameter(copy.parameter)
            name, _, field = name.partition(".")
            argument = argument_for(function, call, name)
            if argument is None:
                continue  # not passed here (its default is used)
            if (
                passes_parameter
                and len(copy.chain) < MAX_CHAIN
                and not field
                and not copy.unless_host
                and not copy.when
            ):
                # (A field of a parameter, or a copy another parameter may rule out, handed on:
                # not followed further up.)
                _forward(evaluator, function, call, argument, copy, items)
            if not _copies_here(evaluator, function, call, copy):
                continue  # this call makes it blocking, a dtype cast, or a copy to the host
            if copy.unless_host and _host_passed_for(evaluator, function, call, copy.unless_host):
                continue  # `if t.device == home: return t` with the host for `home`: no copy
            if any(_truth_passed_for(function, call, name) is (not truth) for name, truth in copy.when):
                continue  # `if asynchronous:` and the call passes `False` (or leaves a false default)
            if field:
                # The callee copies a field of the object: what this call's object holds there
                # (not when the call hands the same object twice: the other parameter may change it).
                key = dotted(argument)
                if key is not None and sum(dotted(a.value) == key for a in call.args) > 1:
                    continue
                value = self.field_of_argument(evaluator, argument, field)
                if value is None:
                    continue  # not an object whose field is known here
            elif items:
                # The callee walks the list (dict) and copies its items: those the caller put in.
                value = _caller_items(evaluator.held_by_argument(argument) or {}, items)
                passed_value = evaluator.value_of(argument)
                if value is None and items in ("[]", ITEM_PART) and evaluator.walked_loader(passed_value, argument):
                    value = batches(passed_value)  # the batches of a data loader that pins nothing
                if (
                    value is None
                    and loaded_items(passed_value, items in ("{}", KEY_TESTED_ITEMS))
                    and (
                        type(argument) is cst.Call
                        or type(argument) is cst.Name
                        and only_read(evaluator.scope, argument.value, handed=call)
                    )
                ):
                    # What a loader read (`torch.load(f, map_location="cpu")`, a data loader's
                    # batch), only read here (or handed straight on, `copy_all(load(f))`: no
                    # other name for it here): the items the callee walks are pageable host tensors.
                    value = passed_value
                if value is None:
                    continue  # not a container whose items this function knows
            else:
                value = evaluator.value_of(argument)
            _copied_through(evaluator, call, argument, value, copy)

    def field_of_argument(self, evaluator: Evaluator, argument: cst.BaseExpression, field: str) -> Value | None:
        """What the object passed as ``argument`` holds in ``field``: what this function stored
        there (``batch.ids = t``), else the field its construction filled (or its class's
        methods assign); None when not known."""
        if not evaluator.fields_trusted(argument):
            return None  # its fields may have been replaced in ways not followed
        stored = evaluator.stored_fields(argument)
        if field in stored:
            return stored[field]
        return objects.attribute(self, evaluator.value_of(argument), field)

    def _computed_copies(
        self, evaluator: Evaluator, function: cst.FunctionDef, call: cst.Call, interpreter: Interpreter
    ) -> None:
        """The callee copies a tensor it computes from its parameters (``(x * 2).to(dev,
        non_blocking=True)``): with the host tensors this call passes, that result is new pageable
        memory, born in the callee."""
        if not interpreter.events.computed_copies:
            return
        passed = _arguments(evaluator, function, call, self)
        for copy in interpreter.events.computed_copies:
            if not _copies_here(evaluator, function, call, copy):
                continue  # this call makes it blocking, a dtype cast, or a copy to the host
            value = replayed(copy.computed, passed)
            if value is None or Kind.PAGEABLE not in {o.kind for o in value}:
                continue  # an argument not visible here, or nothing computed on the host
            if {o.kind for o in value} & {Kind.PINNED, Kind.DEVICE}:
                continue  # on a device or pinned on some path: the caller's business (see `call`)
            _copied_through(evaluator, call, call, value, copy)

    def positions_for(self, parsed: Parsed) -> Positions:
        if parsed.positions is None:
            parsed.positions = Positions(parsed.module, parsed.segment, self.lines, parsed.source)
        return parsed.positions


def transparent(function: cst.FunctionDef, accept: Callable[[str], bool] | None = None) -> bool:
    """Every decorator of ``function`` leaves what it returns as the body returns it (a cache,
    ``staticmethod``, ``torch.no_grad()``, or a plain name ``accept`` says passes the call
    through): its summary is what calling it gives."""
    for decorator in function.decorators:
        expression = decorator.decorator
        name = dotted(expression.func if isinstance(expression, cst.Call) else expression)
        if name is None:
            return False
        if name in torch_api.TRANSPARENT_DECORATORS:
            continue
        if isinstance(expression, cst.Name) and accept is not None and accept(name):
            continue
        return False
    return True


def transparent_text(lines: list[str] | None, start: int, accept: Callable[[str], bool] | None = None) -> bool:
    """The decorators written above the ``def`` on 0-based line ``start`` are transparent
    ones (one line each); anything else above it that is not code of its own is not."""
    if lines is None:
        return True
    indent = len(lines[start]) - len(lines[start].lstrip())
    row = start - 1
    while row >= 0:
        text = lines[row].strip()
        if text.startswith("#"):
            row -= 1
            continue  # a comment between decorators, or above the def
        if not text:
            return True  # a blank line: nothing decorates the def
        if not text.startswith("@"):
            if not text.endswith((")", ",", "(", "\\")):
                return True  # not a decorator: the def is undecorated
            # Perhaps the end of a decorator's arguments: the line that starts it is the first
            # one above at the def's indentation (or less: then there is none).
            if text.startswith((")", "]", "}")):
                row -= 1  # the closing bracket itself
            while row >= 0 and (not lines[row].strip() or len(lines[row]) - len(lines[row].lstrip()) > indent):
                row -= 1
            if row < 0 or len(lines[row]) - len(lines[row].lstrip()) < indent:
                return True
            text = lines[row].strip()
            if not text.startswith("@"):
                return not text.startswith((")", "]", "}"))  # a statement of its own, or unreadable
        name = text[1:].split("(", 1)[0].split("#", 1)[0].strip()
        plain = name.isidentifier() and text[1:].split("#", 1)[0].strip() == name
        if name not in torch_api.TRANSPARENT_DECORATORS and not (plain and accept is not None and accept(name)):
            return False
        row -= 1
    return True


def _copied_through(
    evaluator: Evaluator,
    call: cst.Call,
    node: cst.BaseExpression,
    value: Value,
    copy: ParameterCopy | AttributeCopy,
) -> None:
    """The callee's ``copy`` copies ``value`` (``node`` here), handed over by ``call``."""
    chain, known = (copy.chain, copy.device_known) if isinstance(copy, ParameterCopy) else ((), True)
    evaluator.events.copy(
        node,
        value,
        copy.sink,
        copy.api,
        copy.device,
        copy.copy_dst,
        copy.sink_statement,
        (),
        via=call,
        chain=chain,
        device_known=known,
    )


def _forward(
    evaluator: Evaluator,
    function: cst.FunctionDef,
    call: cst.Call,
    argument: cst.BaseExpression,
    copy: ParameterCopy,
    items: str = "",
) -> None:
    """``call`` hands ``argument``, a parameter of the function analysed (or computed from one),
    to ``function``, which copies it (``copy``): that parameter is copied too, when the caller's
    own callers pass a pageable tensor for it. The flag and the device are restated in the terms
    of this function: what it passes for the callee's parameters, or fixed further down."""
    # A callee that walks its list parameter (``items``) copies the items of this one.
    handed = sorted({o.parameter + items for o in evaluator.value_of(argument) if o.parameter})
    handed = [h for h in handed if _item_parameter(h)[0].isidentifier()]  # one level of items at most
    if not handed:
        return
    here = _parameter_names(evaluator.scope)
    theirs = _parameter_names(function)
    flag = _flag_of(copy)
    if type(flag) is cst.Name and flag.value in theirs:
        passed = argument_for(function, call, flag.value)
        if passed is None:
            if any(a.star for a in call.args) or not _has_true_default(function, flag.value):
                return  # not visibly passed, and its default is not `True`: not known to be non_blocking
            flag = ALWAYS
        elif type(passed) is cst.Name and passed.value in here and _is_own_parameter(evaluator, passed):
            flag = passed  # `non_blocking=non_blocking`: this function's callers decide
        elif is_true(evaluator.value_of(passed)):
            flag = ALWAYS
        else:
            return  # blocking, or not known to be non_blocking, with what this call passes
    else:
        flag = ALWAYS  # fixed in the callee (`non_blocking=True`)
    if not _device_fits(evaluator, function, call, copy):
        return  # this call makes it a dtype cast or a copy to the host
    device, known = copy.device, copy.device_known
    if device is not None and known:
        passed = argument_for(function, call, device.value) if type(device) is cst.Name else None
        if type(device) is cst.Name and device.value in theirs and passed is not None:
            device = passed  # what this call passes for the callee's device parameter
        else:
            known = False  # the callee's own expression (or its default): not one of this function
    for parameter in handed:
        evaluator.events.forwarded(
            ParameterCopy(
                parameter,
                copy.sink,
                copy.api,
                device,
                copy.copy_dst,
                copy.sink_statement,
                flag=flag,
                chain=(call, *copy.chain),
                device_known=known,
            )
        )


#: Arguments that may be a container whose items a callee walks.
_CONTAINER_NODES = (cst.Name, cst.List, cst.Tuple, cst.Dict, cst.ListComp, cst.DictComp)


def _item_parameter(parameter: str) -> tuple[str, str]:
    """``"bufs[]"`` (the items of parameter ``bufs``) -> ``("bufs", "[]")``; ``"t"`` -> ``("t", "")``;
    ``"loader[*]"`` (a part of an item: ``x`` of ``for x, y in loader:``) -> ``("loader", "[*]")``."""
    for suffix in ("[]", "{}", KEY_TESTED_ITEMS, ITEM_PART):
        if parameter.endswith(suffix):
            return parameter[: -len(suffix)], suffix
    return parameter, ""


def _caller_items(held: dict[str, Value], items: str) -> Value | None:
    """What a caller's list (dict) holds, for a callee that walks it (``items``: ``[]``, ``{}``).
    Walked under a test of the key, only items of one birth: a test could pick any of several."""
    if items == KEY_TESTED_ITEMS:
        value = held.get(".{}")
        return value if value is not None and len(value) == 1 else None
    return held.get("." + items)


def _is_own_parameter(evaluator: Evaluator, name: cst.Name) -> bool:
    """``name`` still holds the parameter of that name (not rebound since)."""
    value = evaluator.value_of(name)
    return len(value) == 1 and next(iter(value)).parameter == name.value


def _parameter_names(scope: object) -> set[str]:
    if not isinstance(scope, cst.FunctionDef):
        return set()
    params = scope.params
    return {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}


def _flag_of(copy: ParameterCopy | AttributeCopy) -> cst.BaseExpression | None:
    """The expression that decides whether ``copy`` is non_blocking, in the function that holds it."""
    if isinstance(copy, ParameterCopy) and copy.flag is not None:
        return copy.flag
    sink = copy.sink
    flag = next((a.value for a in sink.args if a.keyword is not None and a.keyword.value == "non_blocking"), None)
    if flag is None:
        positional = [a.value for a in sink.args if a.keyword is None and not a.star]
        flag = positional[-1] if len(positional) >= 2 else None  # `.to(dev, nb)`, `.copy_(src, nb)`
    return flag


def _copies_here(
    evaluator: Evaluator, function: cst.FunctionDef, call: cst.Call, copy: ParameterCopy | AttributeCopy
) -> bool:
    """Whether the callee's copy is still a non_blocking copy to a device with this call's
    arguments: ``non_blocking=nb`` or a target that is a parameter takes what the caller passes
    (``g(t, dev, nb=False)``, ``conv(t, torch.float16)``, ``mv(t, "cpu")``)."""
    params = _parameter_names(function)
    flag = _flag_of(copy)
    held = _receiver_fields(evaluator, call, flag)
    if held and all(value is not None and not is_true(value) for value in held):
        return False  # `non_blocking=self.async_copy` of an object built with `async_copy=False`
    if type(flag) is cst.Name and flag.value in params:
        passed = argument_for(function, call, flag.value)
        if passed is not None and not is_true(evaluator.value_of(passed)):
            return False
        if passed is None and not _has_true_default(function, flag.value):
            return False  # a flag without a `True` default, not visibly passed: not known
    return _device_fits(evaluator, function, call, copy)


def _device_fits(
    evaluator: Evaluator, function: cst.FunctionDef, call: cst.Call, copy: ParameterCopy | AttributeCopy
) -> bool:
    """The callee's copy still goes to a device with what ``call`` passes for its device
    parameter (not a dtype: a cast; not the host)."""
    # `self.buf.copy_(t, non_blocking=True)` in a method of an object whose construction put a
    # host tensor there (`Builder(n, "cpu")`): a copy on the host.
    held = _receiver_fields(evaluator, call, copy.copy_dst)
    if held and all(value and {o.kind for o in value} <= HOST_KINDS for value in held):
        return False
    if isinstance(copy, ParameterCopy) and not copy.device_known:
        return True  # fixed further down, where it was checked
    params = _parameter_names(function)
    destination = copy.copy_dst
    if type(destination) is cst.Name and destination.value in params:
        # `dst.copy_(src, non_blocking=True)` into a parameter: a caller handing it a host tensor
        # copies host to host.
        passed = argument_for(function, call, destination.value)
        value = evaluator.value_of(passed) if passed is not None else None
        if value and {o.kind for o in value} <= HOST_KINDS:
            return False
    target = copy.device
    if type(target) is cst.Name and target.value in params:
        passed = argument_for(function, call, target.value)
        if passed is not None:
            if evaluator.names.is_dtype(passed) or only(evaluator.value_of(passed), Kind.DTYPE):
                return False
            if classify_device(passed, evaluator.names.torch_function) in (DeviceClass.HOST, DeviceClass.OTHER):
                return False
            if evaluator.value_of(passed) == HOST_DEVICE:
                return False  # `dev = "cpu"`, then `send(t, dev)`
        elif not any(a.star for a in call.args) and _default_of(function, target.value) == "None":
            return False  # left at `device=None`: `t.to(None)` copies nothing (nor does the early return)
    # `.to(self.device, ...)` in a method of an object built here with the host's device.
    held = _receiver_fields(evaluator, call, target)
    if held and all(value == HOST_DEVICE for value in held):
        return False
    if (
        type(target) is cst.Attribute
        and target.attr.value == "device"
        and type(target.value) is cst.Name
        and target.value.value in params
    ):
        # `.to(x.device, ...)`: where the caller's `x` is, the host for a host tensor.
        passed = argument_for(function, call, target.value.value)
        given = evaluator.value_of(passed) if passed is not None else None
        if given and {o.kind for o in given} <= HOST_KINDS:
            return False
    return True


def _receiver_fields(evaluator: Evaluator, call: cst.Call, node: cst.BaseExpression | None) -> list[Value | None]:
    """For ``node``, a callee's ``self.<attr>``, and ``call`` of a method on an object of a
    project class (``up.send(t)``): what each path's object holds in that field (None: not
    known); empty when not such a call."""
    holder = _receiver_of(evaluator, call)
    if (
        type(node) is not cst.Attribute
        or type(node.value) is not cst.Name
        or node.value.value != "self"
        or holder is None
    ):
        return []
    receiver = evaluator.value_of(holder)
    if not objects.is_object(receiver):
        return []
    stored = evaluator.stored_fields(holder) if evaluator.fields_trusted(holder) else {}
    if node.attr.value in stored:
        return [stored[node.attr.value]]  # `e.device = "cpu"` just before the call
    return [dict(o.fields).get(node.attr.value) for o in receiver]


def _receiver_of(evaluator: Evaluator, call: cst.Call) -> cst.BaseExpression | None:
    """The object a method ``call`` runs on: ``tap`` of ``tap(dev)`` (its ``__call__``, or a
    module's ``forward``), else ``obj`` of ``obj.send(t)``; None for a plain function's call."""
    if type(call.func) in (cst.Name, cst.Attribute) and objects.is_object(evaluator.value_of(call.func)):
        return call.func
    return call.func.value if type(call.func) is cst.Attribute else None


def _host_passed_for(evaluator: Evaluator, function: cst.FunctionDef, call: cst.Call, name: str) -> bool:
    """``call`` passes the host's device for parameter ``name`` (or leaves it to a host default,
    or may set it through ``*args``/``**kwargs``)."""
    given = _passed_or_default(function, call, name)
    if given is None:
        return True  # not visible: perhaps the host
    return (
        evaluator.value_of(given) == HOST_DEVICE
        or classify_device(given, evaluator.names.torch_function) is DeviceClass.HOST
    )


def _truth_passed_for(function: cst.FunctionDef, call: cst.Call, name: str) -> bool | None:
    """The truth of what ``call`` passes for parameter ``name`` when it is a literal (``False``,
    ``None``, ``0``, ``True``, ``1``), or of its default when the call leaves it; else None."""
    given = _passed_or_default(function, call, name)
    return constant_truth(given) if given is not None else None


def _passed_or_default(function: cst.FunctionDef, call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The argument ``call`` passes for parameter ``name``, else its default when no
    ``*args``/``**kwargs`` of the call may set it; None when neither is visible."""
    passed = argument_for(function, call, name)
    if passed is not None or any(a.star for a in call.args):
        return passed
    param = named_parameter(function, name)
    return param.default if param is not None else None


def _default_of(function: cst.FunctionDef, name: str) -> str | None:
    """The default of parameter ``name`` when it is a plain name (``None``, ``True``)."""
    param = named_parameter(function, name)
    return param.default.value if param is not None and type(param.default) is cst.Name else None


def _has_true_default(function: cst.FunctionDef, name: str) -> bool:
    return _default_of(function, name) == "True"


#: Defaults a parameter may have that are Python data (a number, a string, a flag, None).
_LITERAL_DEFAULTS = (cst.Integer, cst.Float, cst.SimpleString)


def _arguments(
    evaluator: Evaluator, function: cst.FunctionDef, call: cst.Call, summaries: FileSummaries
) -> Callable[[str], Value | None]:
    """The caller's value for each parameter of ``function`` that ``call`` sets: the argument
    passed (a field of an object passed, ``"batch.ids"``, as the caller's ``summaries`` know it),
    or a literal default (``scale=2``); None when neither is visible."""

    def passed(name: str) -> Value | None:
        if "." in name:
            holder, _, field = name.partition(".")
            argument = argument_for(function, call, holder)
            if argument is None:
                return None
            return summaries.field_of_argument(evaluator, argument, field)
        name, items = _item_parameter(name)
        if items:
            # An item of a list (dict) parameter: the items of the caller's, when known.
            argument = argument_for(function, call, name)
            held = evaluator.held_by_argument(argument) if argument is not None else None
            return _caller_items(held or {}, items) or None
        argument = argument_for(function, call, name)
        if argument is not None:
            if classify_device(argument, evaluator.names.torch_function) is DeviceClass.HOST:
                return HOST_DEVICE  # `"cpu"`, `torch.device("cpu")`
            value = evaluator.value_of(argument)
            if value and any(o.loaded for o in value) and not only_read(function, name):
                # What a loader read (a state dict, a batch) is pageable by its items, and the
                # callee may replace them (`sd[k] = v.pin_memory()`) before it returns the dict.
                return None
            return value
        if any(a.star for a in call.args):
            return None  # `*args`/`**kwargs` may set it
        param = named_parameter(function, name)
        default = param.default if param is not None else None
        if isinstance(default, cst.SimpleString) and default.evaluated_value == "cpu":
            return HOST_DEVICE
        if isinstance(default, cst.Name) and default.value == "False":
            return FALSE  # (`pin_memory=pin` with `pin=False` left: pageable)
        if isinstance(default, _LITERAL_DEFAULTS) or (
            isinstance(default, cst.Name) and default.value in ("None", "True")
        ):
            return PYDATA
        return None

    return passed


def _spelled(name: str) -> str:
    """A pattern for a call of ``name`` (``helpers.f``, or ``f`` perhaps as ``self.f``)."""
    return re.escape(name) if "." in name else r"(?:self\.)?" + re.escape(name)


#: A test of a function's text: whether parsing it may change an answer.
TextTest = Callable[[str], bool]


def _may_return(text: str) -> bool:
    return "return" in text  # no `return`: the call gives nothing known (as when it returns nothing)


#: ``class Name(...)`` header lines (not constructions of the class).
_CLASS_LINES = re.compile(r"^[ \t]*class[ \t]+\w+.*$", re.M)


def _may_yield(text: str) -> bool:
    return "yield" in text  # no `yield`: not a generator


def _may_check_on_host(text: str) -> bool:
    # Every CPU check `host_checked_parameters` reads names "cpu" and raises or asserts.
    return "cpu" in text and ("raise" in text or "assert" in text)


def _not_run_by_the_call(function: cst.FunctionDef) -> bool:
    """``async def``, or a generator (a ``yield`` in its own body): calling it runs none of it."""
    if function.asynchronous is not None:
        return True
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Yield):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # a nested scope's yield is its own
        stack.extend(children(node))
    return False


def host_checked_parameters(function: cst.FunctionDef) -> set[str]:
    """Parameters that ``function`` checks are on the CPU before anything that could return:
    leading ``assert t.is_cpu`` / ``if t.device.type != "cpu": raise ...`` statements (a check
    after an early ``return``, or of a name bound again first, proves nothing about the argument)."""
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)}
    params |= {p.name.value for p in function.params.kwonly_params}
    body = function.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    found: set[str] = set()
    for statement in statements:
        if isinstance(statement, cst.If) and statement.orelse is None and _ends_in_raise(statement.body):
            if _holds_return(statement.body):
                break
            found |= on_host_when(statement.test, False) & params
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            break  # a compound statement may return, or rebind, first
        for small in statement.body:
            if isinstance(small, cst.Assert):
                found |= on_host_when(small.test, True) & params
            elif isinstance(small, (cst.Return, cst.Raise)):
                return found
            elif isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                params -= _assigned_names(small)
    return found


def _ends_in_raise(suite: cst.BaseSuite) -> bool:
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Raise)


def _holds_return(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Return):
            return True
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children(current))
    return False


def _assigned_names(small: cst.BaseSmallStatement) -> set[str]:
    targets: list[cst.BaseExpression] = []
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        targets = [small.target]
    names: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            targets.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            targets.append(target.value)
    return names


def _passes_host(evaluator: Evaluator, call: cst.Call) -> bool:
    return any(o.kind in HOST_KINDS for a in call.args for o in evaluator.value_of(a.value))


def argument_for(function: cst.FunctionDef, call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The expression ``call`` passes for parameter ``name`` of ``function``."""
    params = [*function.params.posonly_params, *function.params.params]
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None  # `*args`/`**kwargs`: which argument lands where is not visible
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    names = [p.name.value for p in params]
    # A method called on an object: `obj.m(x)`, or `obj(x)` running its `__call__`/`forward` (a
    # call by that function's own name, `forward(m, x)`, passes `self` itself).
    called_object = (
        type(call.func) is cst.Name
        and function.name.value in objects.CALLED_METHODS
        and call.func.value != function.name.value
    )
    bound = isinstance(call.func, cst.Attribute) or called_object
    if bound and names and names[0] in ("self", "cls"):
        names = names[1:]  # a method called on an object (`obj.m(x)`, `obj(x)`): the first parameter is bound
    if name in names and names.index(name) < len(positional):
        return positional[names.index(name)].value
    return None


class _Ranges:
    """Half-open line ranges, asked whether any holds a line: a binary search over their
    starts and the furthest end so far, not a scan per question."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        ranges = sorted(ranges)
        self._firsts = [first for first, _ in ranges]
        self._reach: list[int] = []  # the furthest end among the ranges up to each one
        for _, end in ranges:
            self._reach.append(max(end, self._reach[-1]) if self._reach else end)

    def hold(self, line: int) -> bool:
        i = bisect.bisect_right(self._firsts, line) - 1
        return i >= 0 and self._reach[i] > line


#: ``self.name(``: a method calling another method of the same object.
_CALLS_SELF_METHOD = re.compile(r"\bself\.\w+[ \t]*\(")
