"""Call sites: the first *user* frame of the current stack, found cheaply.

``sys._getframe`` walking costs ~1.5 µs at depth ~20; ``inspect.stack()``
reads source files and costs milliseconds, so it is never used. Columns are resolved lazily from
``co_positions()`` (Python 3.11+) only when a finding is rendered.
"""

from __future__ import annotations

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

    def __str__(self) -> str:
        return f"{self.filename}:{self.row}"

    @cached_property
    def span(self) -> tuple[int, int, int, int]:
        """``(row, column, end_row, end_column)``, 1-based columns counted in characters (ruff's
        convention). The span is that of the call expression being executed; without position
        information (Python 3.10, ``-X no_debug_ranges``) it is the whole row from column 1."""
        fallback = (self.row, 1, self.row, 1)
        positions = getattr(self.code, "co_positions", None)
        if positions is None or self.lasti < 0:
            return fallback
        try:
            entry = list(positions())[self.lasti // 2]
        except (IndexError, ValueError):
            return fallback
        row, end_row, col, end_col = entry
        if row is None or col is None:
            return fallback
        end_row = end_row if end_row is not None else row
        end_col = end_col if end_col is not None else col
        return (
            row,
            _char_column(self.filename, row, col),
            end_row,
            _char_column(self.filename, end_row, end_col),
        )


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
