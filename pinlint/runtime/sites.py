"""Call sites: the first *user* frame of the current stack, found cheaply.

``sys._getframe`` walking costs ~1.5 µs at depth ~20; ``inspect.stack()``
reads source files and costs milliseconds, so it is never used. Columns are resolved lazily from
``co_positions()`` (Python 3.11+) only when a finding is rendered.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from types import CodeType, FrameType

import pinlint

_PINLINT_DIR = os.path.dirname(os.path.abspath(pinlint.__file__)) + os.sep
_ALWAYS_SKIPPED_FILES = frozenset({contextlib.__file__, os.path.abspath(contextlib.__file__)})


@dataclass(frozen=True)
class Site:
    """A position in user code: absolute filename, 1-based row, and the function's name."""

    filename: str
    row: int
    function: str = "<module>"
    #: The code object and instruction offset, kept to compute columns on demand.
    code: CodeType | None = field(default=None, compare=False, repr=False, hash=False)
    lasti: int = field(default=-1, compare=False, repr=False, hash=False)
    #: A span already known (a host read narrowed to the expression read, see ``read_site``).
    known_span: tuple[int, int, int, int] | None = field(default=None, compare=False, repr=False, hash=False)

    def __str__(self) -> str:
        return f"{self.filename}:{self.row}"

    @cached_property
    def span(self) -> tuple[int, int, int, int]:
        """``(row, column, end_row, end_column)``, 1-based columns counted in characters (ruff's
        convention). The span is that of the call expression being executed; without position
        information (Python 3.10, ``-X no_debug_ranges``) it is the whole row from column 1."""
        if self.known_span is not None:
            return self.known_span
        raw = self.byte_span
        if raw is None:
            return (self.row, 1, self.row, 1)
        row, col, end_row, end_col = raw
        return (
            row,
            _char_column(self.filename, row, col),
            end_row,
            _char_column(self.filename, end_row, end_col),
        )

    @property
    def byte_span(self) -> tuple[int, int, int, int] | None:
        """``(row, column, end_row, end_column)`` of the instruction, columns as 0-based UTF-8 byte
        offsets (``ast``'s convention); None without position information."""
        positions = getattr(self.code, "co_positions", None)
        if positions is None or self.lasti < 0:
            return None
        try:
            entry = list(positions())[self.lasti // 2]
        except (IndexError, ValueError):
            return None
        row, end_row, col, end_col = entry
        if row is None or col is None:
            return None
        return (row, col, end_row if end_row is not None else row, end_col if end_col is not None else col)


def _char_column(filename: str, row: int, byte_col: int) -> int:
    """co_positions columns are UTF-8 byte offsets; reports count characters, from 1."""
    linecache.checkcache(filename)  # the file may have been rewritten (e.g. by --fix) since cached
    line = linecache.getline(filename, row)
    if not line:
        return byte_col + 1
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace")) + 1


class SiteFinder:
    """Finds the first frame outside the skipped directories (torch/, pinlint/, contextlib).

    The per-filename verdict is cached, so a walk costs one dict lookup per frame.
    """

    def __init__(self, skip_dirs: tuple[str, ...] = (), module_to_file: str | None = None) -> None:
        self._skip_dirs = tuple(os.path.abspath(d).rstrip(os.sep) + os.sep for d in skip_dirs) + (_PINLINT_DIR,)
        #: co_filename -> absolute path for user files, None for skipped ones.
        self._cache: dict[str, str | None] = {}
        #: ``torch/nn/modules/module.py``: a ``Tensor.to`` issued from its ``to`` is ``nn.Module.to``.
        self._module_to_file = module_to_file

    def _classify(self, filename: str) -> str | None:
        if filename in _ALWAYS_SKIPPED_FILES:
            verdict = None
        elif filename.startswith("<"):
            verdict = filename  # "<string>", "<stdin>": keep as-is, it is user code
        else:
            absolute = os.path.abspath(filename)
            verdict = None if absolute.startswith(self._skip_dirs) else absolute
        self._cache[filename] = verdict
        return verdict

    def find(self, frame: FrameType | None = None) -> tuple[Site | None, str | None]:
        """Return the user site and, when the call came through ``nn.Module.to``, ``"nn.Module.to"``."""
        f = frame if frame is not None else sys._getframe(1)
        cache = self._cache
        via: str | None = None
        while f is not None:
            code = f.f_code
            filename = code.co_filename
            try:
                absolute = cache[filename]
            except KeyError:
                absolute = self._classify(filename)
            if absolute is not None:
                return Site(absolute, f.f_lineno or code.co_firstlineno, code.co_name, code, f.f_lasti), via
            if code.co_name == "to" and filename == self._module_to_file:
                via = "nn.Module.to"
            f = f.f_back
        return None, via


# ---------------------------------------------------------------------------- host reads (PIN004)
#: filename -> (its text, its ast), for narrowing host reads (parsed only when one is reported).
_TREES: dict[str, tuple[str, ast.Module | None]] = {}


def _tree(filename: str) -> ast.Module | None:
    linecache.checkcache(filename)
    text = "".join(linecache.getlines(filename))
    cached = _TREES.get(filename)
    if cached is not None and cached[0] == text:
        return cached[1]
    try:
        tree: ast.Module | None = ast.parse(text) if text else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None  # the file changed into something else: keep the instruction's span
    _TREES[filename] = (text, tree)
    return tree


@dataclass(frozen=True)
class ReadHint:
    """Which input of the call that read was the tensor read: its position among the call's
    arguments (``self`` first for a method), and its index inside a list or tuple argument."""

    operand: int | None = None
    element: int | None = None
    method: bool = False


def read_site(site: Site, hint: ReadHint | None = None) -> Site:
    """The site of a host read narrowed to the expression read, where ``pinlint check`` reports
    it: the instruction that ran is ``print(cpu)`` (a builtin given one argument), ``if cpu[0]:``
    (a truth test), ``cpu[0] > 0`` (an operation), ``torch.cat([x, cpu])`` (a function given the
    tensor); the read is ``cpu``, ``cpu[0]``, ``cpu[0]``, ``cpu``. Anything else keeps the
    instruction's span (``cpu.tolist()`` starts where ``cpu`` does)."""
    raw = site.byte_span
    tree = _tree(site.filename) if raw is not None and not site.filename.startswith("<") else None
    if raw is None or tree is None:
        return site
    row, col, end_row, end_col = raw
    matches = [
        node
        for node in ast.walk(tree)
        if (getattr(node, "lineno", None), getattr(node, "col_offset", None)) == (row, col)
        and (getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)) == (end_row, end_col)
    ]
    for node in reversed(matches):  # ast.walk is breadth-first: the innermost match comes last
        read = _read_operand(node, hint or ReadHint())
        if read is not None:
            end = read.end_lineno or read.lineno
            span = (
                read.lineno,
                _char_column(site.filename, read.lineno, read.col_offset),
                end,
                _char_column(site.filename, end, read.end_col_offset or read.col_offset),
            )
            return Site(site.filename, read.lineno, site.function, site.code, site.lasti, span)
    return site


