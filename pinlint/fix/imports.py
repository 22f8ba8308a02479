"""Imports a fix needs, placed through a real parse (``ast``), the way isort/ruff would place them.

Where a new ``from M import name`` may go is decided by what runs at import time: only the
leading statements of the module that cannot call into the file's own functions (the docstring,
imports, ``__future__`` imports, ``if TYPE_CHECKING:`` blocks, ``try:`` blocks of imports,
assignments without calls) may precede it, so no module-level code can use the name before it is
bound, and it never lands inside a string. Within that region it

* joins an existing top-level ``from M import a, b`` (or parenthesised list) in sorted position;
* else goes into its isort section (future, standard library, third party, first party, local) in
  sorted order, with the blank lines between sections that isort/ruff ``I001`` expects;
* else, in a file without an import block (``import torch`` only inside a function), goes after
  the docstring and ``__future__`` imports, followed by the blank lines a formatter would leave.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from pinlint.core.diagnostics import Edit, Location
from pinlint.core.text import line_ending, split_lines


@dataclass(frozen=True)
class ImportRequest:
    """``from <module> import <name>``."""

    module: str
    name: str

    @property
    def line(self) -> str:
        return f"from {self.module} import {self.name}"


# isort sections, in order.
FUTURE, STDLIB, THIRD_PARTY, FIRST_PARTY, LOCAL = range(5)


def section(module: str, first_party: frozenset[str]) -> int:
    if module == "__future__":
        return FUTURE
    if module.startswith("."):
        return LOCAL
    top = module.split(".", 1)[0]
    if top in first_party:
        return FIRST_PARTY
    if top in sys.stdlib_module_names:
        return STDLIB
    return THIRD_PARTY


def _sort_key(node: ast.Import | ast.ImportFrom) -> tuple[int, str, str]:
    # isort's default (force-sort-within-sections off): `import x` before `from x import y`.
    if isinstance(node, ast.Import):
        name = node.names[0].name
        return (0, name.lower(), name)
    name = "." * node.level + (node.module or "")
    return (1, name.lower(), name)


def _member_key(name: str) -> tuple[int, str, str]:
    """isort/ruff ``order-by-type``: CONSTANTS, then Classes, then everything else."""
    if name.isupper() and len(name) > 1:
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    return (kind, name.lower(), name)


def _is_import_only(nodes: list[ast.stmt]) -> bool:
    return all(isinstance(n, (ast.Import, ast.ImportFrom, ast.Pass)) or _is_inert_assign(n) for n in nodes)


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(node))


def _is_inert_assign(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return (
            node.value is None
            or not _has_call(node)
            and not any(isinstance(n, (ast.Subscript, ast.Attribute, ast.BinOp)) for n in ast.walk(node.value))
        )
    return False


def _is_inert(node: ast.stmt, index: int) -> bool:
    """A leading statement that cannot run the file's own code."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if (
        index == 0
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return True  # the docstring
    if _is_inert_assign(node):
        return True
    if isinstance(node, ast.If) and not _has_call(node.test):
        return _is_import_only(node.body) and _is_import_only(node.orelse)
    if isinstance(node, ast.Try):
        handlers_ok = all(_is_import_only(h.body) for h in node.handlers)
        return _is_import_only(node.body) and handlers_ok and _is_import_only(node.orelse) and not node.finalbody
    return False


def import_region(tree: ast.Module) -> list[ast.stmt]:
    """The leading statements before which nothing of the file's own code can run."""
    region = []
    for index, node in enumerate(tree.body):
        if not _is_inert(node, index):
            break
        region.append(node)
    return region


def _starts_line(lines: list[str], node: ast.stmt) -> bool:
    return not lines[node.lineno - 1][: node.col_offset].strip()


def _ends_line(lines: list[str], node: ast.stmt) -> bool:
    row = (node.end_lineno or node.lineno) - 1
    rest = lines[row].encode("utf-8")[node.end_col_offset or 0 :].decode("utf-8", "replace").strip()
    return not rest or rest.startswith("#")


def _blank(lines: list[str], row: int) -> bool:
    """Whether 0-based line ``row`` exists and is blank."""
    return 0 <= row < len(lines) and not lines[row].strip()


#: The last answer, with its text and tree (compared by identity): every fix of a file asks for
#: the same import, and each answer splits the whole text into lines.
_last: tuple[str, ast.Module, tuple[ImportRequest, frozenset[str], int], Edit | str] | None = None


def import_edit(
    request: ImportRequest,
    text: str,
    tree: ast.Module,
    *,
    first_party: frozenset[str] = frozenset(),
    line_length: int = 88,
) -> Edit | str:
    """The edit adding ``request`` to the file, or why it cannot be added."""
    global _last
    key = (request, first_party, line_length)
    if _last is not None and _last[0] is text and _last[1] is tree and _last[2] == key:
        return _last[3]
    answer = _import_edit(request, text, tree, first_party, line_length)
    _last = (text, tree, key, answer)
    return answer


