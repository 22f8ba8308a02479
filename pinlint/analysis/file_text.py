"""What text scans of one file say, each done once on first need: its classes (and a class's
family), the defs by name, the lines of ``self.<attr> = ...``, the outermost def around a line.

The file summaries ask these questions again and again (every ``self.x`` read, every call of a
function of the file); a scan of the whole text per question made them quadratic.
"""

from __future__ import annotations

import re

from pinlint.analysis.classes import ClassRange, _class_indent, class_at, class_ranges
from pinlint.analysis.classes import family as family_of
from pinlint.analysis.triage import EnclosingDefs
from pinlint.core.text import LineIndex


class FileText:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.text = "".join(lines)
        self._classes: list[ClassRange] | None = None
        self._family_memo: dict[str, list[ClassRange] | None] = {}
        self._attribute_memo: dict[tuple[str, str], list[int] | None] = {}
        self._module_states: frozenset[str] | None = None
        self._elsewhere_memo: dict[str, bool] = {}
        self._opaque_memo: dict[str, bool] = {}
        self._unusual_memo: dict[str, bool] = {}
        self._elements_memo: dict[tuple[str, str], bool] = {}
        self._targets: dict[str, list[tuple[int, int]]] = {}
        self._global_names: set[str] | None = None
        self._star_imports: list[int] | None = None
        self._enclosing: EnclosingDefs | None = None
        #: def name -> [(0-based line, indented)]; attribute -> lines of ``self.<attr> = ...``;
        #: names declared at class level (``x: int``).
        self._def_index: dict[str, list[tuple[int, bool]]] | None = None
        self._assign_index: dict[str, list[int]] | None = None
        self._declared: dict[str, list[int]] | None = None
        self._indirect: tuple[set[str], list[int]] | None = None
        self._line_index: LineIndex | None = None
        self._top_assigned: set[str] | None = None
        self._top_classes: dict[str, list[ClassRange]] | None = None
        self._referenced: frozenset[str] | None = None
        self._dynamic_dispatch: bool | None = None
        self._bound_memo: dict[str, bool] = {}
        self._stored_attributes: dict[str, set[str]] | None = None
        self._strings: list[tuple[int, int]] | None = None
        self._host_constants: dict[str, bool] = {}
        self._host_constant_lines: dict[str, int] | None = None
        self._constant_truths: dict[str, bool | None] = {}
        self._literal_constants: dict[str, list[re.Match[str]]] | None = None

    def classes(self) -> list[ClassRange]:
        if self._classes is None:
            self._classes = class_ranges(self.lines)
        return self._classes

    def class_at(self, line: int) -> str | None:
        """The innermost class around 0-based ``line``."""
        return class_at(self.classes(), line)

    def family(self, name: str) -> list[ClassRange] | None:
        """The class, its bases and its subclasses defined in this file (a ``self.x`` of the
        class may be set by any of them). None when the name is not one class of this file."""
        if name not in self._family_memo:
            self._family_memo[name] = family_of(self.classes(), name)
        return self._family_memo[name]

    def attribute_lines(self, class_name: str, attr: str) -> list[int] | None:
        """0-based lines of the class family's ``self.<attr> = ...`` (``self.<attr>, self.b = ...`` too); None:
        not followable.
        A text scan, memoised: a copying method asks for the same attribute again and again."""
        memo_key = (class_name, attr)
        if memo_key in self._attribute_memo:
            return self._attribute_memo[memo_key]
        found: list[int] | None = []
        family = self.family(class_name)
        if family is None or not attr.isidentifier() or self.writes_indirectly(attr, family):
            found = None  # set in ways the scan below does not see
        elif any(c.start < line < c.end for c in family for line in self._declared_names().get(attr, ())):
            found = None  # declared at class level (a dataclass field): filled by whoever calls
        elif self.assigned_elsewhere(attr):
            found = None  # `runner.buf = pinned` from outside the class may replace it
        elif self.opaque_family(class_name) or self._defined_in_class_body(family, attr):
            found = None  # attribute access the class itself redefines (see opaque_family)
        elif self._stored_unusually(attr):
            found = None  # `self.buf, _ = ...`, `x = self.buf = ...`, `for self.buf in`, `del self.buf`
        elif self._module_state(attr):
            found = None  # a module's buffer or parameter: `model.to(device)` moves it
        else:
            for line in self._assignments().get(attr, ()):
                if not any(c.start < line < c.end for c in family):
                    continue  # another class's attribute of the same name
                if any(c.start < line < c.end and c.indent > _class_indent(family, line) for c in self.classes()):
                    continue  # a class nested inside: its `self` is another object
                found.append(line)
        self._attribute_memo[memo_key] = found
        return found

    def elements_only_read(self, class_name: str, attr: str, assignments: list[int], fillers: set[int]) -> bool:
        """Does the file only read the elements of the list (dict) in ``self.<attr>`` of the class
        family? Every mention of ``.<attr>`` (but ``self.<attr>`` inside other classes: another
        object) must be one of: its assignments (``assignments``, 0-based lines),
        ``self.<attr>.append(...)`` in a method that assigns it (``fillers``: their def lines),
        ``self.<attr>[i]`` read (not stored into, not deleted), a dict's ``.values()``,
        ``.items()``, ``.keys()`` or ``.get(...)``, or the list itself read where
        nothing can change it: ``for x in self.<attr>``, ``len(...)``, ``enumerate(...)``,
        ``torch.cat(...)``/``torch.stack(...)``. Any other use (passed to code, aliased,
        ``.pop()``, another object's ``.<attr>``, the name in a string: ``getattr``) may change
        what it holds."""
        memo_key = (class_name, attr)
        if memo_key not in self._elements_memo:
            self._elements_memo[memo_key] = self._elements_only_read(class_name, attr, assignments, fillers)
        return self._elements_memo[memo_key]

    def _elements_only_read(self, class_name: str, attr: str, assignments: list[int], fillers: set[int]) -> bool:
        text = self.text
        family = self.family(class_name)
        if family is None or f'"{attr}"' in text or f"'{attr}'" in text:
            return False
        assigned = set(assignments)
        for match in re.finditer(r"\.%s\b" % re.escape(attr), text):
            begin = match.start()
            before = text[begin - 5] if begin >= 5 else " "
            if not (text.startswith("self", begin - 4) and not (before.isalnum() or before in "_.")):
                return False  # another object's attribute of that name: maybe ours, changed there
            line = self.line_of(begin)
            if not any(c.start < line < c.end for c in family) or any(
                c.start < line < c.end and c.indent > _class_indent(family, line) for c in self.classes()
            ):
                continue  # the `self` of another class (or of a class nested in this one)
            if line in assigned:
                continue
            head = text[text.rfind("\n", 0, begin) + 1 : begin - 4]
            if head.lstrip().startswith("del "):
                return False
            line_end = text.find("\n", match.end())
            tail = text[match.end() : line_end if line_end >= 0 else len(text)].lstrip(" \t")
            if tail.startswith(".append("):
                if self.enclosing_def(line) not in fillers:
                    return False  # filled by another method (or from outside): not followed
                continue
            if _READING_METHOD.match(tail):
                continue  # `self.states.values()`, `.items()`, `.get(k)`: a dict read
            if tail.startswith("["):
                if not _open_brackets(head) and not _read_only_subscript(tail):
                    # (Inside an open bracket, `f(self.bufs[0], k=1)`, it is no assignment target.)
                    return False  # `self.bufs[0] = x`, `self.bufs[i] += y`, or one we cannot tell
                continue
            if _READING_CONTEXT.search(head) and _CLOSING_CONTEXT.match(tail):
                continue
            return False
        return True

    def _module_state(self, attr: str) -> bool:
        """``attr`` is registered as an ``nn.Module`` buffer or parameter somewhere in the file
        (``register_buffer("attr", ...)``, ``"attr" in self._buffers``, ``self.attr =
        nn.Parameter(...)``): ``module.to()``/``.cuda()`` replace it on the device, which no
        assignment here shows."""
        if self._module_states is None:
            found: set[str] = set()
            text = self.text
            if "register_" in text or "_buffers" in text or "_parameters" in text:
                found.update(m.group(2) for m in _REGISTERED.finditer(text))
                found.update(m.group(2) for m in _IN_MODULE_STATE.finditer(text))
                if _REGISTERED_BY_VARIABLE.search(text):
                    found.add("*")  # `register_buffer(name, ...)`: any attribute may be one
            if "Parameter(" in text:
                found.update(_PARAMETER_ASSIGNED.findall(text))
            self._module_states = frozenset(found)
        return attr in self._module_states or "*" in self._module_states

    def registers_module_state(self, attr: str) -> bool:
        """Whether a class of this file may register ``attr`` as a buffer or parameter (for a
        subclass defined in another file)."""
        return self._module_state(attr)

    def assigned_elsewhere(self, attr: str) -> bool:
        """Whether this file assigns ``<x>.<attr> = ...`` on anything but ``self`` (another
        object's attribute of that name, or this class's, set from outside its methods)."""
        if attr not in self._elsewhere_memo:
            found = False
            text, needle = self.text, "." + attr
            start = text.find(needle)
            while start >= 0 and not found:
                end = start + len(needle)
                if _STORE_TAIL.match(text, end):  # (a plain `in` test and a match: no regex per attribute)
                    line_start = text.rfind("\n", 0, start) + 1
                    base = _CHAIN_END.search(text, line_start, start)
                    found = base is not None and bool(base.group()) and base.group() != "self"
                start = text.find(needle, end)
            self._elsewhere_memo[attr] = found
        return self._elsewhere_memo[attr]

    def writes_indirectly(self, attr: str, family: list[ClassRange] | None = None) -> bool:
        """Whether ``<x>.<attr>`` may be written other than by an assignment: ``setattr(x,
        "attr", v)``, ``object.__setattr__(x, "attr", v)``, ``vars(x)["attr"] = v`` anywhere in the
        file, or a write by computed name on ``self`` in a method of ``family``
        (``setattr(self, f.name, v)``, ``self.__dict__.update(kw)``). A computed name on another
        object (``setattr(parent, name, module)``) is not taken to be any particular attribute."""
        literal, dynamic_rows = self._indirect_writes()
        if attr in literal:
            return True
        return any(c.start < row < c.end for row in dynamic_rows for c in family or ())

    def opaque_family(self, class_name: str) -> bool:
        """Whether the class family redefines attribute access or construction, so that what
        its methods assign is not what a read gives: ``__setattr__``/``__getattribute__``, a
        metaclass, a class decorator other than ``@dataclass``, ``__init__ = f`` in the body."""
        if class_name not in self._opaque_memo:
            family = self.family(class_name)
            opaque = family is None
            for cls in family or ():
                header = self.lines[cls.start]
                body = "".join(self.lines[cls.start + 1 : cls.end])
                decorators = []
                row = cls.start - 1
                while row >= 0 and self.lines[row].lstrip().startswith("@"):
                    decorators.append(self.lines[row].strip())
                    row -= 1
                if (
                    "metaclass" in header
                    or _ACCESS_HOOK.search(body)
                    or any(not _DATACLASS_DECORATOR.match(d) for d in decorators)
                ):
                    opaque = True
                    break
            self._opaque_memo[class_name] = opaque
        return self._opaque_memo[class_name]

    def _defined_in_class_body(self, family: list[ClassRange], attr: str) -> bool:
        """``attr`` is also a method, property or class-level value of the family (a descriptor
        such as a property setter decides what ``self.<attr> = v`` stores)."""
        if any(indented and any(c.start < line < c.end for c in family) for line, indented in self.defs(attr)):
            return True
        for line, width in self._assignment_lines(attr):
            if any(cls.start < line < cls.end and width == _body_indent(self.lines, cls) for cls in family):
                return True
        return False

    def method_replaced(self, class_name: str, name: str) -> bool:
        """Whether ``obj.<name>`` may run something else than the family's ``def <name>``: the
        name stored as an attribute outside ``self`` (``Uploader.send = f``, ``up.send = f``),
        written by name (``setattr(Uploader, "send", f)``), bound again in a class body
        (``send = other``), or attribute access or construction redefined (``__getattr__``,
        ``__new__``, a metaclass, a class decorator)."""
        family = self.family(class_name)
        if family is None or self.opaque_family(class_name):
            return True
        if self.assigned_elsewhere(name) or self.writes_indirectly(name, family):
            return True
        if any(any(c.start < line < c.end for c in family) for line in self._assignments().get(name, ())):
            return True  # `self.send = ...`: an instance attribute that hides the method
        if _CLASS_ASSIGNMENT.search(self.text):
            return True  # `obj.__class__ = Other`: the object's methods are another class's
        return any(
            cls.start < line < cls.end and width == _body_indent(self.lines, cls)
            for line, width in self._assignment_lines(name)
            for cls in family
        )

    def _assignment_lines(self, name: str) -> list[tuple[int, int]]:
        """(0-based line, indent width) of each assignment whose target list names ``name``
        (``x = ...``, ``a, x = ...``), at any indentation; only lines holding the name are read."""
        if name not in self._targets:
            found: list[tuple[int, int]] = []
            text = self.text
            at = text.find(name)
            seen: set[int] = set()
            while at >= 0:
                line_start = text.rfind("\n", 0, at) + 1
                if line_start not in seen:
                    seen.add(line_start)
                    match = _ASSIGNMENT_LINE.match(text, line_start)
                    if match is not None and name in (t.strip() for t in match.group(2).split(",")):
                        found.append((self.line_of(line_start), len(match.group(1).expandtabs())))
                at = text.find(name, at + len(name))
            self._targets[name] = found
        return self._targets[name]

    def _stored_unusually(self, attr: str) -> bool:
        """``self.<attr>`` is stored other than by a line starting ``self.<attr> =``: a target
        among several, after ``;`` or ``:``, a ``for`` target, or deleted."""
        if attr not in self._unusual_memo:
            found = False
            needle = "self." + attr
            text = self.text
            start = text.find(needle)
            while start >= 0 and not found:
                end = start + len(needle)
                previous = text[start - 1] if start else " "
                following = text[end] if end < len(text) else " "
                if not (previous.isalnum() or previous in "._") and not (following.isalnum() or following == "_"):
                    found = self._unusual_store(start, end)
                start = text.find(needle, end)
            self._unusual_memo[attr] = found
        return self._unusual_memo[attr]

    def _unusual_store(self, start: int, end: int) -> bool:
        text = self.text
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        before, after = text[line_start:start], text[end : line_end if line_end >= 0 else len(text)]
        if after.lstrip(" \t").startswith("("):
            return False  # a method call: `self.x(...)`
        if _SELF_ASSIGNMENT.match(line) and before.strip() == "":
            return False  # the usual `self.x = ...`, which the scan follows
        if _SELF_TUPLE_ASSIGNMENT.match(line) and _TUPLE_TARGET_PREFIX.match(before):
            return False  # `self.a, self.b = ...`, which the scan follows too
        if after.startswith("[") or after.startswith(".") and not after.startswith(".data"):
            return False  # `self.x[i] = v`, `self.x.y = v`: writes into it, not a new value
        return bool(_DEL_OR_FOR.search(before)) or _before_assignment(after, _open_brackets(before))

    def method_start(self, class_name: str, name: str) -> int | None:
        """0-based ``def`` line of method ``name`` in the class family: one def of that name, else
        None (an override within the family, or a method inherited from elsewhere)."""
        family = self.family(class_name)
        if family is None:
            return None
        starts = [
            line for line, indented in self.defs(name) if indented and any(c.start < line < c.end for c in family)
        ]
        return starts[0] if len(starts) == 1 else None

    def own_method_start(self, class_name: str, name: str) -> int | None:
        """0-based ``def`` line of method ``name`` in the body of class ``class_name`` itself: what
        an object made by calling that class runs, whatever its bases or subclasses define. None
        when it has none, or the file may change which function runs in ways a text scan does
        not follow: another def of that name in the class (under ``if``/``try``, or nested), a
        base that is not a class of this file (its metaclass, ``__new__``, ``__getattribute__``
        or ``__init_subclass__`` are not visible), or the text names ``__class__``, ``__dict__``,
        ``globals()``, ``locals()``, ``setattr``, ``delattr``, ``__code__``, a mock ``patch``, a
        metaclass, or deletes an attribute of that name."""
        family = self.family(class_name)
        if family is None or self.names_dynamic_dispatch():
            return None
        if re.search(rf"\bdel\b[^\n]*\.{re.escape(name)}\b", self.text):
            return None
        own = [c for c in family if c.name == class_name]
        if len(own) != 1:
            return None
        cls = own[0]
        in_file = {c.name for c in self.classes()}
        chain, seen = [cls], set()
        while chain:
            current = chain.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            for base in current.bases:
                base = base.split("[", 1)[0].strip()
                if base in _PLAIN_BASES:
                    continue
                if base not in in_file:
                    return None  # a base from elsewhere may redefine attribute access or construction
                chain.extend(c for c in family if c.name == base)
        indent = _body_indent(self.lines, cls)
        starts = [
            line
            for line, _ in self.defs(name)
            if cls.start < line < cls.end
            and not any(c is not cls and cls.start < c.start < line < c.end for c in self.classes())
        ]
        if len(starts) != 1 or _indent_width(self.lines[starts[0]]) != indent:
            return None  # none, or another def of that name (under `if`/`try`, or a nested one)
        return starts[0]

    def referenced_methods(self, class_name: str) -> frozenset[str]:
        """Methods of the class family that the file names without calling them (``s.repin``
        handed to a list of hooks, ``h = self.repin``): a call of an unknown callable may be
        one of them."""
        if self._referenced is None:
            # Every `.name` not followed by `(`, `=` or another `.`, in one scan of the text.
            self._referenced = frozenset(_REFERENCED_ATTRIBUTE.findall(self.text))
        family = self.family(class_name)
        if family is None or not self._referenced:
            return frozenset()
        return frozenset(name for name in self._referenced if self.method_start(class_name, name) is not None)

    def methods_of(self, class_name: str) -> list[tuple[str, int]]:
        """(name, 0-based def line) of each method the class family defines once (``method_start``)."""
        family = self.family(class_name)
        if family is None:
            return []
        self.defs("")  # builds the index of every def
        assert self._def_index is not None
        named = {
            name
            for name, entries in self._def_index.items()
            if any(indented and any(c.start < line < c.end for c in family) for line, indented in entries)
        }
        found = [(name, self.method_start(class_name, name)) for name in sorted(named)]
        return [(name, start) for name, start in found if start is not None]

    def names_dynamic_dispatch(self) -> bool:
        """The text names something that may change which function ``obj.name(...)`` runs, or of
        which class ``obj`` is (``__class__``, ``setattr``, a mock ``patch``...: ``_DYNAMIC_DISPATCH``)."""
        if self._dynamic_dispatch is None:
            self._dynamic_dispatch = _DYNAMIC_DISPATCH.search(self.text) is not None
        return self._dynamic_dispatch

    def methods_run_by_instances(self, class_name: str) -> list[tuple[str, int]]:
        """``methods_of``, and the methods of the class's own body that ``own_method_start``
        follows for an object made by calling the class (overriding a base's)."""
        found = dict(self.methods_of(class_name))
        family = self.family(class_name)
        if family is not None:
            assert self._def_index is not None  # built by `methods_of`
            for cls in (c for c in family if c.name == class_name):
                for name, entries in self._def_index.items():
                    if name not in found and any(cls.start < line < cls.end for line, _ in entries):
                        start = self.own_method_start(class_name, name)
                        if start is not None:
                            found[name] = start
        return sorted(found.items())

    def top_level_classes(self, name: str) -> list[ClassRange]:
        """The classes named ``name`` at module level (by name, indexed once)."""
        if self._top_classes is None:
            self._top_classes = {}
            for cls in self.classes():
                if cls.indent == 0:
                    self._top_classes.setdefault(cls.name, []).append(cls)
        return self._top_classes.get(name, [])

    def rebinds(self, name: str) -> bool:
        """``rebound``, or any other module-level binding of ``name`` besides one ``def``: among
        the targets of an assignment (``f, g = a, b``), under a module-level ``if``/``try``, or a
        class of that name."""
        if self.rebound(name) or self.top_level_classes(name):
            return True
        for line, indented in self.defs(name):
            if indented and self.enclosing_def(line) is None and self.class_at(line) is None:
                return True  # a def under a module-level `if`/`try`
        return self._assigned_at_module_level(name)

    def bound_only_by_import(self, name: str) -> bool:
        """No module code binds ``name`` but its import: no assignment (also under ``if``/``try``),
        ``def`` or class of that name at module level, no ``global`` of it, no star import."""
        if self.reassigned(name) or self.top_level_classes(name) or self._assigned_at_module_level(name):
            return False
        return not any(
            not indented or (self.enclosing_def(line) is None and self.class_at(line) is None)
            for line, indented in self.defs(name)
        )

    def _assigned_at_module_level(self, name: str) -> bool:
        """An assignment names ``name`` in module code (at any depth outside functions and class
        bodies: under `if`/`try`), not as a local of some function."""
        return any(
            not width or self.enclosing_def(line) is None and self.class_at(line) is None
            for line, width in self._assignment_lines(name)
        ) or self._bound_otherwise(name)

    def _bound_otherwise(self, name: str) -> bool:
        """Module code binds ``name`` other than by a line starting with an assignment: a ``for``
        target, ``with ... as name``, ``except ... as name``, a walrus, an assignment after ``;``,
        or an import of that name after the first statement on its line."""
        if name in self._bound_memo:
            return self._bound_memo[name]
        text = self.text
        at = text.find(name)
        seen: set[int] = set()
        found = False
        while at >= 0 and not found:
            line_start = text.rfind("\n", 0, at) + 1
            if line_start not in seen:
                seen.add(line_start)
                line_end = text.find("\n", at)
                line = text[line_start : len(text) if line_end < 0 else line_end]
                # The line's text first (most lines name it otherwise); where it is, only then.
                code = line.split("#", 1)[0]  # (a `#` inside a string cuts early: a miss, no more)
                if _MAY_BIND.search(code) is not None and _binds_in_line(code, name):
                    row = self.line_of(line_start)
                    found = (
                        self.enclosing_def(row) is None
                        and self.class_at(row) is None
                        and not self._in_string(line_start)  # `for make in ...` in a docstring
                    )
            at = text.find(name, at + len(name))
        self._bound_memo[name] = found
        return found

    def host_device_constant(self, name: str) -> bool:
        """``name`` is a module constant for the host device: bound once, at module level, by
        ``NAME = "cpu"`` or ``NAME = torch.device("cpu")``, and never rebound."""
        if self._host_constant_lines is None:
            # One scan of the text for every name asked: name -> how many such lines bind it.
            self._host_constant_lines = {}
            for match in _HOST_DEVICE_CONSTANT.finditer(self.text):
                lines = self._host_constant_lines
                lines[match.group(1)] = lines.get(match.group(1), 0) + 1
        if name not in self._host_constants:
            self._host_constants[name] = (
                self._host_constant_lines.get(name) == 1
                and len(self._assignment_lines(name)) == 1
                and not self._bound_otherwise(name)
                and name not in self._globals()
                and not self.rebound_by_import(name)
            )
        return self._host_constants[name]

    def module_constant_truth(self, name: str) -> bool | None:
        """The truth of ``name`` when it is a module constant bound once, at module level, to a
        literal (``USE_STAGE = True``, ``DEBUG = 0``) and never rebound in this file; None when
        it is not one. (Another module may still assign it: tests that monkeypatch a flag are
        read as the file states it.)"""
        if name not in self._constant_truths:
            if self._literal_constants is None:
                self._literal_constants = {}
                for match in _LITERAL_CONSTANT.finditer(self.text):  # one pass for every name asked
                    self._literal_constants.setdefault(match.group(1), []).append(match)
            found = self._literal_constants.get(name, [])
            truth = None
            if (
                len(found) == 1
                and not self._in_string(found[0].start())
                and len(self._assignment_lines(name)) == 1
                and not self._bound_otherwise(name)
                and name not in self._globals()
                and not self.rebound_by_import(name)
                and re.search(rf"\b{re.escape(name)}[ \t]*(?:[-+*/%@&|^]|//|\*\*|<<|>>)=", self.text) is None
            ):
                truth = found[0].group(2) not in ("False", "None") and found[0].group(2).strip("0_") != ""
            self._constant_truths[name] = truth
        return self._constant_truths[name]

    def rebound_by_import(self, name: str) -> bool:
        return name in set(_IMPORTED_AS.findall(self.text))

    def _in_string(self, offset: int) -> bool:
        """``offset`` is inside a triple-quoted string (scanned once, when first asked)."""
        from pinlint.analysis.names import _inside, _triple_quoted_spans

        if self._strings is None:
            self._strings = _triple_quoted_spans(self.text)
        return _inside(self._strings, offset)

    def stored_attributes(self) -> dict[str, set[str]]:
        """``attr`` -> the dotted names ``x`` of every assignment ``<x>.<attr> = ...`` other than
        on ``self`` (one scan of the text, for the monkeypatches a module may run)."""
        if self._stored_attributes is None:
            text = self.text
            found: dict[str, set[str]] = {}
            # Anchored on the dot (a regex that starts at every identifier is ten times slower).
            for match in _ATTRIBUTE_STORE.finditer(text):
                at = begin = match.start()
                while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "._"):
                    begin -= 1
                base = text[begin:at]
                if base and base != "self":
                    found.setdefault(match.group(1), set()).add(base)
            self._stored_attributes = found
        return self._stored_attributes

    def sets_attribute_by_name(self, attr: str) -> bool:
        """``setattr(x, name, ...)`` whose name may be ``attr``: a literal of that name, or any
        name not written as a literal (``setattr(devs.GPU, NAME, other)``)."""
        if "setattr(" not in self.text:
            return False
        for match in _SETATTR.finditer(self.text):
            literal = match.group(2)
            if literal is None or literal == attr:
                return True
        return False

    def reassigned(self, name: str) -> bool:
        """Whether module code assigns ``name`` (at any depth outside functions: under
        ``if TYPE_CHECKING: ... else:``, ``if sys.platform ...``), a function declares it
        ``global``, or a ``from m import *`` may rebind it: what an import bound may change."""
        if name in self._globals():
            return True
        if self._star_imports is None:
            self._star_imports = [m.start() for m in _STAR_IMPORT.finditer(self.text)]
        if self._star_imports and self._last_import_of(name) < self._star_imports[-1]:
            return True  # a star import after the name's import may rebind it
        return self._assigned_at_module_level(name)

    def declared_global(self, name: str) -> bool:
        """A function declares ``name`` ``global`` (and may bind it at run time)."""
        return name in self._globals()

    def _last_import_of(self, name: str) -> int:
        """Offset of the last import line that mentions ``name`` (-1: none)."""
        text, last = self.text, -1
        at = text.find(name)
        while at >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            if _IMPORT_STATEMENT.match(text, line_start):
                last = line_start
            at = text.find(name, at + len(name))
        return last

    def _globals(self) -> set[str]:
        if self._global_names is None:
            self._global_names = set()
            for declared in _GLOBAL.findall(self.text):
                self._global_names.update(n.strip() for n in declared.split(","))
        return self._global_names

    def rebound(self, name: str) -> bool:
        """Whether the module's ``name`` may be bound to something else: a module-level
        assignment (``f = other``), an import under that name (``import x as f``), or a
        ``global f`` in a function."""
        if self._top_assigned is None:
            self._top_assigned = set(_TOP_LEVEL_ASSIGNMENT.findall(self.text))
            self._top_assigned.update(_IMPORTED_AS.findall(self.text))
            self._top_assigned.update(self._globals())
        return name in self._top_assigned

    def assigns_in(self, cls: ClassRange, attr: str) -> bool:
        """Whether a method of ``cls`` assigns ``self.<attr>``."""
        return any(cls.start < line < cls.end for line in self._assignments().get(attr, ()))

    def enclosing_def(self, line: int) -> int | None:
        if self._enclosing is None:
            self._enclosing = EnclosingDefs(self.lines)
        return self._enclosing.of(line)

    def _declared_names(self) -> dict[str, list[int]]:
        """Annotated names without a value (``idx: torch.Tensor``), by the 0-based lines that
        declare them (a class of the family declaring one is what counts)."""
        if self._declared is None:
            self._declared = {}
            for match in _CLASS_LEVEL_DECLARATION.finditer(self.text):
                self._declared.setdefault(match.group(1), []).append(self.line_of(match.start()))
        return self._declared

    def _assignments(self) -> dict[str, list[int]]:
        if self._assign_index is None:
            self._assign_index = {}
            for match in _SELF_ASSIGNMENT.finditer(self.text):
                self._assign_index.setdefault(match.group(1), []).append(self.line_of(match.start()))
            if "self." in self.text and "," in self.text:
                for match in _SELF_TUPLE_ASSIGNMENT.finditer(self.text):
                    line = self.line_of(match.start())
                    for attr in _SELF_ATTRIBUTE.findall(match.group(1)):
                        self._assign_index.setdefault(attr, []).append(line)
        return self._assign_index

    def _indirect_writes(self) -> tuple[set[str], list[int]]:
        """(attributes written by literal name, 0-based rows of writes on ``self`` by computed name)."""
        if self._indirect is None:
            literal: set[str] = set()
            dynamic: list[int] = []
            text = self.text
            for needle, pattern in _INDIRECT_NEEDLES:
                at = text.find(needle)
                while at >= 0:
                    if needle == "__dict__":  # the object is written before the needle: search its line
                        line_end = text.find("\n", at)
                        match = pattern.search(
                            text, text.rfind("\n", 0, at) + 1, len(text) if line_end < 0 else line_end
                        )
                    else:
                        match = pattern.match(text, at)
                    if match is not None:
                        name = match.group("name")
                        if name:
                            literal.add(name)
                        elif (match.group("target") or "").split(".", 1)[0] == "self":
                            dynamic.append(self.line_of(at))
                    at = text.find(needle, at + len(needle))
            self._indirect = (literal, dynamic)
        return self._indirect

    def line_of(self, offset: int) -> int:
        """0-based line of a character offset of the text."""
        if self._line_index is None:
            self._line_index = LineIndex(self.lines)
        return self._line_index.row_of(offset)

    def defs(self, name: str) -> list[tuple[int, bool]]:
        """(0-based line, indented) of each ``def <name>(`` (all defs found in one text scan)."""
        if self._def_index is None:
            self._def_index = {}
            for match in _DEF_LINE.finditer(self.text):
                entry = (self.line_of(match.start()), bool(match.group(1)))
                self._def_index.setdefault(match.group(2), []).append(entry)
        return self._def_index.get(name, [])


