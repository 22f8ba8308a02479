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
import json
import os
import stat
import re
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pinlint.safeio import MAX_SOURCE_BYTES, read_regular
from pinlint import __version__, torch_api
from pinlint.core.text import digest
from pinlint.fix.scope import DEF, IMPORT, FileScopes

NAME = torch_api.PIN_HELPER_NAME
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
#: Directories whose definitions lose to the package's own.
SECONDARY_DIRS = frozenset(
    {"tests", "test", "benchmarks", "benchmark", "examples", "example", "scripts", "docs"}
)
_FACTS_VERSION = 1
_MAX_FILES = 50_000
_MENTION = re.compile(rb"is_pin_memory_available|pin_memory\s*=")


@dataclass(frozen=True)
class Signature:
    """How the helper is called: ``style`` is "noarg", "positional", "keyword" (``keyword=``),
    "unusable" (``reason`` says why) or "unknown"."""

    style: str
    keyword: str = ""
    reason: str = ""


def signature_of(
    node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool = False
) -> Signature:
    """The helper's arguments from its definition (``self``/``cls`` dropped for methods)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if method and positional:
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    if method:
        required = max(0, min(required, len(positional)))
    kwonly = [(a.arg, d is None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    required_kw = [name for name, req in kwonly if req]
    name = node.name
    if required > 1 or required_kw and (required or len(required_kw) > 1):
        count = required + len(required_kw)
        return Signature(
            "unusable", reason=f"`{name}` needs {count} arguments; pinlint only knows the device"
        )
    if required == 1:
        return Signature("positional")
    if required_kw:
        return Signature("keyword", required_kw[0])
    if positional:
        return Signature("positional")  # `(device=None)`: the project means it to get the device
    device_kw = [n for n, _ in kwonly if "dev" in n.lower()]
    if device_kw:
        return Signature("keyword", device_kw[0])
    return Signature("noarg")


def call_style(call: ast.Call) -> str:
    """``noarg``, ``positional``, ``keyword:<name>`` or ``multi``."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return "multi"
    n = len(call.args) + len(call.keywords)
    if n == 0:
        return "noarg"
    if n > 1:
        return "multi"
    return "positional" if call.args else f"keyword:{call.keywords[0].arg}"


def signature_from_calls(styles: list[str], name: str) -> Signature | None:
    """What calls of the helper say about its arguments; None when there are none."""
    if not styles:
        return None
    if "positional" in styles:
        return Signature("positional")
    keywords = sorted({s.split(":", 1)[1] for s in styles if s.startswith("keyword:")})
    if len(keywords) == 1:
        return Signature("keyword", keywords[0])
    if "noarg" in styles:
        return Signature("noarg")
    return Signature(
        "unusable",
        reason=f"`{name}` is called here with several arguments; pinlint only knows the device",
    )


@dataclass
class ModuleFacts:
    """What one file says about the idiom (plain data: it goes into the JSON cache)."""

    #: Module-level ``def is_pin_memory_available``: its signature.
    definition: dict[str, str] | None = None
    #: Signatures of methods named ``is_pin_memory_available``.
    methods: list[dict[str, str]] = field(default_factory=list)
    #: Absolute modules the helper is imported from (one entry per import).
    imports: list[str] = field(default_factory=list)
    #: [module the called name comes from ("" unknown), call style] for each call of the helper.
    calls: list[list[str]] = field(default_factory=list)
    #: What is passed as ``pin_memory=``: "helper", "const:<NAME>:<module>" ("" module = here),
    #: "self:<attr>", "other" -> count.
    pin_values: dict[str, int] = field(default_factory=dict)
    #: Module-level names assigned from a helper call (``PIN_MEMORY = is_pin_memory_available()``).
    constants: list[str] = field(default_factory=list)
    #: Absolute modules imported at module level at run time.
    module_imports: list[str] = field(default_factory=list)


def absolute(module: str, own: str | None, is_package: bool) -> str | None:
    """``from .x import y`` in module ``own`` -> ``pkg.x``."""
    if not module.startswith("."):
        return module
    if own is None:
        return None
    level = len(module) - len(module.lstrip("."))
    parts = own.split(".")
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    rest = module.lstrip(".")
    return ".".join([*base, rest] if rest else base) or None


