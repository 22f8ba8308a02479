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
        self._elsewhere_memo: dict[str, bool] = {}
        self._enclosing: EnclosingDefs | None = None
        #: def name -> [(0-based line, indented)]; attribute -> lines of ``self.<attr> = ...``;
        #: names declared at class level (``x: int``).
        self._def_index: dict[str, list[tuple[int, bool]]] | None = None
        self._assign_index: dict[str, list[int]] | None = None
        self._declared: set[str] | None = None
        self._indirect: bool | None = None
        self._line_index: LineIndex | None = None
        self._top_assigned: set[str] | None = None
        self._top_classes: dict[str, list[ClassRange]] | None = None

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
        """0-based lines of the class family's ``self.<attr> = ...``; None: not followable.
        A text scan, memoised: a copying method asks for the same attribute again and again."""
        memo_key = (class_name, attr)
        if memo_key in self._attribute_memo:
            return self._attribute_memo[memo_key]
        found: list[int] | None = []
        family = self.family(class_name)
        if family is None or not attr.isidentifier() or self._sets_indirectly():
            found = None  # set in ways the scan below does not see
        elif attr in self._declared_names():
            found = None  # declared at class level (a dataclass field): filled by whoever calls
        elif self.assigned_elsewhere(attr):
            found = None  # `runner.buf = pinned` from outside the class may replace it
        else:
            for line in self._assignments().get(attr, ()):
                if not any(c.start < line < c.end for c in family):
                    continue  # another class's attribute of the same name
                if any(c.start < line < c.end and c.indent > _class_indent(family, line) for c in self.classes()):
                    continue  # a class nested inside: its `self` is another object
                found.append(line)
        self._attribute_memo[memo_key] = found
        return found

    def assigned_elsewhere(self, attr: str) -> bool:
        """Whether this file assigns ``<x>.<attr> = ...`` on anything but ``self`` (another
        object's attribute of that name, or this class's, set from outside its methods)."""
        if attr not in self._elsewhere_memo:
            found = False
            for match in re.finditer(rf"\.{re.escape(attr)}[ \t]*(?::[^=\n]*)?=(?!=)", self.text):
                start = match.start()
                line_start = self.text.rfind("\n", 0, start) + 1
                base = re.search(r"[\w.]*$", self.text[line_start:start])
                if base is not None and base.group() and base.group() != "self":
                    found = True
                    break
            self._elsewhere_memo[attr] = found
        return self._elsewhere_memo[attr]

    def top_level_classes(self, name: str) -> list[ClassRange]:
        """The classes named ``name`` at module level (by name, indexed once)."""
        if self._top_classes is None:
            self._top_classes = {}
            for cls in self.classes():
                if cls.indent == 0:
                    self._top_classes.setdefault(cls.name, []).append(cls)
        return self._top_classes.get(name, [])

    def rebound(self, name: str) -> bool:
        """Whether a module-level assignment binds ``name`` (``f = other``)."""
        if self._top_assigned is None:
            self._top_assigned = set(_TOP_LEVEL_ASSIGNMENT.findall(self.text))
        return name in self._top_assigned

    def assigns_in(self, cls: ClassRange, attr: str) -> bool:
        """Whether a method of ``cls`` assigns ``self.<attr>``."""
        return any(cls.start < line < cls.end for line in self._assignments().get(attr, ()))

    def enclosing_def(self, line: int) -> int | None:
        if self._enclosing is None:
            self._enclosing = EnclosingDefs(self.lines)
        return self._enclosing.of(line)

    def _declared_names(self) -> set[str]:
        if self._declared is None:
            self._declared = set(_CLASS_LEVEL_DECLARATION.findall(self.text))
        return self._declared

    def _assignments(self) -> dict[str, list[int]]:
        if self._assign_index is None:
            self._assign_index = {}
            for match in _SELF_ASSIGNMENT.finditer(self.text):
                self._assign_index.setdefault(match.group(1), []).append(self.line_of(match.start()))
        return self._assign_index

    def _sets_indirectly(self) -> bool:
        if self._indirect is None:
            self._indirect = re.search(r"setattr\(\s*self|__dict__", self.text) is not None
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


_TOP_LEVEL_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)
_SELF_ASSIGNMENT = re.compile(r"^[ \t]*self\.(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_CLASS_LEVEL_DECLARATION = re.compile(r"^[ \t]+(\w+)[ \t]*:[^=\n]*$", re.M)