#: ``setattr(<object>, <name>``: group 2 is the name when it is a string literal.
_SETATTR = re.compile(r"\bsetattr\([^,()]+,[ \t]*(?:([\"'])(\w+)\1)?")
#: Before ``self.<attr>``: a read of the whole list that cannot change it.
_READING_CONTEXT = re.compile(r"(?:\bin[ \t]+|\b(?:len|enumerate|torch\.cat|torch\.stack)\([ \t]*)$")
#: After it: the end of that read (``:`` of a ``for``, ``)`` of the call, more of a comprehension).
_READING_METHOD = re.compile(r"\.(?:values|items|keys|get)\(")
_CLOSING_CONTEXT = re.compile(r"(?::|\)|\]|[ \t]+if\b|[ \t]*$)")
#: An assignment at the start of what follows a subscript: ``=``, ``+=``, ``**=``... (not ``==``).
_STORE_AFTER = re.compile(r"(?:\*\*|//|<<|>>|[-+*/%&|^@])?=(?!=)")


def _read_only_subscript(tail: str) -> bool:
    """``tail`` starts with ``[``: is the subscript, closed on this line, only read? Past its
    ``]``, no assignment at the same bracket depth (``self.bufs[0] = x``, ``self.bufs[i], y = ...``),
    until a bracket of the enclosing expression closes (``f(self.bufs[0], k=1)``) or a comment."""
    depth = 0
    closed = False
    quote = ""
    i = 0
    while i < len(tail):
        char = tail[i]
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0 and not closed:
                closed = True
            elif depth < 0:
                return closed  # inside an enclosing expression: not an assignment target
        elif closed and depth == 0 and char in "=+-*/%&|^@<>:!":
            if char in "<>!" and tail.startswith("=", i + 1) and tail[i : i + 3] not in ("<<=", ">>="):
                i += 2
                continue  # `<=`, `>=`, `!=`: comparisons
            if char == ":" and tail.startswith("=", i + 1):
                return False
            if _STORE_AFTER.match(tail, i):
                return False
            if char == "=" and tail.startswith("==", i):
                i += 2
                continue
        i += 1
    return closed  # a subscript left open at the line's end: not one we can read


