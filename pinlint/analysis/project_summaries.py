"""Provenance across the files of a project: a call to a function imported from another project
module is answered by that module's summaries (what the function returns, which of its
parameters it copies non_blocking), as a call to a function of the same file is.

One hop: the other module's summaries follow its own functions and classes, not a third
module's. The function is found by name through the imports (a re-export in a package's
``__init__.py`` is followed, a few links deep); anything ambiguous (imported from two places,
rebound in the file, defined twice) is unknown. A function that cannot make or copy a host tensor
(none of the construction tokens, no copy, no call to its own module's functions) is not parsed.
"""

from __future__ import annotations

import keyword
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from pinlint.analysis import objects
from pinlint.analysis.names import AMBIGUOUS_IMPORT, LIBRARY_ROOTS, FileNames, project_imports
from pinlint.analysis.project_modules import ModuleFiles, SourceFile
from pinlint.analysis.scopes import dotted
from pinlint.analysis.star_imports import provider as star_provider
from pinlint.analysis.star_imports import star_imports
from pinlint.safeio import lexically_within

if TYPE_CHECKING:
    from pinlint.analysis.summaries import FileSummaries, Parsed

#: How many re-exports (``from .impl import f`` in ``__init__.py``) a name is followed through.
MAX_REEXPORTS = 3


#: (path, class, the events listened to, the taught pinned and host functions) -> (the file as read,
#: its methods that copy a parameter): a worker analyses many files that import the same classes;
#: an entry holds while the same read of the file is in use. (The class's file is analysed without
#: following its own imports, so the answer depends on that file alone, which the caller's
#: analysis records as read either way.)
_METHOD_COPIERS: dict[tuple[object, ...], tuple[SourceFile, frozenset[str]]] = {}
_MAX_KEPT_CLASSES = 4096
#: (path, def line, the events listened to, the taught functions) -> (the file as read, whether
#: the function copies a parameter): as ``_METHOD_COPIERS``, for the imported functions.
_FUNCTION_COPIERS: dict[tuple[object, ...], tuple[SourceFile, bool]] = {}


