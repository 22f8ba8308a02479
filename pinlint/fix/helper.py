"""Which pin-memory helper a fix calls, and how it gets imported.

``is_pin_memory_available`` is not a torch API: each project defines its own (SGLang's takes the
device, vLLM's takes nothing). Resolution order, per file:

1. a name already bound in the file (any alias, or ``mod.is_pin_memory_available``);
2. the import path the rest of the linted project uses most;
3. a module-level ``def is_pin_memory_available`` found in the linted project;
4. ``pin-memory-helper = "pkg.mod:name(device)"`` in ``[tool.pinlint]``;
5. otherwise no fix, and a message that says how to configure one.

Fixed code never imports pinlint.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pinlint import torch_api
from pinlint.core.results import HelperFacts
from pinlint.fix.imports import ImportRequest

CONFIGURE_HINT = (
    'no pin-memory helper found in this file or project; set `pin-memory-helper = "your_pkg.utils:'
    'is_pin_memory_available(device)"` in [tool.pinlint] to enable the fix'
)


@dataclass(frozen=True)
class ConfiguredHelper:
    module: str
    name: str
    takes_device: bool

    @classmethod
    def parse(cls, spec: str) -> "ConfiguredHelper":
        """``"pkg.mod:name(device)"``, ``"pkg.mod:name()"`` or ``"pkg.mod:name"`` (takes the device)."""
        spec = spec.strip()
        takes_device = True
        if spec.endswith(")") and "(" in spec:
            spec, _, args = spec.partition("(")
            takes_device = bool(args[:-1].strip())
        module, sep, name = spec.partition(":")
        if not sep or not module or not name.isidentifier() or not all(p.isidentifier() for p in module.split(".")):
            raise ValueError(
                f"pin-memory-helper must look like \"package.module:function(device)\" or "
                f"\"package.module:function()\", got {spec!r}"
            )
        return cls(module, name, takes_device)


@dataclass
class ProjectHelpers:
    """Facts merged across every linted file."""

    import_counts: Counter[str] = field(default_factory=Counter)
    #: module -> whether its definition takes a device argument.
    definitions: dict[str, bool | None] = field(default_factory=dict)
    calls_without_args: int = 0
    calls_with_args: int = 0
    configured: ConfiguredHelper | None = None

    def add(self, path: Path, facts: HelperFacts) -> None:
        for _local, module in facts.bindings:
            if module and not module.startswith("."):
                self.import_counts[module] += 1
        if facts.defines_helper:
            module = module_name_for(path)
            if module:
                self.definitions[module] = facts.definition_takes_device
        self.calls_without_args += facts.calls_without_args
        self.calls_with_args += facts.calls_with_args

    def arity(self, module: str) -> bool | None:
        """Whether the helper from ``module`` takes the device; None when nothing says."""
        if self.configured and self.configured.module == module:
            return self.configured.takes_device
        if module in self.definitions and self.definitions[module] is not None:
            return self.definitions[module]
        root = module.lstrip(".").split(".", 1)[0]
        if root in torch_api.KNOWN_HELPER_ARITY:
            return torch_api.KNOWN_HELPER_ARITY[root]
        if self.calls_with_args and not self.calls_without_args:
            return True
        if self.calls_without_args and not self.calls_with_args:
            return False
        return None


@dataclass(frozen=True)
class HelperChoice:
    #: What the fix calls: ``is_pin_memory_available`` or ``utils.is_pin_memory_available``.
    call_name: str
    #: The import to add, or None when the name is already bound in the file.
    needs_import: ImportRequest | None
    takes_device: bool | None
    source: str


def module_name_for(path: Path) -> str | None:
    """Dotted module name of a file, walking up through packages (directories with __init__.py)."""
    path = path.resolve()
    parts = [path.stem] if path.stem != "__init__" else []
    directory = path.parent
    while (directory / "__init__.py").exists():
        parts.append(directory.name)
        directory = directory.parent
    if not parts:
        return None
    name = ".".join(reversed(parts))
    return name if all(p.isidentifier() for p in name.split(".")) else None


def resolve(facts: HelperFacts, project: ProjectHelpers, path: Path | None) -> HelperChoice | str:
    """The helper for one file, or the reason no fix can be offered."""
    name = torch_api.PIN_HELPER_NAME
    for local, module in facts.bindings:
        if module == "":
            return HelperChoice(local, None, facts.definition_takes_device, "defined in this file")
    for local, module in facts.bindings:
        return HelperChoice(local, None, project.arity(module), f"imported in this file from {module}")
    for prefix, module in facts.attribute_calls:
        return HelperChoice(f"{prefix}.{name}", None, project.arity(module), f"used in this file from {module}")

    candidates: list[tuple[str, str, str, bool | None]] = []  # (module, function name, source, arity)
    if project.import_counts:
        module, _count = sorted(project.import_counts.items(), key=lambda item: (-item[1], item[0]))[0]
        candidates.append((module, name, "the project's most common import", project.arity(module)))
    own_module = module_name_for(path) if path is not None else None
    for module in sorted(project.definitions):
        if module != own_module:
            candidates.append((module, name, "defined in the project", project.arity(module)))
    if project.configured is not None:
        c = project.configured
        candidates.append((c.module, c.name, "configured in [tool.pinlint]", c.takes_device))
    if not candidates:
        return CONFIGURE_HINT
    module, function, source, arity = candidates[0]
    if function in facts.module_level_bindings:
        return f"no automatic fix: `{function}` is already bound to something else in this file"
    if facts.last_top_level_import_line is None:
        return f"no automatic fix: this file has no module-level imports to add `from {module} import {function}` to"
    return HelperChoice(function, ImportRequest(module, function), arity, source)
