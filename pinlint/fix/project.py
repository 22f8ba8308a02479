"""The project's pin-memory idiom, learnt from the whole project, not only from the files of a run.

A one-file run, ``--stdin-filename`` and pre-commit's staged files must get the fixes a whole-project
run gets, so the project root is found (the configuration's directory, else the nearest directory
with ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or ``.git``) and every Python file under it that
mentions the helper or ``pin_memory=`` is read with ``ast`` for:

* definitions of the helper and their real signatures (``(device)``, ``(device=None)``, ``(*, device)``,
  ``()``, methods);
* the modules it is imported from (the most common path wins), and how it is called;
* what the project passes as ``pin_memory=`` (a helper call, a constant such as ``PIN_MEMORY`` and the
  module it comes from, ``self.pin_memory``): the dominant idiom is what the fix writes;
* each module's module-level imports, so that no fix adds an import that closes an import cycle.

Facts are cached per file, keyed by size, mtime and content digest, in one small JSON file under the
cache directory (validated on load; a file that does not validate is ignored, never trusted).
"""

from __future__ import annotations

import ast
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pinlint.core.text import digest
from pinlint.fix.facts_cache import FactsCache
from pinlint.fix.module_facts import (
    _MARKERS,
    _MAX_FILES,
    SECONDARY_DIRS,
    ModuleFacts,
    Signature,
    absolute,
    mentions_idiom,
    module_facts,
)
from pinlint.safeio import MAX_SOURCE_BYTES, read_regular

#: A file the run has read: size, mtime_ns, content digest ("" unknown), facts, module name.
Known = tuple[int, int, str, "ModuleFacts | None", "str | None"]


def find_root(config_root: Path, config_path: Path | None, paths: list[Path]) -> Path | None:
    """The project root: the configuration's directory, else the nearest marked ancestor of the
    paths of the run; None when nothing marks a project (then only the run's files teach)."""
    if config_path is not None:
        return _abs(config_root)
    starts = [_abs(p) for p in paths] or [_abs(config_root)]
    start = starts[0] if starts[0].is_dir() else starts[0].parent
    for directory in [start, *start.parents]:
        if any((directory / m).exists() for m in _MARKERS):
            return directory
    return None


def _abs(path: Path) -> Path:
    """Absolute and normalised, without resolving links (a link loop must not raise)."""
    return Path(os.path.abspath(path))


def module_name(path: Path, root: Path | None = None) -> tuple[str | None, bool]:
    """Dotted module name (walking up through packages) and whether the file is a package."""
    path = _abs(path)
    is_package = path.stem == "__init__"
    parts = [] if is_package else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").exists() and directory != root:
        parts.append(directory.name)
        directory = directory.parent
    if is_package and directory == path.parent:
        return None, True
    if not parts:
        return None, is_package
    name = ".".join(reversed(parts))
    return (name if all(p.isidentifier() for p in name.split(".")) else None), is_package


def first_party_packages(root: Path | None) -> frozenset[str]:
    """Top-level names isort/ruff would call first party (under the root or ``src/``)."""
    if root is None:
        return frozenset()
    out = set()
    for base in (root, root / "src"):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue  # a link loop, a vanished entry
            if is_dir and name.isidentifier():
                out.add(name)
            elif name.endswith(".py") and name[:-3].isidentifier():
                out.add(name[:-3])
    return frozenset(out)


