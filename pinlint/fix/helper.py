"""Which pin-memory value a fix writes, how it is called, and which import it needs.

``is_pin_memory_available`` is not a torch API: each project defines its own (SGLang's takes the
device, vLLM's ``current_platform.is_pin_memory_available()`` takes nothing). For each construction
the fixer decides, by scope (see ``scope.py``), not by text:

1. the project's dominant idiom when it is not a helper call: a constant (``pin_memory=PIN_MEMORY``)
   or an attribute (``pin_memory=self.pin_memory``) that is bound at the construction;
2. a helper the file binds at module level (any alias, ``mod.is_pin_memory_available``), when that
   binding is what the name means at the construction;
3. the import path the project uses most, a definition in the project (the package before
   ``tests/``, ``benchmarks/``, ``examples/``, ``scripts/``), then ``pin-memory-helper`` in
   ``[tool.pinlint]``; the name must be free at the construction, and the import must not close
   an import cycle;
4. otherwise no fix, and a message that says why (or how to configure one).

How the helper is called: the file's own calls of it win, then its definition's real signature,
then the project's calls, then the configuration, then a table of known projects. A helper needing
more than the device declines the fix. Fixed code never imports pinlint.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pinlint import torch_api
from pinlint.core.text import split_lines
from pinlint.fix.imports import ImportRequest
from pinlint.fix.module_facts import (
    ModuleFacts,
    Signature,
    absolute,
    call_style,
    module_facts,
    signature_from_calls,
    signature_of,
)
from pinlint.fix.project import Project, module_name
from pinlint.fix.scope import ASSIGN, DEF, IMPORT, Binding, FileScopes, Resolution

CONFIGURE_HINT = (
    'no pin-memory helper found in this file or project; set `pin-memory-helper = "your_pkg.utils:'
    'is_pin_memory_available(device)"` in [tool.pinlint] to enable the fix'
)
NAME = torch_api.PIN_HELPER_NAME


@dataclass(frozen=True)
class ConfiguredHelper:
    module: str
    name: str
    takes_device: bool

    @classmethod
    def parse(cls, spec: str) -> ConfiguredHelper:
        """``"pkg.mod:name(device)"``, ``"pkg.mod:name()"`` or ``"pkg.mod:name"`` (takes the device)."""
        spec = spec.strip()
        takes_device = True
        if spec.endswith(")") and "(" in spec:
            spec, _, args = spec.partition("(")
            takes_device = bool(args[:-1].strip())
        module, sep, name = spec.partition(":")
        if not sep or not module or not name.isidentifier() or not all(p.isidentifier() for p in module.split(".")):
            raise ValueError(
                f'pin-memory-helper must look like "package.module:function(device)" or '
                f'"package.module:function()", got {spec!r}'
            )
        return cls(module, name, takes_device)

    @property
    def signature(self) -> Signature:
        return Signature("positional" if self.takes_device else "noarg")


@dataclass(frozen=True)
class HelperChoice:
    #: What the fix writes: ``is_pin_memory_available``, ``utils.is_pin_memory_available``,
    #: ``PIN_MEMORY`` or ``self.pin_memory``.
    call_name: str
    #: The import to add, or None when the name is already bound where it is used.
    needs_import: ImportRequest | None
    #: Whether the helper gets the device; None when nothing says (the fix is then unsafe).
    takes_device: bool | None
    source: str
    #: Pass the device as ``keyword=`` (a keyword-only parameter) rather than positionally.
    device_keyword: str | None = None
    #: A value (constant, attribute), written as is: no call.
    is_value: bool = False

    def render(self, device_text: str | None) -> str:
        if self.is_value:
            return self.call_name
        if self.takes_device is False:
            return f"{self.call_name}()"
        # `.cuda()` without a device copies to the current CUDA device.
        device = device_text if device_text is not None else '"cuda"'
        if self.device_keyword:
            return f"{self.call_name}({self.device_keyword}={device})"
        return f"{self.call_name}({device})"


#: ``import *`` however spaced or continued: without it in the text, no star import exists.
_STAR_IMPORT = re.compile(r"\bimport[\s\\]*\*")


class FileContext:
    """One file's text, parsed with ``ast``, and its scopes: built only for files with a fix."""

    def __init__(self, path: Path | None, text: str, tree: ast.Module, root: Path | None) -> None:
        self.path = path
        self.text = text
        self.tree = tree
        self.lines = split_lines(text)
        self.scopes = FileScopes(tree, text)
        self.module, self.is_package = module_name(path, root) if path is not None else (None, False)
        self.facts: ModuleFacts = module_facts(tree, self.module, self.is_package, text)
        self._calls: dict[str, list[str]] | None = None
        self._ending: dict[str, list[str]] = {}
        self._helpers: list[tuple[str, Binding]] | None = None
        #: Rows of `from m import *` (legal only at module level): each may rebind any name.
        self.star_import_rows = (
            [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]
            if _STAR_IMPORT.search(text)
            else []  # no `import *` in the text at all: the walk over the whole tree would find none
        )

    @classmethod
    def build(cls, path: Path | None, text: str, root: Path | None) -> FileContext | str:
        """The context, or why there is none (this Python cannot parse the file)."""
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            return (
                f"no automatic fix: this Python ({sys.version_info[0]}.{sys.version_info[1]}) cannot parse the "
                f"file (line {exc.lineno}: {exc.msg}), so a fix could not be verified"
            )
        except (ValueError, RecursionError, MemoryError) as exc:
            return f"no automatic fix: this Python cannot parse the file ({type(exc).__name__})"
        return cls(path, text, tree, root)

    def calls_of(self, dotted: str) -> list[str]:
        """Call styles of every call of ``dotted`` (``name`` or ``mod.name``) in the file."""
        if self._calls is None:
            self._calls = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call):
                    text = _dotted(node.func)
                    if text is not None:
                        self._calls.setdefault(text, []).append(call_style(node))
        return self._calls.get(dotted, [])

    def called_names(self) -> list[str]:
        """Every dotted name the file calls."""
        self.calls_of("")
        assert self._calls is not None
        return list(self._calls)

    def module_helpers(self) -> list[tuple[str, Binding]]:
        """The module-level bindings that may be the helper (its import, or a def of its name),
        found once per file: every fix asks."""
        if self._helpers is None:
            self._helpers = [
                (local, b)
                for local, bindings in self.scopes.module.bindings.items()
                for b in bindings
                if not b.dead
                and (b.kind == IMPORT and b.imported == NAME or b.kind == DEF and local == NAME and not b.via_global)
            ]
        return self._helpers

    def called_ending(self, suffix: str) -> list[str]:
        """The dotted names the file calls that end with ``suffix``, sorted: every fix of the
        file asks, so the file's calls are scanned once, not once per fix."""
        found = self._ending.get(suffix)
        if found is None:
            found = self._ending[suffix] = sorted({d for d in self.called_names() if d.endswith(suffix)})
        return found


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _same(a: Binding, b: Binding) -> bool:
    return (a.kind, a.module, a.imported) == (b.kind, b.module, b.imported) and a.kind == IMPORT


