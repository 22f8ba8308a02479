"""Classes of a file, found by a text scan: their line ranges, bases, and the family of classes
whose methods may set one ``self.x`` (for the summaries of ``analysis.summaries``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from pinlint.analysis.cst_walk import children

_CLASS = re.compile(r"^([ \t]*)class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?[ \t]*:")


@dataclass(frozen=True)
class ClassRange:
    name: str
    start: int  # 0-based line of `class`
    end: int  # exclusive
    indent: int
    bases: tuple[str, ...]  # their last names (`Module` of `nn.Module`)
    #: The bases as written (`nn.Module`), in the same order.
    written: tuple[str, ...] = ()


def class_ranges(lines: list[str]) -> list[ClassRange]:
    found = []
    # Only the lines that mention `class` are matched (a Python-level match per line of a large
    # file costs more than the whole scan otherwise).
    for index in [i for i, line in enumerate(lines) if "class" in line]:
        match = _CLASS.match(lines[index])
        if match is None:
            continue
        indent = len(match.group(1).expandtabs())
        end = len(lines)
        for j in range(index + 1, len(lines)):
            text = lines[j]
            if text.strip() and not text.lstrip().startswith("#"):
                if len(text) - len(text.lstrip()) <= indent and not text.lstrip().startswith((")", "]")):
                    end = j
                    break
        written = tuple(b.strip() for b in (match.group(3) or "").split(",") if b.strip())
        bases = tuple(b.rsplit(".", 1)[-1] for b in written)
        found.append(ClassRange(match.group(2), index, end, indent, bases, written))
    return found


def class_at(classes: list[ClassRange], line: int) -> str | None:
    """The innermost class around 0-based ``line``."""
    best: ClassRange | None = None
    for cls in classes:
        if cls.start < line < cls.end and (best is None or cls.start > best.start):
            best = cls
    return best.name if best else None


def family(classes: list[ClassRange], name: str) -> list[ClassRange] | None:
    """The class, its bases and its subclasses among ``classes``; None when ``name`` is not
    exactly one of them (defined twice, or not at all: which one runs is not known)."""
    by_name: dict[str, list[ClassRange]] = {}
    for cls in classes:
        by_name.setdefault(cls.name, []).append(cls)
    if len(by_name.get(name, [])) != 1:
        return None
    members = {name}
    changed = True
    while changed:
        changed = False
        for cls in classes:
            related = cls.name in members or any(b in members for b in cls.bases)
            bases_here = [b for b in cls.bases if b in by_name and cls.name in members]
            for new in [cls.name, *bases_here] if related else []:
                if new not in members:
                    members.add(new)
                    changed = True
    return [c for c in classes if c.name in members]


def _method_classes(module: cst.Module) -> dict[int, str]:
    """id(FunctionDef) -> the class it is a method of (for a module parsed whole)."""
    out: dict[int, str] = {}
    stack: list[tuple[cst.CSTNode, str | None]] = [(module, None)]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, cst.ClassDef):
            for child in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                stack.append((child, node.name.value))
            continue
        if isinstance(node, cst.FunctionDef):
            if owner is not None:
                out[id(node)] = owner
            owner = None  # a def inside it is a closure, not a method
        for child in children(node):
            stack.append((child, owner if not isinstance(node, cst.FunctionDef) else None))
    return out


def _class_indent(family: list[ClassRange], line: int) -> int:
    return max((c.indent for c in family if c.start < line < c.end), default=0)