@dataclass
class Project:
    """Facts of the project's files (path -> facts), and the answers drawn from them."""

    root: Path | None
    files: dict[str, ModuleFacts] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # dotted module -> path
    first_party: frozenset[str] = frozenset()
    #: path -> the modules it imports, read on demand for the cycle walk.
    _import_memo: dict[str, list[str]] = field(default_factory=dict)
    #: module -> its file found under the root (or None), for modules the scan did not read: the
    #: cycle walk asks for the same modules once per fix, each a few filesystem lookups.
    _path_memo: dict[str, str | None] = field(default_factory=dict)

    def add(self, path: Path, facts: ModuleFacts, module: str | None) -> None:
        key = str(_abs(path))
        self.files[key] = facts
        if module:
            self.modules[module] = key

    def _others(self, path: Path | None) -> list[tuple[str, ModuleFacts]]:
        own = str(_abs(path)) if path is not None else None
        return [(p, f) for p, f in self.files.items() if p != own]

    def is_secondary(self, path: str) -> bool:
        parts = Path(path).parts
        if self.root is not None:
            try:
                parts = Path(path).relative_to(self.root).parts
            except ValueError:
                pass
        return any(p in SECONDARY_DIRS for p in parts[:-1])

    def import_counts(self, path: Path | None) -> Counter[str]:
        """Where the project imports the helper from; the package's own files count first."""
        primary: Counter[str] = Counter()
        secondary: Counter[str] = Counter()
        for p, facts in self._others(path):
            (secondary if self.is_secondary(p) else primary).update(facts.imports)
        return primary or secondary

    def definitions(self, path: Path | None) -> list[tuple[str, Signature]]:
        """(module, signature) of each module-level definition, package before tests/examples."""
        found = []
        for module, p in self.modules.items():
            facts = self.files.get(p)
            if facts is not None and facts.definition is not None and (path is None or p != str(_abs(path))):
                found.append((self.is_secondary(p), module, Signature(**facts.definition)))
        return [(m, s) for _, m, s in sorted(found, key=lambda t: (t[0], t[1]))]

    def definition_of(self, module: str, depth: int = 0) -> Signature | None:
        """The signature of the helper importable from ``module`` (following re-exports)."""
        p = self.modules.get(module)
        facts = self.files.get(p) if p else None
        if facts is None or depth > 5:
            return None
        if facts.definition is not None:
            return Signature(**facts.definition)
        for source in facts.imports:
            if source != module:
                found = self.definition_of(source, depth + 1)
                if found is not None:
                    return found
        return None

    def call_styles(self, module: str, path: Path | None) -> list[str]:
        return [style for _, f in self._others(path) for m, style in f.calls if m == module]

    def method_signatures(self) -> list[Signature]:
        return [Signature(**m) for f in self.files.values() for m in f.methods]

    def pin_values(self, path: Path | None) -> Counter[str]:
        out: Counter[str] = Counter()
        for _, f in self._others(path):
            out.update(f.pin_values)
        return out

    def constant_module(self, name: str, path: Path | None) -> str | None:
        """Where the constant ``name`` is defined from the helper (the package's own first)."""
        found = []
        for module, p in self.modules.items():
            facts = self.files.get(p)
            if facts is not None and name in facts.constants and (path is None or p != str(_abs(path))):
                found.append((self.is_secondary(p), module))
        return min(found)[1] if found else None

    def cycle(self, importer: str | None, module: str) -> list[str] | None:
        """The import chain ``module -> ... -> importer`` when importing ``module`` from
        ``importer`` would close a cycle, else None."""
        if importer is None:
            return None
        targets = {importer}
        # Importing pkg.sub runs pkg/__init__.py first.
        start = [".".join(module.split(".")[: i + 1]) for i in range(module.count(".") + 1)]
        seen: set[str] = set()
        stack = [(m, [m]) for m in start]
        while stack:
            current, chain = stack.pop()
            if current in targets:
                return chain
            if current in seen:
                continue
            seen.add(current)
            for nxt in self._imports_of(current):
                for prefix in [".".join(nxt.split(".")[: i + 1]) for i in range(nxt.count(".") + 1)]:
                    if prefix not in seen and (prefix in targets or self._module_path(prefix) is not None):
                        stack.append((prefix, [*chain, prefix]))
        return None

    def _module_path(self, module: str) -> str | None:
        """The project file of ``module`` (its facts' path, else found under the root)."""
        if module in self.modules:
            return self.modules[module]
        if self.root is None or not module.replace(".", "").replace("_", "").isalnum():
            return None
        if module not in self._path_memo:
            self._path_memo[module] = self._find_module(self.root, module)
        return self._path_memo[module]

    @staticmethod
    def _find_module(root: Path, module: str) -> str | None:
        parts = module.split(".")
        for base in (root, root / "src"):
            for candidate in (base.joinpath(*parts) / "__init__.py", base.joinpath(*parts[:-1], parts[-1] + ".py")):
                if candidate.is_file():
                    return str(_abs(candidate))
        return None

    def _imports_of(self, module: str) -> list[str]:
        """The modules ``module`` imports (absolute), for the cycle walk: from its facts when the
        project scan read it, else from its import lines (any module of the project may close
        a cycle, not only those that mention the helper)."""
        path = self._module_path(module)
        if path is None:
            return []
        facts = self.files.get(path)
        if facts is not None:
            return list(facts.module_imports)
        if path not in self._import_memo:
            from pinlint.analysis.names import scan_names

            found: list[str] = []
            try:
                text = read_regular(path, MAX_SOURCE_BYTES).decode("utf-8", "replace")
            except OSError:
                text = ""
            names = scan_names(text)
            is_package = path.endswith("__init__.py")
            for level, source, name in names.from_imports.values():
                if not isinstance(source, str):
                    continue
                base = absolute("." * level + source, module, is_package) if level else source
                if base:
                    found.extend([base, f"{base}.{name}"] if name else [base])
            found.extend(m for m in names.modules.values() if isinstance(m, str))
            self._import_memo[path] = found
        return self._import_memo[path]