def _bound_as(res: Resolution, pos_row: int, at_module_level: bool, want: Binding | None) -> str | None:
    """None when the name at the construction is the binding ``want`` (or, with ``want`` None,
    when it is free); else what it is instead, for the message."""
    if res.where == "unbound":
        return None if want is None else "not bound there"
    if res.where == "local":
        return f"a local name of `{res.scope_name}()` there ({res.bindings[0].describe()})"
    if res.where == "class":
        return f"a name of the class body of `{res.scope_name}` there ({res.bindings[0].describe()})"
    runtime = res.runtime
    if want is None:
        # Free for a new import only when every run-time binding is that same import.
        return None if not runtime else runtime[0].describe()
    others = [b for b in runtime if not (_same(b, want) or b is want)]
    if others:
        return f"rebound at module level ({others[0].describe()})"
    unconditional = [b for b in runtime if not b.conditional]
    if not unconditional:
        return "bound only on some paths at module level" if runtime else "bound only for type checkers"
    if min(b.row for b in unconditional) >= pos_row:
        # At module level the construction runs first; in a function, module code above the
        # binding may call it before the binding runs.
        return f"bound only after the construction ({unconditional[0].describe()})"
    return None


class HelperResolver:
    """The project-level half of the decision, shared by every file of a run."""

    def __init__(self, project: Project, configured: ConfiguredHelper | None) -> None:
        self.project = project
        self.configured = configured

    # -- signatures --------------------------------------------------------------------------
    def _signature(self, ctx: FileContext, spelled: str, module: str | None, *, method: bool = False) -> Signature:
        file_evidence = signature_from_calls(ctx.calls_of(spelled), spelled)
        if file_evidence is not None:
            return file_evidence
        if module is not None:
            found = self.project.definition_of(module)
            if found is not None:
                return found
            project_calls = signature_from_calls(self.project.call_styles(module, ctx.path), spelled)
            if project_calls is not None:
                return project_calls
        if method:
            methods = set(self.project.method_signatures())
            if len(methods) == 1:
                return methods.pop()
        if self.configured is not None and (module is None or module == self.configured.module):
            return self.configured.signature
        root = (module or spelled).lstrip(".").split(".", 1)[0]
        if root in torch_api.KNOWN_HELPER_ARITY:
            return Signature("positional" if torch_api.KNOWN_HELPER_ARITY[root] else "noarg")
        return Signature("unknown")

    @staticmethod
    def _choice(name: str, request: ImportRequest | None, sig: Signature, source: str) -> HelperChoice | str:
        if sig.style == "unusable":
            return f"no automatic fix: {sig.reason}"
        takes = None if sig.style == "unknown" else sig.style != "noarg"
        keyword = sig.keyword if sig.style == "keyword" else None
        return HelperChoice(name, request, takes, source, device_keyword=keyword)

    # -- resolution ----------------------------------------------------------------------------
    def resolve(self, ctx: FileContext, pos: tuple[int, int]) -> HelperChoice | str:
        """The value for the construction at ``pos`` (1-based row, 0-based byte column), or why none."""
        at_module_level = ctx.scopes.innermost(pos).kind == "module"
        idiom = self._idiom(ctx, pos, at_module_level)
        if idiom is not None:
            return idiom
        module_bindings = ctx.scopes.module.bindings
        # 2. A helper the file binds at module level.
        first_problem: str | None = None
        for local, binding in ctx.module_helpers():
            problem = _bound_as(ctx.scopes.resolve(local, pos), pos[0], at_module_level, binding)
            if problem is None and any(row > binding.row for row in ctx.star_import_rows):
                problem = "possibly rebound by a later `from ... import *`"
            if problem is None:
                if binding.kind == DEF:
                    assert isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    evidence = signature_from_calls(ctx.calls_of(local), local)
                    sig = evidence or signature_of(binding.node)
                    return self._choice(local, None, sig, "defined in this file")
                module = absolute(binding.module, ctx.module, ctx.is_package)
                sig = self._signature(ctx, local, module)
                return self._choice(local, None, sig, f"imported in this file from {binding.module}")
            first_problem = first_problem or f"`{local}` is {problem}"
        # `mod.is_pin_memory_available(...)` on a module-level import.
        for spelled in ctx.called_ending("." + NAME):
            root = spelled.split(".", 1)[0]
            imports = [b for b in module_bindings.get(root, []) if b.kind == IMPORT and not b.dead]
            if not imports:
                continue
            problem = _bound_as(ctx.scopes.resolve(root, pos), pos[0], at_module_level, imports[0])
            if problem is None:
                b = imports[0]
                base = absolute(b.module, ctx.module, ctx.is_package) or b.module
                module_path = f"{base}.{b.imported}" if b.imported else base
                rest = spelled[len(root) + 1 : -len(NAME) - 1]
                module_path = f"{module_path}.{rest}" if rest else module_path
                sig = self._signature(ctx, spelled, module_path, method=True)
                return self._choice(spelled, None, sig, f"used in this file from {module_path}")
            first_problem = first_problem or f"`{root}` is {problem}"
        # 3. The project's helper, imported.
        candidates3: list[tuple[str, str, str, Signature | None]] = []  # module, name, source, sig
        counts = self.project.import_counts(ctx.path)
        own = ctx.module
        for module, _count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            if module != own:
                candidates3.append((module, NAME, "the project's most common import", None))
                break
        for module, _sig in self.project.definitions(ctx.path):
            if module != own:
                candidates3.append((module, NAME, "defined in the project", None))
        if self.configured is not None:
            c = self.configured
            candidates3.append((c.module, c.name, "configured in [tool.pinlint]", None))
        if not candidates3:
            if first_problem:
                return f"no automatic fix: {first_problem}, not the pin-memory helper"
            return CONFIGURE_HINT
        module, function, source, _ = candidates3[0]
        problem = _bound_as(ctx.scopes.resolve(function, pos), pos[0], at_module_level, None)
        if problem is not None:
            # Keep runtime-equivalent imports (a conditional or TYPE_CHECKING import of the same helper).
            res = ctx.scopes.resolve(function, pos)
            same_import = res.where == "module" and all(
                b.kind == IMPORT and b.imported == function and absolute(b.module, own, ctx.is_package) == module
                for b in res.runtime
            )
            if not same_import:
                return f"no automatic fix: `{function}` is {problem}, not the pin-memory helper"
        if ctx.star_import_rows:
            return f"no automatic fix: a `from ... import *` in this file may rebind `{function}`"
        chain = self.project.cycle(own, module)
        if chain is not None:
            return (
                f"no automatic fix: importing `{function}` from `{module}` would create an import cycle "
                f"({' -> '.join([*chain, own or '?'])})"
            )
        sig = self._signature(ctx, function, module)
        return self._choice(function, ImportRequest(module, function), sig, source)

    def _idiom(self, ctx: FileContext, pos: tuple[int, int], at_module_level: bool) -> HelperChoice | None:
        """The project's dominant non-call idiom (``PIN_MEMORY``, ``self.pin_memory``), when it
        beats helper calls and can be written at this construction."""
        counts: Counter[str] = self.project.pin_values(ctx.path)
        counts.update(ctx.facts.pin_values)
        helper = counts.get("helper", 0)
        ranked = sorted(
            ((n, k) for k, n in counts.items() if k.startswith(("const:", "self:"))),
            key=lambda t: (-t[0], t[1]),
        )
        for n, kind in ranked:
            if n <= helper:
                break
            if kind.startswith("const:"):
                _, name, module = kind.split(":", 2)
                choice = self._constant(ctx, pos, at_module_level, name, module)
            else:
                choice = self._attribute(ctx, pos, kind.split(":", 1)[1])
            if choice is not None:
                return choice
        return None

    def _constant(
        self, ctx: FileContext, pos: tuple[int, int], at_module_level: bool, name: str, module: str
    ) -> HelperChoice | None:
        res = ctx.scopes.resolve(name, pos)
        runtime = res.runtime
        if res.where == "module" and runtime:
            here = [b for b in runtime if b.kind == ASSIGN and name in ctx.facts.constants]
            imported = [b for b in runtime if b.kind == IMPORT and b.imported == name]
            binding = (here or imported or [None])[0]
            if binding is None or _bound_as(res, pos[0], at_module_level, binding) is not None:
                return None
            return HelperChoice(name, None, True, "the project's constant", is_value=True)
        if res.where != "unbound":
            return None
        module = module or self.project.constant_module(name, ctx.path) or ""
        if not module or module == ctx.module or self.project.cycle(ctx.module, module) is not None:
            return None
        if name not in self.project.files.get(self.project.modules.get(module, ""), ModuleFacts()).constants:
            return None  # not (or no longer) defined there from the helper
        return HelperChoice(name, ImportRequest(module, name), True, "the project's constant", is_value=True)

    def _attribute(self, ctx: FileContext, pos: tuple[int, int], attr: str) -> HelperChoice | None:
        """``self.<attr>`` in a method of a class whose ``__init__`` sets it first thing."""
        scope = ctx.scopes.innermost(pos)
        function = scope.node
        if scope.kind != "function" or scope.parent is None or scope.parent.kind != "class":
            return None
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        params = [*function.args.posonlyargs, *function.args.args]
        if not params or params[0].arg != "self" or function.name == "__init__":
            return None
        if ctx.scopes.resolve("self", pos).where != "local" or len(ctx.scopes.resolve("self", pos).bindings) != 1:
            return None  # `self` rebound in the method
        cls = scope.parent.node
        assert isinstance(cls, ast.ClassDef)
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init__":
                for top in stmt.body:
                    targets = top.targets if isinstance(top, ast.Assign) else [getattr(top, "target", None)]
                    for t in targets:
                        if (
                            isinstance(t, ast.Attribute)
                            and t.attr == attr
                            and isinstance(t.value, ast.Name)
                            and t.value.id == "self"
                        ):
                            return HelperChoice(f"self.{attr}", None, True, "the project's attribute", is_value=True)
        return None