def module_facts(
    tree: ast.Module, own: str | None, is_package: bool, scopes: FileScopes | None = None
) -> ModuleFacts:
    scopes = scopes or FileScopes(tree)
    facts = ModuleFacts()
    # Local names (anywhere in the file) bound by an import of the helper -> absolute module.
    helper_names: dict[str, str] = {}
    for scope in _all_scopes(scopes):
        for local, bindings in scope.bindings.items():
            for b in bindings:
                if b.kind == IMPORT and b.imported == NAME and not b.dead:
                    module = absolute(b.module, own, is_package)
                    if module:
                        facts.imports.append(module)
                        helper_names[local] = module
    for b in scopes.module.bindings.get(NAME, []):
        if (
            b.kind == DEF
            and isinstance(b.node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not b.dead
        ):
            facts.definition = asdict(signature_of(b.node))
            helper_names.setdefault(NAME, own or "")
    # Imported names, for `pin_memory=PIN_MEMORY` (module-level imports only).
    imported_from: dict[str, str] = {}
    for local, bindings in scopes.module.bindings.items():
        for b in bindings:
            if b.kind == IMPORT and not b.dead and b.imported:
                module = absolute(b.module, own, is_package)
                if module:
                    imported_from[local] = module
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == NAME:
            if not any(node is b.node for b in scopes.module.bindings.get(NAME, [])):
                first = (node.args.posonlyargs + node.args.args)[:1]
                method = bool(first) and first[0].arg in ("self", "cls")
                facts.methods.append(asdict(signature_of(node, method=method)))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in helper_names:
                facts.calls.append([helper_names[func.id], call_style(node)])
            elif isinstance(func, ast.Attribute) and func.attr == NAME:
                facts.calls.append(["", call_style(node)])
            for kw in node.keywords:
                if kw.arg == "pin_memory":
                    kind = _pin_value_kind(kw.value, helper_names, imported_from)
                    facts.pin_values[kind] = facts.pin_values.get(kind, 0) + 1
    for stmt in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        if value is not None and _is_helper_call(value, helper_names):
            facts.constants.extend(t.id for t in targets if isinstance(t, ast.Name))
    for _local, bindings in scopes.module.bindings.items():
        for b in bindings:
            if b.kind == IMPORT and not b.dead and not b.via_global:
                module = absolute(b.module, own, is_package)
                if module:
                    facts.module_imports.append(f"{module}.{b.imported}" if b.imported else module)
                    if b.imported:
                        facts.module_imports.append(module)
    facts.module_imports = sorted(set(facts.module_imports))
    return facts


def _all_scopes(scopes: FileScopes):  # type: ignore[no-untyped-def]
    stack = [scopes.module]
    while stack:
        scope = stack.pop()
        yield scope
        stack.extend(scope.children)


def _is_helper_call(value: ast.expr, helper_names: dict[str, str]) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    return (
        isinstance(func, ast.Name)
        and func.id in helper_names
        or isinstance(func, ast.Attribute)
        and func.attr == NAME
    )


def _pin_value_kind(
    value: ast.expr, helper_names: dict[str, str], imported_from: dict[str, str]
) -> str:
    if _is_helper_call(value, helper_names):
        return "helper"
    if isinstance(value, ast.Name) and value.id.isupper():
        return f"const:{value.id}:{imported_from.get(value.id, '')}"
    if (
        isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id == "self"
    ):
        return f"self:{value.attr}"
    return "other"


# -- the project -------------------------------------------------------------------------------


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
            if (
                facts is not None
                and facts.definition is not None
                and (path is None or p != str(_abs(path)))
            ):
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
            if (
                facts is not None
                and name in facts.constants
                and (path is None or p != str(_abs(path)))
            ):
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
            p = self.modules.get(current)
            facts = self.files.get(p) if p else None
            if facts is None:
                continue
            for nxt in facts.module_imports:
                for prefix in [
                    ".".join(nxt.split(".")[: i + 1]) for i in range(nxt.count(".") + 1)
                ]:
                    if prefix not in seen and (prefix in self.modules or prefix in targets):
                        stack.append((prefix, [*chain, prefix]))
        return None


def facts_of_text(
    text: str, path: Path, root: Path | None
) -> tuple[ModuleFacts, str | None] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    module, is_package = module_name(path, root)
    return module_facts(tree, module, is_package), module


class FactsCache:
    """``<cache dir>/project-facts.json``: path -> (size, mtime_ns, digest, facts)."""

    def __init__(self, directory: Path | None) -> None:
        self.file = directory / "project-facts.json" if directory is not None else None
        self.entries: dict[str, dict[str, object]] = {}
        self.dirty = False
        if self.file is not None:
            self._load()

    def _load(self) -> None:
        assert self.file is not None
        from pinlint.cache import read_signed

        # Signed by this user: a committed facts file could name the helper to import (code
        # that runs once the fixed file does), so only our own is trusted.
        payload = read_signed(self.file, _FACTS_MAGIC, _MAX_FACTS_BYTES)
        if payload is None:
            return
        try:
            data = json.loads(payload)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return
        if (
            not isinstance(data, dict)
            or data.get("version") != _FACTS_VERSION
            or data.get("pinlint") != __version__
        ):
            return
        files = data.get("files")
        if not isinstance(files, dict):
            return
        for path, entry in files.items():
            if _valid_entry(entry):
                self.entries[path] = entry

    def get(self, path: str, size: int, mtime_ns: int) -> ModuleFacts | None | bool:
        """Facts (or None: a file with nothing to say) on a hit; False on a miss."""
        entry = self.entries.get(path)
        if entry is None or entry["size"] != size or entry["mtime_ns"] != mtime_ns:
            return False
        facts = entry["facts"]
        return ModuleFacts(**facts) if isinstance(facts, dict) else None

    def put(
        self, path: str, size: int, mtime_ns: int, data_digest: str, facts: ModuleFacts | None
    ) -> None:
        self.entries[path] = {
            "size": size,
            "mtime_ns": mtime_ns,
            "digest": data_digest,
            "facts": asdict(facts) if facts is not None else None,
        }
        self.dirty = True

    def save(self) -> None:
        if self.file is None or not self.dirty:
            return
        from pinlint.cache import write_signed

        payload = json.dumps({"version": _FACTS_VERSION, "pinlint": __version__, "files": self.entries})
        # A read-only checkout still fixes; it just re-reads next time.
        write_signed(self.file.parent, self.file, _FACTS_MAGIC, payload.encode())


_FACTS_MAGIC = b"PINLINT-FACTS-1\n"
_MAX_FACTS_BYTES = 64 * 1024 * 1024

_FIELDS = {
    "definition": (dict, type(None)),
    "methods": list,
    "imports": list,
    "calls": list,
    "pin_values": dict,
    "constants": list,
    "module_imports": list,
}


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get("size"), int) or not isinstance(entry.get("mtime_ns"), int):
        return False
    if not isinstance(entry.get("digest"), str):
        return False
    facts = entry.get("facts")
    if facts is None:
        return True
    if not isinstance(facts, dict) or set(facts) != set(_FIELDS):
        return False
    if not all(isinstance(facts[k], t) for k, t in _FIELDS.items()):
        return False
    strings = facts["imports"] + facts["constants"] + facts["module_imports"]
    if not all(isinstance(s, str) for s in strings):
        return False
    if not all(
        isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c)
        for c in facts["calls"]
    ):
        return False
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in facts["pin_values"].items()):
        return False
    sig_keys = {"style", "keyword", "reason"}
    sigs = facts["methods"] + ([facts["definition"]] if facts["definition"] else [])
    return all(
        isinstance(s, dict) and set(s) == sig_keys and all(isinstance(v, str) for v in s.values())
        for s in sigs
    )


def _skip_dir(name: str, exclude: frozenset[str]) -> bool:
    return name.startswith(".") or name in exclude or name == "__pycache__"


def scan(root: Path | None, *, cache_dir: Path | None, exclude: list[str]) -> Project:
    """Read the facts of every Python file under ``root`` (cached)."""
    project = Project(root, first_party=first_party_packages(root))
    if root is None:
        return project
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
            if _MENTION.search(data):
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
