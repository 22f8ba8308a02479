"""Triage, second pass: a file that never writes ``non_blocking`` may still hand a host tensor to
a project function that copies it (``upload(torch.zeros(n), dev)``, ``upload`` imported from a
module of the project that does ``t.to(device, non_blocking=True)``).

The first triage reads a file's own bytes; this pass reads, besides, the project modules its
imports name, and keeps the file when it calls a function or class imported from one whose
definition there may copy non_blocking (a ``non_blocking`` in its text, or in a function of that
module it calls). Text scans only, so that it costs little on the thousands of files of a large
project; the analysis then decides which calls really hand a tensor to a copy.

The answer is a function of the file's text and the texts of the modules it read, which are
returned with their digests: a cached answer holds while they are unchanged, and a one-file run
gives the same answer as a whole-project run. (Where a module is looked for and not found is not
recorded: a module created later where an import would find it is noticed when the importing
file changes, or by a run without the cache.)
"""

from __future__ import annotations

import os
import re

from pinlint.analysis.names import LIBRARY_ROOTS
from pinlint.analysis.project_modules import SourceFile, shared_read
from pinlint.analysis.source_tokens import derived_from
from pinlint.analysis.star_imports import provider as star_provider
from pinlint.analysis.star_imports import star_imports
from pinlint.analysis.test_files import is_test_file
from pinlint.safeio import lexically_within, within