def _import_edit(
    request: ImportRequest, text: str, tree: ast.Module, first_party: frozenset[str], line_length: int
) -> Edit | str:
    lines = split_lines(text)
    newline = line_ending(lines[0]) if lines else "\n"
    region = import_region(tree)
    tops = [n for n in region if isinstance(n, (ast.Import, ast.ImportFrom))]
    for node in tops:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == request.module:
            if any(a.name == request.name for a in node.names):
                return f"`{request.name}` is already imported from `{request.module}` but not bound here"
            if any(a.name == "*" for a in node.names):
                continue
            edit = _join(node, request.name, lines, newline, line_length)
            if edit is not None:
                return edit
    if lines and not lines[-1].endswith(("\n", "\r")):
        # The file ends without a newline: the line-based insertions below need one.
        lines = [*lines[:-1], lines[-1] + newline]
    line = request.line + newline
    ours = section(request.module, first_party)
    key = (1, request.module.lower(), request.module)
    placeable = [n for n in tops if _starts_line(lines, n) and _ends_line(lines, n)]
    if placeable:
        same = [n for n in placeable if section(_module_of(n), first_party) == ours]
        if same:
            for node in same:
                if _sort_key(node) > key:
                    return _insert(node.lineno, line)
            return _insert((same[-1].end_lineno or same[-1].lineno) + 1, line)
        lower = [n for n in placeable if section(_module_of(n), first_party) < ours]
        if lower:
            after = (lower[-1].end_lineno or lower[-1].lineno) + 1
            # A new section: a blank line before it, and one after when the next line is code.
            tail = "" if _blank(lines, after - 1) or after - 1 >= len(lines) else newline
            return _insert(after, newline + line + tail)
        higher = placeable[0]
        return _insert(higher.lineno, line + newline)
    # No import block to join: after the docstring and `__future__` imports.
    anchor = 0
    for node in region:
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "__future__"
            or node is tree.body[0]
            and isinstance(node, ast.Expr)
        ):
            anchor = node.end_lineno or node.lineno
        else:
            break
    if anchor == 0:
        # Before the first statement, below the shebang, encoding line and header comments.
        first = tree.body[0].lineno if tree.body else len(lines) + 1
        anchor = first - 1
        while anchor > 0 and _blank(lines, anchor - 1):
            anchor -= 1
        head = newline if anchor > 0 else ""
    else:
        head = newline
    following = anchor  # 0-based index of the line after the anchor
    next_code = following
    while next_code < len(lines) and not lines[next_code].strip():
        next_code += 1
    blank_after = next_code - following
    if next_code >= len(lines):
        tail = ""
    else:
        nxt = lines[next_code].lstrip()
        wanted = 2 if nxt.startswith(("def ", "async def ", "class ", "@")) else 1
        tail = newline * max(0, wanted - blank_after)
    if head and _blank(lines, anchor):
        # A blank line already follows the anchor: put the import after it.
        return _insert(anchor + 2, line + tail if blank_after <= 1 else line + newline)
    return _insert(anchor + 1, head + line + tail)


def _module_of(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return node.names[0].name
    return "." * node.level + (node.module or "")


def _insert(row: int, content: str) -> Edit:
    return Edit(content, Location(row, 1), Location(row, 1))


def _char_col(line: str, byte_col: int) -> int:
    """1-based character column of a 0-based UTF-8 byte offset."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1


def _join(node: ast.ImportFrom, name: str, lines: list[str], newline: str, line_length: int) -> Edit | None:
    """Add ``name`` to ``from M import a, b`` in sorted position; None when the layout is unusual."""
    aliases = node.names
    position = len(aliases)
    for i, alias in enumerate(aliases):
        if _member_key(alias.name) > _member_key(name):
            position = i
            break
    first_row, last_row = node.lineno, node.end_lineno or node.lineno
    if first_row == last_row:
        line = lines[first_row - 1]
        if len(line.rstrip("\r\n")) + len(name) + 2 > line_length:
            return None  # the joined line would overflow: a separate import is the lesser evil
        if position < len(aliases):
            at = aliases[position]
            col = _char_col(line, at.col_offset)
            return Edit(f"{name}, ", Location(first_row, col), Location(first_row, col))
        at = aliases[-1]
        col = _char_col(line, at.end_col_offset or 0)
        return Edit(f", {name}", Location(first_row, col), Location(first_row, col))
    # Parenthesised over several lines: only the one-name-per-line layout is joined.
    rows = [a.lineno for a in aliases]
    if len(set(rows)) != len(rows) or rows[0] == first_row:
        return None
    indent_line = lines[rows[0] - 1]
    indent = indent_line[: len(indent_line) - len(indent_line.lstrip())]
    if position < len(aliases):
        row = aliases[position].lineno
        return Edit(f"{indent}{name},{newline}", Location(row, 1), Location(row, 1))
    last = aliases[-1]
    line = lines[last.lineno - 1]
    col = _char_col(line, last.end_col_offset or 0)
    rest = line[col - 1 :].lstrip()
    if rest.startswith(","):
        row = last.lineno + 1
        return Edit(f"{indent}{name},{newline}", Location(row, 1), Location(row, 1))
    return Edit(f",{newline}{indent}{name}", Location(last.lineno, col), Location(last.lineno, col))