_REFERENCED_ATTRIBUTE = re.compile(r"\.([A-Za-z_]\w*)\b(?![ \t]*[(.=\w])")
_TOP_LEVEL_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)
_SELF_ASSIGNMENT = re.compile(r"^[ \t]*self\.(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
#: ``self.a, self.b = ...`` (also with plain names among the targets), on one line, unbracketed.
_SELF_TUPLE_ASSIGNMENT = re.compile(
    r"^[ \t]*((?:self\.\w+|[A-Za-z_]\w*)(?:[ \t]*,[ \t]*(?:self\.\w+|[A-Za-z_]\w*))+)[ \t]*,?[ \t]*=(?!=)", re.M
)
_TUPLE_TARGET_PREFIX = re.compile(r"^[ \t]*(?:(?:self\.\w+|[A-Za-z_]\w*)[ \t]*,[ \t]*)*$")
_SELF_ATTRIBUTE = re.compile(r"\bself\.(\w+)")
_CLASS_LEVEL_DECLARATION = re.compile(r"^[ \t]+(\w+)[ \t]*:[^=\n]*$", re.M)
#: Where attributes are written by name: ``setattr(x, "a", v)``, ``object.__setattr__(x, "a", v)``
#: (matched at the needle), ``x.__dict__[...]``/``x.__dict__.update(...)`` (searched on its line)
#: and ``vars(x)[...]``/``vars(x).update(...)``; groups: target (the object), name (a literal).
_INDIRECT_NEEDLES = (
    ("setattr(", re.compile(r"setattr\(\s*(?P<target>[\w.]+)?\s*,\s*(?:(?P<q>['\"])(?P<name>\w+)(?P=q))?")),
    ("__setattr__(", re.compile(r"__setattr__\(\s*(?P<target>[\w.]+)?\s*,\s*(?:(?P<q>['\"])(?P<name>\w+)(?P=q))?")),
    (
        "__dict__",
        re.compile(r"(?P<target>[\w.]+)\.__dict__\s*(?:\[\s*(?:(?P<q>['\"])(?P<name>\w+)(?P=q))?|\.update\b)"),
    ),
    (
        "vars(",
        re.compile(r"vars\(\s*(?P<target>[\w.]*)\s*\)\s*(?:\[\s*(?:(?P<q>['\"])(?P<name>\w+)(?P=q))?|\.update\b)"),
    ),
)
#: Before ``self.<attr>``: a ``del``, or a ``for`` whose target it is (no ``in`` yet: ``for b in
#: self.bufs`` reads it).
_DEL_OR_FOR = re.compile(r"\bdel\b[^=]*$|\bfor\b(?:(?!\bin\b)[^=])*$")
#: A line that assigns: its indentation and its target list (``a, b.c, d = ...``).
_ASSIGNMENT_LINE = re.compile(r"([ \t]*)((?:[\w.]+[ \t]*,[ \t]*)*[\w.]+)[ \t]*,?[ \t]*(?::[^=\n]*)?=(?!=)")
#: After ``.attr``: an assignment to it (``= v``, ``: T = v``; not ``==``).
_STORE_TAIL = re.compile(r"(?![\w])[ \t]*(?::[^=\n]*)?=(?!=)")
#: The attribute chain that ends where a search stops (``runner`` in ``runner.buf = ...``).
_CHAIN_END = re.compile(r"[\w.]*$")
#: Methods by which a class decides what attribute reads and writes do.
_ACCESS_HOOK = re.compile(r"def[ \t]+__(?:setattr|getattribute|getattr|delattr|new)__\b|^[ \t]+__init__[ \t]*=", re.M)
_DATACLASS_DECORATOR = re.compile(r"@(?:dataclasses\.)?dataclass\b")


#: What a line that binds a name other than by a leading assignment must hold.
_MAY_BIND = re.compile(r"for|with|except|:=|;|globals\(\)|setattr\(")
_ATTRIBUTE_STORE = re.compile(r"\.([A-Za-z_]\w*)[ \t]*=(?!=)")


def _binds_in_line(line: str, name: str) -> bool:
    """``line`` binds ``name`` in one of the forms ``_bound_otherwise`` looks for."""
    target = _FOR_TARGET.match(line)
    if target is not None and name in _WORD.findall(target.group(1)):
        return True
    if _WITH_OR_EXCEPT.match(line) and name in _AS_TARGET.findall(line):
        return True  # `with ... as name:`, `except E as name:` (an import's `as` is an import)
    if name in _WALRUS_TARGET.findall(line):
        return True
    if ("globals()" in line or "setattr(" in line) and (f'"{name}"' in line or f"'{name}'" in line):
        return True  # `globals()["make"] = ...`, `setattr(sys.modules[__name__], "make", ...)`
    for part in line.split(";")[1:]:
        assigned = _ASSIGNMENT_LINE.match(part)
        if assigned is not None and name in (t.strip() for t in assigned.group(2).split(",")):
            return True
        if _IMPORT_STATEMENT.match(part) and name in _imported_names(part):
            return True
    return False


def _imported_names(statement: str) -> set[str]:
    """The names an import statement binds (``import a.b`` binds ``a``; ``as`` names)."""
    import ast

    try:
        tree = ast.parse(statement.strip())
    except (SyntaxError, ValueError):
        return set()
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add(alias.asname or alias.name.split(".", 1)[0])
    return bound


#: ``NAME = True`` (or False, None, a decimal int) at module level, alone on its line.
_LITERAL_CONSTANT = re.compile(
    r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*(True|False|None|[0-9][0-9_]*)[ \t]*(?:#[^\n]*)?$", re.M
)
_HOST_DEVICE_CONSTANT = re.compile(
    r"""^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*(?:[\w.]*device\([ \t]*)?["']cpu["'][ \t]*\)?[ \t]*(?:#[^\n]*)?$""",
    re.M,
)
_FOR_TARGET = re.compile(r"[ \t]*(?:async[ \t]+)?for[ \t]+(.*?)[ \t]+in\b")
_WITH_OR_EXCEPT = re.compile(r"[ \t]*(?:async[ \t]+)?(?:with|except)\b")
_AS_TARGET = re.compile(r"\bas[ \t]+\(?([A-Za-z_]\w*)")
_WALRUS_TARGET = re.compile(r"([A-Za-z_]\w*)[ \t]*:=")
_WORD = re.compile(r"[A-Za-z_]\w*")
_IMPORTED_AS = re.compile(r"import[ \t][^\n]*?\bas[ \t]+([A-Za-z_]\w*)")
_GLOBAL = re.compile(r"global[ \t]+([\w, \t]+)")
_STAR_IMPORT = re.compile(r"import[ \t]+\*")
_IMPORT_STATEMENT = re.compile(r"[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b")


#: Text that may change which function ``obj.name(...)`` runs, or of which class ``obj`` is.
_DYNAMIC_DISPATCH = re.compile(
    r"__class__|__dict__|\bglobals\(|\blocals\(|\bsetattr\(|\bdelattr\(|__code__|\bpatch\b|metaclass"
    r"|__init_subclass__|__getattribute__|__new__"
)
_CLASS_ASSIGNMENT = re.compile(r"\.__class__[ \t]*=(?!=)")
#: Bases that redefine nothing an object's methods depend on.
_PLAIN_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic", "Protocol", "typing.Protocol"})


def _indent_width(text: str) -> int:
    return len(text[: len(text) - len(text.lstrip())].expandtabs())


def _body_indent(lines: list[str], cls: ClassRange) -> int:
    """The indentation width of the class body's statements."""
    for row in range(cls.start + 1, cls.end):
        text = lines[row]
        if text.strip() and not text.lstrip().startswith("#"):
            return _indent_width(text)
    return -1


def _open_brackets(text: str) -> int:
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
    return depth


def _before_assignment(after: str, depth: int = 0) -> bool:
    """Whether the text after an occurrence (on its line) holds an ``=`` that assigns, at the
    line's top bracket level (``depth``: brackets open at the occurrence): the occurrence is
    then (part of) an assignment's target, not a keyword argument's value."""
    for i, char in enumerate(after):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "#":
            return False
        elif char == "=" and depth == 0:
            previous = after[i - 1] if i else ""
            following = after[i + 1] if i + 1 < len(after) else ""
            if following != "=" and previous not in "=!<>:+-*/%&|^@":
                return True
        elif char == ";" and depth == 0:
            return False
    return False


#: ``register_buffer("w", ...)``, ``self._buffers["w"] = ...`` (and parameters).
_REGISTERED = re.compile(r"""(?:register_buffer|register_parameter|_buffers|_parameters)\W{1,3}(["'])(\w+)\1""")
#: ``register_buffer(name, ...)`` with a name that is not a literal.
_REGISTERED_BY_VARIABLE = re.compile(r"""register_(?:buffer|parameter)\([ \t]*(?![ \t"'])""")
#: ``"w" in self._buffers`` / ``not in``.
_IN_MODULE_STATE = re.compile(r"""(["'])(\w+)\1[ \t]+(?:not[ \t]+)?in[ \t]+[\w.]*_(?:buffers|parameters)\b""")
#: ``self.w = nn.Parameter(...)``.
_PARAMETER_ASSIGNED = re.compile(r"\bself\.(\w+)[ \t]*=[ \t]*(?:\w+\.)*Parameter\(")