#: ``from <dots><module> import <names>`` (the names in parentheses may span lines). Both
#: patterns start with their keyword, which the regex engine finds by a fast literal search (a
#: leading ``^[ \t]*`` is tried at every line, five times slower); ``_at_line_start`` checks the rest.
_FROM_IMPORT = re.compile(r"from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)")
#: ``import pkg.helpers as h`` and ``import helpers`` (a module then called as ``h.f(...)``).
_IMPORT = re.compile(r"import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?[ \t]*(?:#|$)", re.M)
#: The module-level functions and classes of a file.
_TOP_LEVEL_DEF = re.compile(r"\n(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
#: How many re-exports (``from .impl import f`` in a package's ``__init__.py``) are followed,
#: as the analysis does.
_MAX_REEXPORTS = 3


def calls_project_copier(text: str, path: str, root: str) -> tuple[bool, dict[str, str]]:
    """Whether ``text`` (the file at ``path``) calls a function or class imported from a project
    module whose definition may copy non_blocking; and the project files read to decide, with
    their digests."""
    if is_test_file(path, root):
        # A test hands the project's functions whatever it likes (host tensors standing in for
        # device ones): what its calls would report, in the project's code, is not the code's.
        return False, {}
    resolver = _resolver(root)
    directory = os.path.dirname(os.path.abspath(path))
    read: dict[str, str] = {}
    for match in _FROM_IMPORT.finditer(text):
        dots, module, imported = match.groups()
        level = len(dots)
        if not level and (not module or module.split(".", 1)[0] in LIBRARY_ROOTS):
            continue  # torch, numpy, the standard library: never the project's code
        if not _at_line_start(text, match.start()):
            continue  # `from` inside a line (a docstring's prose): not an import
        target = resolver.module_file(directory, level, module, read)
        if imported.strip() == "*":
            if target is not None and _calls_star_copier(resolver, target, text, read):
                return True, read
            continue
        for name, local in _imported_names(imported):
            # The copier first (memoised for the run), then a substring test of the call
            # (`upload(` also matches `x.upload(`: it may say yes where the analysis then finds
            # nothing, never the reverse).
            if (
                target is not None
                and (f"{local}(" in text or derived_from(local, text))
                and _calls(_may_copy(resolver, target, name, _MAX_REEXPORTS, read), text)
            ):
                return True, read
            if target is None or resolver.may_be_submodule(target, name):
                # `from pkg import helpers`, then `helpers.upload(...)`: a submodule.
                submodule = resolver.module_file(directory, level, f"{module}.{name}" if module else name, read)
                if (
                    submodule is not None
                    and f"{local}." in text
                    and _calls_copier_of(resolver, submodule, local, text, read)
                ):
                    return True, read
    for match in _IMPORT.finditer(text):
        dotted, alias = match.groups()
        local = alias or dotted  # (`import pkg.mod`: called as `pkg.mod.f(...)`)
        if dotted.split(".", 1)[0] in LIBRARY_ROOTS or f"{local}." not in text:
            continue
        if not _at_line_start(text, match.start()):
            continue  # the tail of `from x import y`, or prose
        target = resolver.module_file(directory, 0, dotted, read)
        if target is not None and _calls_copier_of(resolver, target, local, text, read):
            return True, read
    return False, read


def _at_line_start(text: str, offset: int) -> bool:
    """Only blanks stand between the line's start and ``offset``."""
    return not text[text.rfind("\n", 0, offset) + 1 : offset].strip(" \t")


def imported_may_copy(
    root: str, path: str, level: int, module: str, name: str, attribute: str, read: dict[str, str]
) -> bool:
    """For the file at ``path``: ``from <module> import <name>`` (``level`` dots; ``attribute``
    "") or the module ``<module>.<name>`` bound by it (``name`` "" for ``import <module>``) whose
    ``attribute`` is called, may copy non_blocking (a cheap test the analysis asks before it
    resolves and parses the function). The files read go to ``read``."""
    resolver = _resolver(root)
    directory = os.path.dirname(os.path.abspath(path))
    if not attribute:
        target = resolver.module_file(directory, level, module, read)
        return target is not None and bool(_may_copy(resolver, target, name, _MAX_REEXPORTS, read))
    dotted = ".".join(p for p in (module, name) if p)
    target = resolver.module_file(directory, level, dotted, read)
    if target is not None:
        return bool(_may_copy(resolver, target, attribute, 0, read))
    # `from pkg.up import Up`, then `Up.send(...)`: a method of the class that may copy.
    target = resolver.module_file(directory, level, module, read) if name else None
    return target is not None and attribute in _may_copy(resolver, target, name, _MAX_REEXPORTS, read)


def _calls_copier_of(resolver: _Resolver, path: str, local: str, text: str, read: dict[str, str]) -> bool:
    """``text`` calls ``<local>.<f>(...)`` where ``f`` may copy in the module file ``path``."""
    file = shared_read(path)
    read[path] = file.digest if file is not None else ""
    if file is None or "non_blocking" not in file.text:
        return False  # nothing in this module copies asynchronously
    called = set(re.findall(rf"(?<![\w.]){re.escape(local)}\.(\w+)[ \t]*\(", text))
    # (`mod.Up(...)`: a class called through its module is not followed by the analysis.)
    return any(FUNCTION in _may_copy(resolver, path, attr, 0, read) for attr in sorted(called))


def _calls_star_copier(resolver: _Resolver, path: str, text: str, read: dict[str, str]) -> bool:
    """``from <the module at path> import *``: ``text`` calls a function or class the module
    defines that may copy (which star import binds the name is the analysis's question)."""
    file = shared_read(path)
    read[path] = file.digest if file is not None else ""
    if file is None or "non_blocking" not in file.text:
        return False  # nothing in this module copies asynchronously
    called = set(_CALLED_NAME.findall(text)) & _facts(file).defined
    return any(_calls(_may_copy(resolver, path, name, 0, read), text) for name in sorted(called))


#: ``name(`` not after a dot: a call of a plain name.
_CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)[ \t]*\(")


def _imported_names(imported: str) -> list[tuple[str, str]]:
    """(name, local) pairs of an import's name list (``a, b as c``, parenthesised or not)."""
    pairs = []
    for part in imported.strip().strip("()").replace("\\\n", " ").split(","):
        words = part.split("#", 1)[0].split()
        if len(words) == 1 and words[0] != "*":
            pairs.append((words[0], words[0]))
        elif len(words) == 3 and words[1] == "as":
            pairs.append((words[0], words[2]))
    return pairs


#: What ``_may_copy`` answers for a function that may copy (for a class: its methods that may).
FUNCTION = ""
#: Methods a caller runs without naming them: an object's construction and its call.
_RUN_UNNAMED = frozenset({"__init__", "__call__", "forward"})


def _calls(entries: frozenset[str], text: str) -> bool:
    """``text`` (which calls the function or class) may run one of ``entries`` (``_may_copy``):
    the function, or a method of the class that may copy, named in a call (``.send(``) or run
    without a name."""
    return FUNCTION in entries or any(m in _RUN_UNNAMED or f".{m}(" in text for m in entries)


#: How many functions of other modules may stand between a call and the copy: `send_batch`
#: (pkg/wrap.py) calls `upload`, imported there from pkg/copiers.py, which copies.
WRAPPERS = 1


def _may_copy(
    resolver: _Resolver, path: str, name: str, hops: int, read: dict[str, str], wrappers: int = WRAPPERS
) -> frozenset[str]:
    """Whether the module file ``path`` defines ``name`` (or re-exports it, ``hops`` links deep)
    as a function or class that may copy non_blocking (itself, or through ``wrappers`` levels of
    functions imported from other project modules): ``{FUNCTION}``, the class's methods that
    may, or nothing (the answer, and the files it read, memoised for the run)."""
    key = (path, name, hops, wrappers)
    known = resolver.answers.get(key)
    if known is None:
        reads: dict[str, str] = {}
        known = resolver.answers[key] = (_copies(resolver, path, name, hops, reads, wrappers), reads)
    read.update(known[1])
    return known[0]


def _copies(
    resolver: _Resolver, path: str, name: str, hops: int, read: dict[str, str], wrappers: int
) -> frozenset[str]:
    file = shared_read(path)
    read[path] = file.digest if file is not None else ""
    if file is None:
        return frozenset()
    facts = _facts(file)
    if name in facts.defined:
        copies = "non_blocking" in file.text
        if copies and any(not file.copy_free(line) for line in _functions(file, name)):
            return frozenset({FUNCTION})
        if (
            wrappers > 0
            and _imported_copiers(resolver, file, wrappers - 1, read)  # (most modules import none)
            and any(_forwards(resolver, file, line, wrappers - 1, read) for line in _functions(file, name))
        ):
            return frozenset({FUNCTION})  # it calls an imported function that may copy
        if not copies or not file.scan.top_level_classes(name):
            return frozenset()  # (nothing in this module copies asynchronously)
        return frozenset(m for m, start in file.scan.methods_run_by_instances(name) if not file.copy_free(start))
    source = facts.imported.get(name) if hops > 0 else None
    if source is None and hops > 0 and name not in facts.twice:
        source = _star_source(resolver, path, file.text, name, read)
    if source is None:
        return frozenset()  # not defined here, nor imported from one place
    level, module, original = source
    if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
        return frozenset()
    target = resolver.module_file(os.path.dirname(path), level, module, read)
    return _copies(resolver, target, original, hops - 1, read, wrappers) if target is not None else frozenset()


def forwards_to_copier(root: str, file: SourceFile, start: int, read: dict[str, str]) -> bool:
    """The function whose ``def`` is on 0-based line ``start`` of ``file`` calls a function
    imported by name from a project module that may copy non_blocking (it may hand its
    parameters on to that copy). The files read go to ``read``."""
    return _forwards(_resolver(root), file, start, WRAPPERS - 1, read)


def _functions(file: SourceFile, name: str) -> list[int]:
    """The module-level ``def``s of ``name`` in ``file`` (0-based lines)."""
    return [line for line, indented in file.scan.defs(name) if not indented]


def _forwards(resolver: _Resolver, file: SourceFile, start: int, wrappers: int, read: dict[str, str]) -> bool:
    from pinlint.analysis.triage import segment_for, segment_text

    copiers = _imported_copiers(resolver, file, wrappers, read)
    if not copiers:
        return False  # (most modules: asked once each)
    own = segment_text(file.lines, segment_for(file.lines, start))
    return own is not None and not copiers.isdisjoint(_CALLED_NAME.findall(own))


def _imported_copiers(resolver: _Resolver, file: SourceFile, wrappers: int, read: dict[str, str]) -> frozenset[str]:
    """The functions ``file`` imports by name from project modules, and calls, that may copy
    (memoised for the run, with the files read to decide)."""
    key = (file.path, file.digest, wrappers)
    known = resolver.imported_copiers.get(key)
    if known is None:
        reads: dict[str, str] = {}
        found = set()
        directory = os.path.dirname(file.path)
        for name, (level, module, original) in sorted(_facts(file).imported.items()):
            if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
                continue  # torch, numpy, the standard library: never the project's code
            if f"{name}(" not in file.text:
                continue  # never called here
            target = resolver.module_file(directory, level, module, reads)
            if target is not None and FUNCTION in _may_copy(
                resolver, target, original, _MAX_REEXPORTS, reads, wrappers
            ):
                found.add(name)
        known = resolver.imported_copiers[key] = (frozenset(found), reads)
    read.update(known[1])
    return known[0]


def _star_source(
    resolver: _Resolver, path: str, text: str, name: str, read: dict[str, str]
) -> tuple[int, str, str] | None:
    """``name`` re-exported by a star import of the module at ``path`` (``from .copiers import
    *``): where from, as an import of it would say."""
    if not star_imports(text):
        return None
    directory = os.path.dirname(path)

    def module_text(level: int, module: str) -> str | None:
        if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
            return None
        target = resolver.module_file(directory, level, module, read)
        file = shared_read(target) if target is not None else None
        if target is not None:
            read[target] = file.digest if file is not None else ""
        return file.text if file is not None else None

    chosen = star_provider(text, name, module_text)
    return (chosen[0], chosen[1], name) if chosen is not None else None


class _Facts:
    """What a module file defines at module level, and what it imports by name from where."""

    def __init__(self, text: str) -> None:
        self.defined = set(_TOP_LEVEL_DEF.findall("\n" + text))
        self.imported: dict[str, tuple[int, str, str]] = {}
        twice: set[str] = set()
        for dots, module, names in _FROM_IMPORT.findall(text):
            for name, local in _imported_names(names):
                source = (len(dots), module, name)
                if self.imported.get(local, source) != source:
                    twice.add(local)  # imported from two places: which one is bound is unknown
                self.imported[local] = source
        for local in twice:
            del self.imported[local]
        self.twice = frozenset(twice)


#: (path, digest) -> the file's facts; shared by every file of the run that imports it.
_FACTS: dict[tuple[str, str], _Facts] = {}


def _facts(file: SourceFile) -> _Facts:
    key = (file.path, file.digest)
    found = _FACTS.get(key)
    if found is None:
        if len(_FACTS) > 4096:
            _FACTS.clear()
        found = _FACTS[key] = _Facts(file.text)
    return found


class _Resolver:
    """Which project file a module names, as ``ModuleFiles`` finds it, memoised for a run: a
    project's files import the same modules again and again."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self._bases: dict[str, tuple[list[str], str]] = {}
        self._found: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        self._resolved: dict[tuple[str, int, str], tuple[str | None, tuple[str, ...]]] = {}
        self._tops: dict[tuple[str, str], bool] = {}
        self._submodules: dict[tuple[str, str], bool] = {}
        #: (module file, name, re-exports followed) -> (whether it may copy, the files read).
        self.answers: dict[tuple[str, str, int, int], tuple[frozenset[str], dict[str, str]]] = {}
        self.imported_copiers: dict[tuple[str, str, int], tuple[frozenset[str], dict[str, str]]] = {}

    def may_be_submodule(self, path: str, name: str) -> bool:
        """``from <package> import <name>`` may bind a submodule: the package's ``__init__.py``
        (``path``) neither defines nor imports ``name`` (what it binds wins)."""
        if not path.endswith("__init__.py"):
            return False
        key = (path, name)
        if key not in self._submodules:
            file = shared_read(path)
            facts = _facts(file) if file is not None else None
            self._submodules[key] = facts is None or (name not in facts.defined and name not in facts.imported)
        return self._submodules[key]

    def module_file(self, directory: str, level: int, module: str, read: dict[str, str]) -> str | None:
        """The project file of ``module`` imported from a file in ``directory``; the places it
        was looked for first, and did not exist, go to ``read`` (with digest "")."""
        key = (directory, level, module)
        if key not in self._resolved:
            self._resolved[key] = self._module_file(directory, level, module)
        found, absent = self._resolved[key]
        for path in absent:
            read.setdefault(path, "")
        return found

    def _module_file(self, directory: str, level: int, module: str) -> tuple[str | None, tuple[str, ...]]:
        parts = [p for p in module.split(".") if p] if module else []
        stop = ""
        if level > 0:
            base = directory
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        elif not parts:
            return None, ()
        else:
            bases, stop = self._absolute_bases(directory)
        absent: list[str] = [stop] if stop else []
        for base in bases:
            if not level and not self._holds_top(base, parts[0]):
                # `transformers.x`: no `transformers` here, so no submodule of it either. (Not
                # recorded: a top-level package created later, that an unchanged file imports,
                # is noticed when that file changes, or by a run without the cache.)
                continue
            key = (base, module)
            if key not in self._found:
                self._found[key] = self._in_base(base, parts)
            found, missing = self._found[key]
            absent += missing
            if found is not None:
                return found, tuple(absent)
        return None, tuple(absent)

    def _holds_top(self, base: str, top: str) -> bool:
        key = (base, top)
        if key not in self._tops:
            stem = os.path.join(base, top)
            self._tops[key] = os.path.isdir(stem) or os.path.isfile(stem + ".py")
        return self._tops[key]

    def _in_base(self, base: str, parts: list[str]) -> tuple[str | None, tuple[str, ...]]:
        stem = os.path.join(base, *parts) if parts else base
        absent = []
        # A package directory wins over a module of the same name, as in Python's import system.
        for candidate in [os.path.join(stem, "__init__.py")] + ([stem + ".py"] if parts else []):
            if not lexically_within(candidate, self.root):
                return None, ()  # climbing out of the project
            if os.path.isfile(candidate):
                # A link out of the project is not the project's code.
                return (candidate if within(candidate, self.root) else None), tuple(absent)
            absent.append(candidate)
        return None, tuple(absent)

    def _absolute_bases(self, directory: str) -> tuple[list[str], str]:
        """The directory above the file's top package, the project root and its ``src/``; and
        the ``__init__.py`` whose absence ended the file's top package ("" at the root)."""
        found = self._bases.get(directory)
        if found is None:
            top = directory
            while top != self.root and os.path.isfile(os.path.join(top, "__init__.py")):
                top = os.path.dirname(top)
            bases = [top, self.root, os.path.join(self.root, "src")]
            found = self._bases[directory] = (
                [b for b in dict.fromkeys(bases) if lexically_within(b, self.root)],
                # (At the root the walk stops whatever is there.)
                os.path.join(top, "__init__.py") if top != self.root else "",
            )
        return found


#: The run's resolver for each project root (``forget`` starts a new run's).
_RESOLVERS: dict[str, _Resolver] = {}


def _resolver(root: str) -> _Resolver:
    found = _RESOLVERS.get(root)
    if found is None:
        found = _RESOLVERS[root] = _Resolver(root)
    return found


def forget() -> None:
    """A new run: files may have been created or removed since the last one."""
    _RESOLVERS.clear()
