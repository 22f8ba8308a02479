"""Which file of the project an import names: ``from pkg.helpers import f``, ``from .helpers
import f``, ``import pkg.helpers as h``. Only files under the project root are read (a library
installed elsewhere is not the project's code, and its provenance is not ours to guess).

Every file looked at is recorded with its content digest ("" when it does not exist): an
analysis that read another file is valid only while those files are unchanged, and a file that
appears where none was changes which one an import means.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pinlint import source
from pinlint.analysis.file_text import FileText
from pinlint.analysis.names import LIBRARY_ROOTS, FileNames, scan_names
from pinlint.core.text import digest, split_lines
from pinlint.safeio import MAX_SOURCE_BYTES, UnsafeFile, lexically_within, read_regular, within


@dataclass
class SourceFile:
    """A project file's text, and what pure scans of it say (shared by every analysis in this
    process that reads the same content: each is a function of the text alone)."""

    path: str
    text: str
    digest: str
    _lines: list[str] | None = None
    _names: FileNames | None = None
    _scan: FileText | None = None
    #: 0-based def line -> its parsed segment (None: it does not parse).
    parses: dict[int, object] = field(default_factory=dict)
    _may_copy: dict[tuple[int, int], bool] = field(default_factory=dict)

    def copy_free(self, start: int) -> bool:
        """The function whose ``def`` is on 0-based line ``start`` makes no ``non_blocking`` copy,
        nor do the functions of this file it calls (memoised: many files ask about the same
        helpers)."""
        from pinlint.analysis.copy_text import may_copy

        return not may_copy(self.lines, self.text, self.scan, start, self._may_copy)

    @property
    def lines(self) -> list[str]:
        # Split on first need: the caller triage reads many modules' texts and few of their lines.
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    @property
    def names(self) -> FileNames:
        if self._names is None:
            self._names = scan_names(self.text, self.lines)
        return self._names

    @property
    def scan(self) -> FileText:
        if self._scan is None:
            self._scan = FileText(self.lines)
        return self._scan


#: path -> (size, mtime_ns, the file): files read by earlier analyses of this process, reused
#: while their size and mtime are unchanged (a worker analyses many files importing the same).
_READ: dict[str, tuple[int, int, SourceFile]] = {}
_MAX_KEPT = 2048


class ModuleFiles:
    """Resolve modules to project files, relative to the file being analysed, and read them."""

    def __init__(self, root: str | None, path: str, overlay: dict[str, str] | None = None) -> None:
        self.root = os.path.abspath(root) if root is not None else None
        self.path = os.path.abspath(path)
        #: Texts to use instead of the files' (the fix loop's candidate text of a file).
        self.overlay = overlay or {}
        #: Every path looked at -> its digest ("" absent or unreadable), for cache validation.
        self.consulted: dict[str, str] = {}
        self._read: dict[str, SourceFile | None] = {}
        self._bases: list[str] | None = None
        self._modules: dict[tuple[int, str], str | None] = {}

    # ------------------------------------------------------------------ resolution
    def module_file(self, level: int, module: str) -> str | None:
        """The file of ``module`` (``level`` leading dots), or None when it is not a project file."""
        key = (level, module)
        if key not in self._modules:
            self._modules[key] = self._module_file(level, module)
        return self._modules[key]

    def _module_file(self, level: int, module: str) -> str | None:
        if self.root is None:
            return None  # no project around the file: nothing is known to be ours
        parts = [p for p in module.split(".") if p] if module else []
        if level > 0:
            base = os.path.dirname(self.path)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            if not parts:
                return None
            bases = self._absolute_bases()
        absent: list[str] = []
        found: str | None = None
        for base in bases:
            found = self._in_base(base, parts, absent)
            if found is not None:
                break
        # The places looked at matter: a file created there would be imported instead (or,
        # for a module found nowhere, at all: the project may grow a module of that name; not
        # recorded for torch, numpy and the standard library, which are never the project's).
        if found is not None or level > 0 or parts[0] not in LIBRARY_ROOTS:
            for path in absent:
                self.consulted.setdefault(path, "")
        return found

    def _in_base(self, base: str, parts: list[str], absent: list[str]) -> str | None:
        stem = os.path.join(base, *parts) if parts else base
        # A package directory wins over a module of the same name, as in Python's import system.
        candidates = [os.path.join(stem, "__init__.py")] + ([stem + ".py"] if parts else [])
        for candidate in candidates:
            assert self.root is not None
            if not lexically_within(candidate, self.root):
                return None  # `from ....x import f` climbing out of the project
            if self._exists(candidate):
                return candidate
            absent.append(candidate)
        return None

    def _absolute_bases(self) -> list[str]:
        """Where absolute imports of the project start: the directory above the file's top
        package, the project root and its ``src/``."""
        if self._bases is None:
            directory = os.path.dirname(self.path)
            while directory != self.root:
                # Which directories are packages decides the base: an `__init__.py` created
                # or removed there moves it (recorded for the cache, content and all).
                init = os.path.join(directory, "__init__.py")
                if not os.path.isfile(init):
                    self.consulted.setdefault(init, "")
                    break
                self.read(init)
                directory = os.path.dirname(directory)
            assert self.root is not None
            bases = [directory, self.root, os.path.join(self.root, "src")]
            self._bases = [b for b in dict.fromkeys(bases) if lexically_within(b, self.root)]
        return self._bases

    def _exists(self, path: str) -> bool:
        if path in self.overlay:
            return True
        # A link out of the project (a committed symlink to a file elsewhere) is not the
        # project's code and is never read, as discovery never checks it.
        return os.path.isfile(path) and self.root is not None and within(path, self.root)

    # ------------------------------------------------------------------ reading
    def read(self, path: str) -> SourceFile | None:
        """The decoded text of a project file (bounded, regular files only), memoised."""
        if path in self._read:
            return self._read[path]
        got: SourceFile | None = None
        if path in self.overlay:
            text = self.overlay[path]
            got = SourceFile(path, text, digest(text.encode("utf-8")))
        else:
            got = shared_read(path)
        self.consulted[path] = got.digest if got is not None else ""
        self._read[path] = got
        return got


def shared_read(path: str) -> SourceFile | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    kept = _READ.get(path)
    if kept is not None and kept[0] == info.st_size and kept[1] == info.st_mtime_ns:
        return kept[2]
    try:
        data = read_regular(path, MAX_SOURCE_BYTES)
        text = source.decode(data).text
    except (OSError, UnsafeFile, source.DecodeError):
        return None  # unreadable: nothing is known from it
    got = SourceFile(path, text, digest(data))
    if len(_READ) >= _MAX_KEPT:
        _READ.clear()
    _READ[path] = (info.st_size, info.st_mtime_ns, got)
    return got