#: A called plain name (``load_shard(`` but not ``self.load(`` or ``mod.load(``).
_CALLED_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)[ \t]*\(")
#: Text that may rebind a module's names other than by a statement a scan reads.
_REBINDS_BY_NAME = re.compile(r"\bsetattr\(|\bsys\.modules\b|\bglobals\(\)|\bexec\(|def __getattr__")


class ForeignFile:
    """Another file of the project, as far as it was needed (its summaries on first need)."""

    def __init__(self, file: SourceFile, make: MakeSummaries) -> None:
        self.file = file
        self._make = make
        self._summaries: FileSummaries | None = None

    @property
    def names(self) -> FileNames:
        return self.file.names

    @property
    def summaries(self) -> FileSummaries:
        if self._summaries is None:
            self._summaries = self._make(self.file)
        return self._summaries

    @property
    def started(self) -> bool:
        return self._summaries is not None


#: A project file -> its summaries for this analysis.
MakeSummaries = Callable[[SourceFile], "FileSummaries"]


class ProjectSummaries:
    """The summaries of the other project files one file's analysis asked about."""

    def __init__(
        self, modules: ModuleFiles, make_summaries: MakeSummaries, wants: Callable[[FileNames, str, str], bool]
    ) -> None:
        self.modules = modules
        self._make = make_summaries
        #: Whether a function's text (of a file's text, with its names) may make or copy a host
        #: tensor; else it is not parsed.
        self._wants = wants
        self.files: dict[str, ForeignFile | None] = {}
        self._functions: dict[tuple[str, str, bool], tuple[ForeignFile, int] | None] = {}
        self._copiers: dict[str, bool] = {}
        #: imported class (its local name) -> its methods that copy a parameter.
        self._class_copiers: dict[str, set[str]] = {}
        self._calls_memo: tuple[str, set[tuple[str, str]]] | None = None
        #: attribute -> whether a project module this file imports assigns `<module>.<attr>`.
        self._patched: dict[tuple[str, str], bool] = {}
        self._stored_around: dict[tuple[str, str], bool] = {}
        self._matched_around: dict[tuple[str, str], bool] = {}
        self._module_host_constants: dict[tuple[str, str], bool] = {}
        #: (file, def line, helper levels) -> whether that function is worth parsing for a caller.
        self._wanted: dict[tuple[str, int, int], bool] = {}
        #: (file, def line) -> whether that function calls an imported function that may copy.
        self._forwarding: dict[tuple[str, int], bool] = {}
        #: name -> where a star import of the file checked binds it from (None: none, or unknown).
        self._starred: dict[str, tuple[int, str, str] | None] = {}

    # ------------------------------------------------------------------ lookups
    def function(
        self, names: FileNames, func: cst.BaseExpression, passes_host: bool = False
    ) -> tuple[ForeignFile, int] | None:
        """The other file and 0-based ``def`` line of the project function ``func`` calls
        (``f(...)`` imported by name, or ``mod.f(...)`` on an imported project module).
        ``passes_host``: the call hands it a host tensor (what it computes from its parameters
        matters, not only what it builds)."""
        if isinstance(func, cst.Name):
            key: tuple[str, str, bool] = (func.value, "", passes_host)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            key = (func.value.value, func.attr.value, passes_host)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
            chain = dotted(func.value)
            if chain is None:
                return None
            key = (chain, func.attr.value, passes_host)
        else:
            return None
        if key not in self._functions:
            self._functions[key] = self._function(names, func, passes_host)
        return self._functions[key]

    def _function(
        self, names: FileNames, func: cst.BaseExpression, passes_host: bool
    ) -> tuple[ForeignFile, int] | None:
        target = self.target(names, func)
        if target is not None:
            return self._defined(*target, passes_host)
        return self._class_level(names, func, passes_host)

    def _class_level(
        self, names: FileNames, func: cst.BaseExpression, passes_host: bool
    ) -> tuple[ForeignFile, int] | None:
        """``Up.send(t, dev)``: a ``@staticmethod`` or ``@classmethod`` of a class imported by
        name from the module that defines it (its parameters are the call's arguments)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        local, method = func.value.value, func.attr.value
        source = names.from_imports.get(local)
        if source is None or source == AMBIGUOUS_IMPORT or local in names.module_level_bindings:
            return None  # not imported by name, from two places, or rebound here
        here = self.modules.read(self.modules.path) if self.modules.path else None
        if here is not None and (here.scan.reassigned(local) or here.scan.assigned_elsewhere(method)):
            return None  # rebound, or `Up.send = other` here
        level, module, original = source
        if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
            return None
        path = self.modules.module_file(level, module)
        foreign = self.file(path) if path is not None and path != self.modules.path else None
        if foreign is None or "non_blocking" not in foreign.file.text and not passes_host:
            return None  # (a module that never copies: only what its method computes matters)
        if self.stored_by_imports(names, method):
            return None  # the method may be replaced at import
        starts = objects.class_level_method(foreign.summaries, original, method)
        if len(starts) != 1:
            return None  # not one static or class method of a class defined once there, never rebound
        if passes_host and self._computes(foreign, starts[0]):
            return foreign, starts[0]
        return (foreign, starts[0]) if self._wants_function(foreign, starts[0]) else None

    def target(self, names: FileNames, func: cst.BaseExpression) -> tuple[str, str, int] | None:
        """(the file, the name there, how many re-exports may be followed) ``func`` names."""
        if isinstance(func, cst.Name):
            source = names.from_imports.get(func.value)
            if source is None:
                source = self.star_source(names, func.value)  # `from pkg.copiers import *`
                if source is None:
                    return None
            elif source == AMBIGUOUS_IMPORT or func.value in names.module_level_bindings:
                return None  # imported from two places, or rebound here
            else:
                here = self.modules.read(self.modules.path) if self.modules.path else None
                if here is not None and here.scan.reassigned(func.value):
                    return None  # assigned here too (`else: make = other`), or a star import may rebind it
            level, module, name = source
            path = self.modules.module_file(level, module)
            if path is not None and self._patched_by_imports(names, name, path):
                return None  # `module.name = other` in a module this file imports
            return (path, name, MAX_REEXPORTS) if path is not None else None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            local = func.value.value
            if local in names.module_level_bindings:
                return None  # rebound here: not (only) the module
            here = self.modules.read(self.modules.path) if self.modules.path else None
            if here is not None and here.scan.assigned_elsewhere(func.attr.value):
                return None  # `helpers.make = other` here: the module's function may be replaced
            path = self._module_bound_to(names, local)
            if path is not None and self._patched_by_imports(names, func.attr.value, path):
                return None
            return (path, func.attr.value, 0) if path is not None else None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
            chain = dotted(func.value)
            path = self._dotted_module(names, chain) if chain is not None else None
            if path is None:
                return None
            here = self.modules.read(self.modules.path) if self.modules.path else None
            if (here is not None and here.scan.assigned_elsewhere(func.attr.value)) or self._patched_by_imports(
                names, func.attr.value, path
            ):
                return None  # the module's function may be replaced
            return (path, func.attr.value, 0)
        return None

    def _dotted_module(self, names: FileNames, module: str) -> str | None:
        """The project file of ``module`` (``pkg.helpers``) called through in full after
        ``import pkg.helpers``: the file imports it so, binds its first part only by such
        imports, and no package on the way binds the next part to something else."""
        root = module.split(".", 1)[0]
        if (
            (0, module) not in names.imported_modules
            or names.modules.get(root) != root
            or root in names.ambiguous_modules
            or root in names.from_imports
            or root in names.module_level_bindings
            or root in LIBRARY_ROOTS
        ):
            return None
        here = self.modules.read(self.modules.path) if self.modules.path else None
        if here is not None and here.scan.reassigned(root):
            return None  # assigned here too
        path = self.modules.module_file(0, module)
        parts = module.split(".")
        for i in range(1, len(parts)):
            package, name = ".".join(parts[:i]), parts[i]
            found = self.modules.module_file(0, f"{package}.{name}")
            if found is None or self._package_binds(0, package, name, found):
                return None  # `pkg.helpers` is what the package's `__init__.py` binds, not the file
        return path

    def _patched_by_imports(self, names: FileNames, attr: str, target: str) -> bool:
        """A project module this file imports assigns ``<module>.<attr> = ...``, ``<module>``
        being ``target``'s module there (a monkeypatch run at import, before this file's calls):
        the function called may be another one."""
        key = (attr, target)
        if key not in self._patched:
            self._patched[key] = any(
                any(self._names_module(read, base, target) for base in read.scan.stored_attributes().get(attr, ()))
                for read in self._imported_project_modules(names)
            )
        return self._patched[key]

    def stored_by_imports(self, names: FileNames, attr: str) -> bool:
        """A project module this file imports assigns ``<x>.<attr> = ...`` on anything but
        ``self`` (``up.Uploader.send = safe``), or may by ``setattr`` (a name not written as a
        literal): a method of that name may be replaced at import."""
        key = (attr, "")
        if key not in self._patched:
            self._patched[key] = any(
                read.scan.stored_attributes().get(attr) or read.scan.sets_attribute_by_name(attr)
                for read in self._imported_project_modules(names)
            )
        return self._patched[key]

    def imported_host_device_constant(self, names: FileNames, local: str) -> bool:
        """``local`` is bound by importing a project module's constant for the host device
        (``from pkg.consts import CPU``, where ``CPU = torch.device("cpu")`` is bound once and
        never rebound there)."""
        source = names.from_imports.get(local)
        if source is None or source == AMBIGUOUS_IMPORT:
            return False
        level, module, original = source
        if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
            return False  # a library's name (`from torch import ...`): not the project's constant
        path = self.modules.module_file(level, module)
        if path is None:
            return False
        key = (path, original)
        if key not in self._module_host_constants:
            read = self.modules.read(path)
            self._module_host_constants[key] = (
                read is not None
                and read.scan.host_device_constant(original)
                # `setattr(...)`, `sys.modules[...]`, `globals()[...]`: rebound by no statement we read
                and not _REBINDS_BY_NAME.search(read.text)
                # `devices.CPU = "cuda"` in a package `__init__.py` above the constant's module (it
                # runs first) or a module either imports: not what its module binds
                and not self.stored_around(path, original)
            )
        return self._module_host_constants[key] and not self.stored_by_imports(names, original)

    def stored_around(self, path: str, attr: str) -> bool:
        """``<x>.<attr> = ...`` in a package ``__init__.py`` above the project file ``path`` (it
        runs first), or in a project module that file or one of those packages imports (it runs
        at its import): a monkeypatch the analysis of ``path`` alone does not see."""
        key = (path, attr)
        if key not in self._stored_around:
            self._stored_around[key] = self._stores_around(path, attr)
        return self._stored_around[key]

    def _stores_around(self, path: str, attr: str) -> bool:
        return any(read.scan.stored_attributes().get(attr) for read in self._around(path))

    def matched_around(self, path: str, pattern: re.Pattern[str]) -> bool:
        """``pattern`` matches the text of a package ``__init__.py`` above the project file
        ``path``, or of a project module that file or one of those packages imports (code that
        runs before ``path``'s, perhaps patching what it uses: ``DataLoader.__init__ = ...``)."""
        key = (path, pattern.pattern)
        if key not in self._matched_around:
            self._matched_around[key] = any(pattern.search(read.text) for read in self._around(path))
        return self._matched_around[key]

    def _around(self, path: str) -> Iterator[SourceFile]:
        """The package ``__init__.py`` files above ``path`` (not ``path`` itself), and the project
        modules that ``path`` or those packages import, read lazily."""
        root = self.modules.root
        if root is None:
            return
        importers = [path]
        directory = os.path.dirname(path)
        while lexically_within(directory, root):
            init = os.path.join(directory, "__init__.py")
            if init != path and os.path.isfile(init):
                importers.append(init)
            if directory == root:
                break
            directory = os.path.dirname(directory)
        for importer in importers:
            read = self.modules.read(importer)
            if read is None:
                continue
            if importer != path:
                yield read
            yield from self._imported_project_modules(read.names, importer)

    def _imported_project_modules(self, names: FileNames, path: str | None = None) -> Iterator[SourceFile]:
        """The project modules a file imports (``names``; ``path``: that file, else this one):
        ``import pkg.swaps``, and ``from pkg import swaps`` (a submodule imported by name); the
        first few (the standard library and torch patch nothing of the project's), read lazily."""
        origin = self.modules if path is None else ModuleFiles(self.modules.root, path, self.modules.overlay)
        submodules = [
            (level, f"{module}.{name}" if module else name)
            for source in names.from_imports.values()
            if source != AMBIGUOUS_IMPORT
            for level, module, name in [source]
        ]
        modules = [(level, module) for level, module in [*names.imported_modules, *submodules] if level or module]
        try:
            for level, module in modules[:_MAX_PATCH_MODULES]:
                if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
                    continue
                found = origin.module_file(level, module)
                read = self.modules.read(found) if found is not None else None
                if read is not None:
                    yield read
        finally:
            if origin is not self.modules:
                self.modules.consulted.update(origin.consulted)  # (also when the caller stops early)

    def _names_module(self, read: SourceFile, base: str, target: str) -> bool:
        """In the module ``read``, the dotted name ``base`` is the module whose file is ``target``."""
        first = base.split(".", 1)[0]
        names = read.names
        origin = ModuleFiles(self.modules.root, read.path, self.modules.overlay)
        source = names.from_imports.get(first)
        if source is not None and source != AMBIGUOUS_IMPORT:
            level, module, name = source
            dotted = ".".join(p for p in (module, name) if p) + base[len(first) :]
            found = origin.module_file(level, dotted)
        elif first in names.modules:
            found = origin.module_file(0, names.modules[first] + base[len(first) :])
        else:
            return False  # a local object, not a module: not a monkeypatch of the function
        self.modules.consulted.update(origin.consulted)
        return found == target

    def _module_bound_to(self, names: FileNames, local: str) -> str | None:
        """The project file of the module ``local`` names (``import pkg.mod as local``,
        ``from pkg import mod``, ``from . import mod``)."""
        if local in names.ambiguous_modules:
            return None  # bound to two modules in this file: which one runs is not known
        source = names.from_imports.get(local)
        if source is not None:
            if source == AMBIGUOUS_IMPORT:
                return None
            level, module, name = source
            dotted = f"{module}.{name}" if module else name
            found = self.modules.module_file(level, dotted)
            if found is not None and self._package_binds(level, module, name, found):
                # `from pkg import helpers` is the attribute `pkg.helpers`, which the package's
                # `__init__.py` binds itself (`from . import pinned as helpers`): not the file.
                return None
            return found
        module = names.modules.get(local)
        return self.modules.module_file(0, module) if module is not None else None

    def _package_binds(self, level: int, package: str, name: str, submodule: str) -> bool:
        """The ``__init__.py`` of ``package`` binds ``name`` to something other than its
        submodule file ``submodule`` (assigns, defines or imports another thing as it)."""
        init = self.modules.module_file(level, package) if package or level else None
        if init is None or not init.endswith("__init__.py"):
            return False
        read = self.modules.read(init)
        if read is None:
            return False
        names = read.names
        if name in names.module_level_bindings or read.scan.rebinds(name) or read.scan.reassigned(name):
            return True
        if name in names.from_imports or name in names.modules:
            # `from . import helpers` binds the submodule itself; `from . import pinned as
            # helpers` another module.
            return not self._names_module(read, name, submodule)
        return False

    def _defined(self, path: str, name: str, hops: int, passes_host: bool = False) -> tuple[ForeignFile, int] | None:
        if path == self.modules.path:
            return None  # the file itself (through its own package): its summaries answer
        foreign = self.file(path)
        if foreign is None:
            return None
        starts = [line for line, indented in foreign.file.scan.defs(name) if not indented]
        if starts and (
            foreign.file.scan.rebinds(name) or name in foreign.names.from_imports or name in foreign.names.modules
        ):
            return None  # also imported or assigned there (`from .fast import f` after `def f`): which one is unknown
        if len(starts) == 1:
            if passes_host and self._computes(foreign, starts[0]):
                return foreign, starts[0]
            if (
                "torch" not in foreign.file.text
                and "non_blocking" not in foreign.file.text
                and not self.forwards(path, starts[0])
            ):
                return None  # a file without torch builds no tensors (but may copy them, or call a copier)
            return (foreign, starts[0]) if self._wants_function(foreign, starts[0]) else None
        if starts or hops <= 0:
            return None  # defined several times (overloads, branches): which one is unknown
        source = foreign.names.from_imports.get(name)
        if source is None and not foreign.file.scan.rebinds(name) and not foreign.file.scan.declared_global(name):
            return self._star_exported(path, foreign, name, hops, passes_host)
        if (
            source is None
            or source == AMBIGUOUS_IMPORT
            # (the scan records `from m import f as g` as a possible submodule `m.f` too)
            or foreign.names.modules.get(name, f"{source[1]}.{source[2]}".lstrip("."))
            != f"{source[1]}.{source[2]}".lstrip(".")
            or not foreign.file.scan.bound_only_by_import(name)
        ):
            # not imported there, imported twice (also as a module), or rebound after the import
            # (assigned in module code, or a later star import). (`from .impl import f as g` is
            # the one binding of `g`: followed.)
            return None
        # A re-export: `from .impl import f` in the package's `__init__.py`.
        level, module, original = source
        origin = ModuleFiles(self.modules.root, path, self.modules.overlay)
        target = origin.module_file(level, module)
        self.modules.consulted.update(origin.consulted)
        return self._defined(target, original, hops - 1, passes_host) if target is not None else None

    def _star_exported(
        self, path: str, foreign: ForeignFile, name: str, hops: int, passes_host: bool
    ) -> tuple[ForeignFile, int] | None:
        """``name`` bound in the module at ``path`` only by a star import (``from .copiers import
        *`` in a package's ``__init__.py``): the function of the module that binds it."""
        if not star_imports(foreign.file.text) or name in foreign.names.modules:
            return None
        origin = ModuleFiles(self.modules.root, path, self.modules.overlay)
        chosen = star_provider(foreign.file.text, name, self._module_text(origin))
        self.modules.consulted.update(origin.consulted)
        if chosen is None:
            return None
        target = origin.module_file(*chosen)
        return self._defined(target, name, hops - 1, passes_host) if target is not None else None

    def _module_text(self, origin: ModuleFiles) -> Callable[[int, str], str | None]:
        """The text of a project module imported from ``origin``'s file (None: a library's, or
        not found); for ``star_imports.provider``. What it reads is recorded."""

        def module_text(level: int, module: str) -> str | None:
            if not level and module.split(".", 1)[0] in LIBRARY_ROOTS:
                return None
            found = origin.module_file(level, module)
            read = self.modules.read(found) if found is not None else None
            return read.text if read is not None else None

        return module_text

    def star_source(self, names: FileNames, local: str) -> tuple[int, str, str] | None:
        """Where a star import of the file checked (``from pkg.copiers import *``) binds
        ``local`` from, as ``from_imports`` would say: only when the file binds it in no other way
        and every star import that could bind it is decided."""
        if local in self._starred:
            return self._starred[local]
        self._starred[local] = None
        here = self.modules.read(self.modules.path) if self.modules.path else None
        if (
            here is None
            or not star_imports(here.text)
            or local in names.from_imports
            or local in names.modules
            or local in names.module_level_bindings
            or here.scan.defs(local)
            or here.scan.rebinds(local)
            or here.scan.declared_global(local)
        ):
            return None  # no star import, or bound here otherwise (which binding holds is not known)
        chosen = star_provider(here.text, local, self._module_text(self.modules))
        if chosen is not None:
            self._starred[local] = (chosen[0], chosen[1], local)
        return self._starred[local]

    def _starred_calls(self, names: FileNames, text: str) -> set[str]:
        """The names called in ``text`` (``f(``) that a star import of the file binds."""
        if not star_imports(text):
            return set()
        called = set(_CALLED_NAME.findall(text)) - names.module_level_bindings - _KEYWORDS
        return {name for name in called if self.star_source(names, name) is not None}

    def imported_copiers(self, names: FileNames, text: str) -> set[str]:
        """How this file spells the imported project functions it calls that copy one of their
        parameters non_blocking (``upload``, ``helpers.upload``): their callers here pass the
        tensor that is copied."""
        spellings: set[str] = set()
        local = project_imports(names)
        if not local:
            return spellings
        for first, second in self._project_calls(names, text):
            if not second:
                if first not in names.from_imports and self.star_source(names, first) is None:
                    continue
                func: cst.BaseExpression = cst.Name(first)
                spelled = first
            else:
                if first not in names.from_imports and first not in names.modules:
                    continue
                func = cst.Attribute(cst.Name(first), cst.Name(second))
                spelled = f"{first}.{second}"
            if spelled in self._copiers:
                if self._copiers[spelled]:
                    spellings.add(spelled)
                continue
            self._copiers[spelled] = self._may_copy(names, first, second) and self._copies_parameter(names, func)
            if self._copiers[spelled]:
                spellings.add(spelled)
        for module, attr in self._dotted_calls(names, text):
            spelled = f"{module}.{attr}"
            if spelled not in self._copiers:
                self._copiers[spelled] = self._imported_may_copy(0, module, "", attr) and self._copies_parameter(
                    names, cst.parse_expression(spelled)
                )
            if self._copiers[spelled]:
                spellings.add(spelled)
        return spellings

    def _dotted_calls(self, names: FileNames, text: str) -> set[tuple[str, str]]:
        """``(pkg.helpers, f)`` for each ``pkg.helpers.f(`` in ``text`` after ``import
        pkg.helpers`` (a project module called through in full)."""
        found: set[tuple[str, str]] = set()
        for level, module in names.imported_modules:
            if level or "." not in module or f"{module}." not in text:
                continue
            if self._dotted_module(names, module) is None:
                continue
            found.update((module, attr) for attr in re.findall(rf"(?<![\w.]){re.escape(module)}\.(\w+)[ \t]*\(", text))
        return found

    def _project_calls(self, names: FileNames, text: str) -> set[tuple[str, str]]:
        """``_calls_of`` the file's project imports (its functions and its classes both ask)."""
        if self._calls_memo is None or self._calls_memo[0] is not text:
            self._calls_memo = (text, _calls_of(project_imports(names) | self._starred_calls(names, text), text))
        return self._calls_memo[1]

    def imported_copier_methods(self, names: FileNames, text: str) -> set[str]:
        """The methods of the project classes this file imports by name and constructs
        (``Up(dev)``) that copy one of their parameters non_blocking: a caller of ``obj.send(t)``
        here hands them ``t`` (the object's class is checked where the call is analysed)."""
        from pinlint.analysis.source_tokens import derived_from

        found: set[str] = set()
        constructed = {
            first
            for first, second in self._project_calls(names, text)
            # (`mod.Up(...)`: not followed; its objects are resolved the same way, rarer)
            if not second and (first in names.from_imports or self.star_source(names, first) is not None)
        }
        # `class Inherit(Up): ...`, then `Inherit(dev).send(t)`: the base's methods run.
        derived = {local for local in names.from_imports if local not in constructed and derived_from(local, text)}
        for first in sorted(constructed | derived):
            if first not in self._class_copiers:
                self._class_copiers[first] = (
                    self._copying_methods(names, first) if self._may_copy(names, first, "") else set()
                )
            found |= self._class_copiers[first]
        return found

    def _may_copy(self, names: FileNames, first: str, second: str) -> bool:
        """The text test of the caller triage (``imported_may_copy``): ``first`` (or its
        attribute ``second``) may name a project function or class that copies non_blocking.
        Most imported functions do not: this spares resolving them fully (which reads the
        modules that may patch them) and parsing them."""
        source = names.from_imports.get(first) or (None if second else self.star_source(names, first))
        if source is not None:
            if source == AMBIGUOUS_IMPORT:
                return False
            level, module, name = source
        elif second and first in names.modules:
            level, module, name = 0, names.modules[first], ""
        else:
            return False
        return self._imported_may_copy(level, module, name, second)

    def forwards(self, path: str, start: int) -> bool:
        """``caller_triage.forwards_to_copier`` for the function at ``start`` of the project file
        ``path``: it calls an imported function that may copy (the modules read recorded)."""
        from pinlint.analysis.caller_triage import forwards_to_copier

        key = (path, start)
        if key not in self._forwarding:
            file = self.modules.read(path)
            self._forwarding[key] = file is not None and self._text_test(
                lambda root, read: forwards_to_copier(root, file, start, read)
            )
        return self._forwarding[key]

    def _imported_may_copy(self, level: int, module: str, name: str, attribute: str) -> bool:
        """``caller_triage.imported_may_copy`` for this file, the modules it read recorded."""
        from pinlint.analysis.caller_triage import imported_may_copy

        path = self.modules.path
        return self._text_test(lambda root, read: imported_may_copy(root, path, level, module, name, attribute, read))

    def _text_test(self, test: Callable[[str, dict[str, str]], bool]) -> bool:
        """A caller-triage text test (``test(root, read)``), the modules it read recorded: a
        cached "no" holds while they are unchanged."""
        if self.modules.root is None:
            return False
        if self.modules.overlay:
            # The fix loop's candidate texts: the test reads the files on disk (and keeps its
            # answers for the run); it is only a shortcut, so the full resolution answers here.
            return True
        read: dict[str, str] = {}
        found = test(self.modules.root, read)
        for path, digest in read.items():
            self.modules.consulted.setdefault(path, digest)
        return found

    def _copying_methods(self, names: FileNames, local: str) -> set[str]:
        target = self.target(names, cst.Name(local))
        if target is None or target[0] == self.modules.path:
            return set()
        foreign = self.file(target[0])
        if foreign is None or "non_blocking" not in foreign.file.text:
            return set()  # no copy in that file (a class re-exported through a package: not followed)
        classes = foreign.file.scan.top_level_classes(target[1])
        if len(classes) != 1:
            return set()  # not a class there, or defined twice
        taught = foreign.summaries.names
        key = (foreign.file.path, target[1], foreign.summaries.listened, taught.pinned_functions, taught.host_functions)
        known = _METHOD_COPIERS.get(key)
        if known is not None and known[0] is foreign.file:
            return set(known[1])  # worked out for another file of this process (the same text)
        copying: set[str] = set()
        for method, start in foreign.file.scan.methods_run_by_instances(target[1]):
            if foreign.file.copy_free(start):
                continue  # no copy in it: not parsed
            parsed = foreign.summaries.parsed(start)
            if parsed is None:
                continue
            top = next((s for s in parsed.module.body if isinstance(s, cst.FunctionDef)), None)
            if any(i.scope is top and i.events.decided_by_callers for i in parsed.interpreters):
                copying.add(method)
        if len(_METHOD_COPIERS) >= _MAX_KEPT_CLASSES:
            _METHOD_COPIERS.clear()
        _METHOD_COPIERS[key] = (foreign.file, frozenset(copying))
        return copying

    def _copies_parameter(self, names: FileNames, func: cst.BaseExpression) -> bool:
        target = self.target(names, func)
        if target is not None:
            read = self.modules.read(target[0])
            if read is None:
                return False
            starts = [line for line, indented in read.scan.defs(target[1]) if not indented]
            if len(starts) == 1 and read.copy_free(starts[0]) and not self.forwards(target[0], starts[0]):
                # Defined there, without a copy in it nor a call of an imported copier (checked
                # before resolving it fully).
                return False
        # (No target: `Up.send`, a static or class method of an imported class, if anything.)
        found = self.function(names, func)
        if found is None:
            return False
        foreign, start = found
        if foreign.file.copy_free(start) and not self.forwards(foreign.file.path, start):
            return False  # no copy in it (through a re-export: another file's function)
        taught = foreign.summaries.names
        key = (foreign.file.path, start, foreign.summaries.listened, taught.pinned_functions, taught.host_functions)
        known = _FUNCTION_COPIERS.get(key)
        if known is not None and known[0] is foreign.file:
            return known[1]  # worked out for another file of this process (the same text)
        parsed = foreign.summaries.parsed(start)
        copies = parsed is not None and any(
            i.scope is top and (i.events.parameter_copies or i.events.computed_copies)
            for top in [next((s for s in parsed.module.body if isinstance(s, cst.FunctionDef)), None)]
            for i in parsed.interpreters
        )
        if len(_FUNCTION_COPIERS) >= _MAX_KEPT_CLASSES:
            _FUNCTION_COPIERS.clear()
        _FUNCTION_COPIERS[key] = (foreign.file, copies)
        return copies

    def _computes(self, foreign: ForeignFile, start: int) -> bool:
        """The function returns something (perhaps computed from the host tensor it is given), in
        a file that names torch (as ``may_build_tensors`` asks, for one-file runs to agree)."""
        from pinlint.analysis.triage import segment_for, segment_text

        if "torch" not in foreign.file.text:
            return False
        text = segment_text(foreign.file.lines, segment_for(foreign.file.lines, start))
        return text is not None and "return" in text

    def _wants_function(self, foreign: ForeignFile, start: int, helpers: int = 1) -> bool:
        """Whether the function at ``start`` of ``foreign`` may matter to a caller here: it may
        copy, or builds a tensor, or (``helpers`` levels down) returns what a function of its
        own file may build (``return load_shard(f)``)."""
        from pinlint.analysis.triage import segment_for, segment_text

        key = (foreign.file.path, start, helpers)
        if key in self._wanted:
            return self._wanted[key]
        self._wanted[key] = False  # (a function calling itself)
        text = segment_text(foreign.file.lines, segment_for(foreign.file.lines, start))
        wanted = text is not None and (
            self._wants(foreign.names, foreign.file.text, text) or self.forwards(foreign.file.path, start)
        )
        if not wanted and text is not None and helpers > 0 and "return" in text:
            for name in sorted(set(_CALLED_NAME.findall(text))):
                starts = [line for line, indented in foreign.file.scan.defs(name) if not indented]
                if len(starts) == 1 and starts[0] != start and self._wants_function(foreign, starts[0], helpers - 1):
                    wanted = True
                    break
        self._wanted[key] = wanted
        return wanted

    def file(self, path: str) -> ForeignFile | None:
        if path in self.files:
            return self.files[path]
        found: ForeignFile | None = None
        read = self.modules.read(path)
        if read is not None:
            found = ForeignFile(read, self._make)
        self.files[path] = found
        return found

    # ------------------------------------------------------------------ afterwards
    def owner(self, node: cst.CSTNode) -> ForeignFile | None:
        """The other file whose parsed code holds ``node``, or None (this file's)."""
        for foreign in self.parsed_files():
            for parsed in foreign.summaries.all_parsed():
                if foreign.summaries.positions_for(parsed).holds(node):
                    return foreign
        return None

    def parsed_of(self, foreign: ForeignFile, node: cst.CSTNode) -> Parsed:
        """The parsed function of ``foreign`` that holds ``node``."""
        return next(p for p in foreign.summaries.all_parsed() if foreign.summaries.positions_for(p).holds(node))

    def parsed_files(self) -> list[ForeignFile]:
        return [f for f in self.files.values() if f is not None and f.started and f.summaries.all_parsed()]


#: Imported project modules read for monkeypatches of a called function (a bound: a file may
#: import hundreds).
_MAX_PATCH_MODULES = 64

#: What may follow an imported name in a call: ``.attr`` and the opening parenthesis.
_AFTER_NAME = re.compile(r"(?:\.([A-Za-z_]\w*))?[ \t]*\(")


#: Called like functions, never bound by a star import.
_KEYWORDS = frozenset(keyword.kwlist) | {"print"}


def _calls_of(names: Iterable[str], text: str) -> set[tuple[str, str]]:
    """``(name, "")`` for each ``name(`` and ``(name, attr)`` for each ``name.attr(`` in ``text``
    (not ``x.name(``), for the given names only: each name is found by a literal search and
    what follows it matched in place (a regex per name costs a compilation per name, and one
    that matches any identifier tries every position of a large file)."""
    found: set[tuple[str, str]] = set()
    for name in sorted(names):
        if not name.isidentifier() or name not in text:
            continue  # `*` of a star import names no function
        at = text.find(name)
        while at != -1:
            before = text[at - 1] if at else " "
            end = at + len(name)
            match = _AFTER_NAME.match(text, end)
            if match is not None and not (before.isalnum() or before in "._"):
                # not part of a longer name, nor an attribute of something else
                found.add((name, match.group(1) or ""))
            at = text.find(name, match.end() if match is not None else end)
    return found