def facts_of_text(
    text: str, path: Path, root: Path | None, tree: ast.Module | None = None
) -> tuple[ModuleFacts, str | None] | None:
    """``tree``: the file's ``ast``, when the caller has parsed it already."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    module, is_package = module_name(path, root)
    return module_facts(tree, module, is_package, text), module


def _skip_dir(name: str, exclude: frozenset[str]) -> bool:
    return name.startswith(".") or name in exclude or name == "__pycache__"


def scan(
    root: Path | None,
    *,
    cache_dir: Path | None,
    exclude: list[str],
    known: dict[str, Known] | None = None,
) -> Project:
    """Read the facts of every Python file under ``root`` (cached). ``known``: files already read
    (by absolute path), with their facts and module names; they are not read again."""
    project = Project(root, first_party=first_party_packages(root))
    if root is None:
        return project
    known = known or {}
    cache = FactsCache(cache_dir)
    names = frozenset(e for e in exclude if not any(c in e for c in "*?[/"))
    count = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _skip_dir(d, names))
        for name in files:
            if not name.endswith(".py"):
                continue
            count += 1
            if count > _MAX_FILES:
                cache.save()
                return project
            path = os.path.join(directory, name)
            if path in known:
                size, mtime_ns, data_digest, facts, module = known[path]
                if facts is not None:
                    project.add(Path(path), facts, module)
                if data_digest and not cache.holds(path, size, mtime_ns):
                    cache.put(path, size, mtime_ns, data_digest, facts)  # for later one-file runs
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
                continue  # a FIFO, a device or a huge file: never read while learning the project
            hit = cache.get(path, info.st_size, info.st_mtime_ns)
            if hit is not False:
                if hit is not None:
                    module, _ = module_name(Path(path), root)
                    project.add(Path(path), hit, module)
                continue
            try:
                data = read_regular(path, MAX_SOURCE_BYTES)
            except OSError:
                continue
            facts: ModuleFacts | None = None
            module = None
            if mentions_idiom(data):
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
                got = facts_of_text(text, Path(path), root) if text is not None else None
                if got is not None:
                    facts, module = got
            cache.put(path, info.st_size, info.st_mtime_ns, digest(data), facts)
            if facts is not None:
                project.add(Path(path), facts, module)
    cache.save()
    return project