def _read_operand(node: ast.AST, hint: ReadHint) -> ast.expr | None:
    from pinlint import torch_api

    if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)):
        test = node.test
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        return test
    if isinstance(node, ast.Call):
        args = node.args
        if isinstance(node.func, ast.Name) and node.func.id in torch_api.D2H_READING_BUILTINS:
            # `print(cpu)`: the builtin reads its argument (with several, which one is not known).
            return args[0] if len(args) == 1 and not isinstance(args[0], ast.Starred) else None
        if hint.operand is None:
            return None
        index = hint.operand - 1 if hint.method else hint.operand
        if index < 0 or index >= len(args) or any(isinstance(a, ast.Starred) for a in args[: index + 1]):
            return None  # the receiver itself (the span starts there), or not a visible argument
        arg = args[index]
        if hint.element is not None and isinstance(arg, (ast.List, ast.Tuple)):
            elements = arg.elts
            if hint.element < len(elements) and not any(isinstance(e, ast.Starred) for e in elements):
                return elements[hint.element]
            return None
        return arg
    if isinstance(node, (ast.Compare, ast.BinOp)) and hint.operand in (0, 1):
        if isinstance(node, ast.Compare):
            if len(node.comparators) != 1:
                return None  # `a < b < c`: which comparison ran is not known here
            left, right = node.left, node.comparators[0]
        else:
            left, right = node.left, node.right
        if hint.operand == 1 or isinstance(left, ast.Constant):
            return right  # `0 < cpu[0]` runs as `cpu[0].__gt__(0)`: the tensor is the right operand
        return left
    return None
