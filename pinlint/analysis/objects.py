"""Objects of the project's classes: what ``Batch(ids=t, lens=u)`` holds, and what
``meta.offsets`` is after ``meta = Meta(n)`` (what ``Meta``'s methods assign to ``self.offsets``).

A construction of a class defined in this file, or imported from another project file, makes an
object value (of unknown kind: it is no tensor). A dataclass or NamedTuple also records the
arguments its fields receive. Reading an attribute of such an object gives that field's value,
else what the class's methods assign to it; anything else is unknown. Bail-outs, each unknown:
a class defined twice or rebound, ``*args``/``**kwargs`` (which field gets what is not visible),
positional arguments of a dataclass with bases (inherited fields come first), and a field that
a method also assigns (``__post_init__`` may replace it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.devices import DeviceClass, classify_device
from pinlint.analysis.scopes import dotted
from pinlint.analysis.text_patterns import CALL_PATCHING_TEXT
from pinlint.analysis.values import HOST, HOST_DEVICE, PYDATA, TRUE, Value, instance

if TYPE_CHECKING:
    from pinlint.analysis.classes import ClassRange
    from pinlint.analysis.expressions import Evaluator
    from pinlint.analysis.file_text import FileText
    from pinlint.analysis.summaries import FileSummaries

_DATACLASS = re.compile(r"^[ \t]*@(?:dataclasses\.)?dataclass\b")
T = TypeVar("T")

_FIELD = re.compile(r"^([ \t]*)([A-Za-z_]\w*)[ \t]*:(?!=)([^=\n]*)")
_NOT_FIELD = re.compile(r"^[ \t]*(?:def|class|async|@|return|if|for|while|with|try)\b")


def construct(summaries: FileSummaries, evaluator: Evaluator, call: cst.Call) -> Value | None:
    """The object ``call`` makes when it calls a project class, else None."""
    func = call.func
    own_class = _called_cls(summaries, evaluator, func)
    if own_class is not None:
        found: tuple[FileSummaries, ClassRange] | None = (summaries, own_class)
    elif isinstance(func, cst.Name) and func.value in evaluator.env:
        return None  # a local named like a class
    else:
        found = _class(summaries, func)
    if found is None:
        return None
    owner, cls = found
    fields: dict[str, Value] = {}
    declared = _declared_fields(owner, cls)
    family = owner.scan.family(cls.name) or [cls]
    # (`torch.nn.Module.__init__` sets none of a subclass's attributes: its own state only.)
    known = {c.name for c in family} | {"NamedTuple", "object"} | module_bases(owner, cls)
    if (
        owner.scan.opaque_family(cls.name)
        or owner.scan.writes_indirectly("", family)
        or any(b not in known for b in cls.bases)
    ):
        # Construction or attribute access redefined (a class decorator, a metaclass,
        # `__setattr__`), writes by computed name, or a base from elsewhere whose
        # `__post_init__` is not visible: what the fields end up holding is unknown.
        declared = None
    if (
        declared is None
        and not any(arg.star for arg in call.args)
        and not owner.scan.opaque_family(cls.name)
        and all(b in known for b in cls.bases)  # a base from elsewhere may set them in its `__init__`
    ):
        positional_args = [a for a in call.args if a.keyword is None]
        for name, (position, attr) in _stored_by_init(owner, cls).items():
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and position is not None and position < len(positional_args):
                arg = positional_args[position]
            if arg is not None:
                fields[attr] = _field_value(evaluator, arg.value)
            elif not any(a.star for a in call.args):
                init = _own_init(owner, cls)
                default = _literal_default(init, name) if init is not None else None
                if default is not None:
                    fields[attr] = default  # left at a literal default (`device="cpu"`, `async_copy=False`)
    if (
        declared is None
        and not any(arg.star for arg in call.args)
        and not owner.scan.opaque_family(cls.name)
        and all(b in known for b in cls.bases)
    ):
        positional_args = [a for a in call.args if a.keyword is None]
        for attr, (position, name, host_default) in _allocated_by_init(owner, cls).items():
            arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if arg is None and position is not None and position < len(positional_args):
                arg = positional_args[position]
            host = host_default if arg is None else _field_value(evaluator, arg.value) == HOST_DEVICE
            if host:
                # `Builder(n, "cpu")` with `self.buf = torch.empty(n, device=device)` in `__init__`:
                # a host tensor there (pinned or not: not a source of findings, a copy's host end).
                fields.setdefault(attr, HOST)
    if declared is not None and not any(arg.star for arg in call.args):
        positional = [a for a in call.args if a.keyword is None]
        inherits = any(b not in ("NamedTuple", "object") for b in cls.bases)
        class_vars = "ClassVar" in owner.text or "InitVar" in owner.text  # not fields, however spelled
        if positional and (
            inherits or class_vars or len(positional) > len(declared) or not _positional_in_order(owner, cls)
        ):
            # Inherited fields come first, a field is left out of `__init__` (`init=False`) or
            # keyword-only, or a mismatch: which argument is which field is unknown.
            declared = None
        else:
            for name, arg in zip(declared, positional):
                fields[name] = _field_value(evaluator, arg.value)
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in declared:
                    fields[arg.keyword.value] = _field_value(evaluator, arg.value)
        # A field a method of the class or of a base assigns too (`__post_init__`) may not hold
        # what was passed.
        fields = {n: v for n, v in fields.items() if not any(owner.scan.assigns_in(c, n) for c in family)}
    return instance(call, cls.name, owner.path or "", fields)


def _field_value(evaluator: Evaluator, node: cst.BaseExpression) -> Value:
    """What a construction's argument puts in a field: its value, and the host's device for
    `"cpu"` or `torch.device("cpu")` (a method's `.to(self.device)` then copies nothing)."""
    if classify_device(node, evaluator.names.torch_function) is DeviceClass.HOST:
        return HOST_DEVICE
    return evaluator.value_of(node)


def attribute(summaries: FileSummaries, base: Value, attr: str) -> Value | None:
    """``attr`` of ``base`` when every path gives a project object: the field its construction
    filled, else what its class's methods assign to ``self.<attr>``; None (unknown) otherwise."""
    if not base or not all(o.class_name for o in base):
        return None
    values: list[Value] = []
    for origin in base:
        fields = dict(origin.fields)
        owner = _summaries_of(summaries, origin.class_file)
        if _written_elsewhere(summaries, owner, attr):
            return None  # an alias, a holder (`self.meta.offsets = ...`) or setattr may replace it
        if attr in fields:
            values.append(fields[attr])
            continue

        value = owner.class_attribute(origin.class_name, attr) if owner is not None else None
        if value is None:
            return None
        values.append(value)
    return frozenset().union(*values)


def field_replaced(summaries: FileSummaries, origin_file: str, attr: str) -> bool:
    """The field ``attr`` of an object of a class of ``origin_file`` may no longer hold what
    its construction put there (see ``_written_elsewhere``)."""
    return _written_elsewhere(summaries, _summaries_of(summaries, origin_file), attr)


def _written_elsewhere(summaries: FileSummaries, owner: FileSummaries | None, attr: str) -> bool:
    """This file or the class's writes ``<x>.<attr> = ...`` on some object (an alias, a holder's
    ``self.batch.ids = ...``) or attributes by computed name: the field may have been replaced."""
    for scan in {id(s.scan): s.scan for s in (summaries, owner) if s is not None}.values():
        if scan.assigned_elsewhere(attr) or scan.writes_indirectly(attr):
            return True
    return owner is None


def class_file_matches(summaries: FileSummaries, origin_file: str, pattern: re.Pattern[str]) -> bool:
    """The text of the file of an object's class matches ``pattern`` (True when that file is
    not read: it may)."""
    owner = _summaries_of(summaries, origin_file)
    return owner is None or owner.text_matches(pattern)


def is_object(value: Value) -> bool:
    """Every path gives an object of a project class."""
    return bool(value) and all(o.class_name for o in value)


def class_texts(summaries: FileSummaries, value: Value) -> list[str] | None:
    """The source of the class family (the class, its bases and subclasses of its file) of each
    object ``value`` may be; None when it may be something else than an object of a project
    class, or its file is not read."""
    if not is_object(value):
        return None
    texts = []
    for class_name, class_file in sorted({(o.class_name, o.class_file) for o in value}):
        owner = _summaries_of(summaries, class_file)
        family = owner.scan.family(class_name) if owner is not None else None
        if owner is None or not family:
            return None
        texts.extend("".join(owner.lines[c.start : c.end]) for c in family)
    return texts


#: The methods that calling an object runs: its ``__call__``; for a ``torch.nn.Module``, whose
#: ``__call__`` runs ``forward`` (``torch_api.MODULE_CLASS``), that ``forward``.
CALLED_METHODS = ("__call__", "forward")


def called_method(summaries: FileSummaries, base: Value) -> tuple[FileSummaries, int] | None:
    """What calling the object ``base`` runs (``tap(dev)``): the ``__call__`` its class defines,
    else the ``forward`` of a class that derives from ``torch.nn.Module`` in its file and defines
    no ``__call__``. None when not known: where the class's file, the calling file, or code that
    runs before either (a package ``__init__.py``, an imported project module) may patch what a
    call runs or register a forward pre-hook (``CALL_PATCHING_TEXT``), which may replace the
    arguments."""
    found_class = _one_class(summaries, base)
    if found_class is None:
        return None
    class_name, _, owner = found_class
    for files in (owner,) if owner is summaries else (owner, summaries):
        if files.text_matches(CALL_PATCHING_TEXT) or files.matched_around(CALL_PATCHING_TEXT):
            return None
    found = method(summaries, base, "__call__")
    if found is not None:
        return found
    family = owner.scan.family(class_name)
    if not family or any(owner.scan.method_start(c.name, "__call__") is not None for c in family):
        return None  # a `__call__` of the family that is not one def: which runs is not known
    if not any(module_bases(owner, c) for c in family):
        return None  # not a module: calling it runs no `forward`
    return method(summaries, base, "forward")


def _one_class(summaries: FileSummaries, base: Value) -> tuple[str, str, FileSummaries] | None:
    """The one project class ``base`` is an object of on every path: its name, its file ("" this
    one) and that file's summaries; None for several classes, or a file not read."""
    classes = {(o.class_name, o.class_file) for o in base}
    if len(classes) != 1:
        return None
    ((class_name, class_file),) = classes
    owner = _summaries_of(summaries, class_file)
    return (class_name, class_file, owner) if owner is not None else None


def module_bases(owner: FileSummaries, cls: ClassRange) -> set[str]:
    """The bases of ``cls`` (by their last names, as ``ClassRange.bases``) whose written form
    names ``torch.nn.Module`` through the imports of the class's file (``nn.Module``,
    ``torch.nn.Module``, ``Module`` imported from ``torch.nn``)."""
    found = set()
    for short, base in zip(cls.bases, cls.written):
        root, _, rest = base.partition(".")
        module = owner.names.modules.get(root)
        if module is not None and root not in owner.names.module_level_bindings:
            if (f"{module}.{rest}" if rest else module) == torch_api.MODULE_CLASS:
                found.add(short)
    return found


def method(summaries: FileSummaries, base: Value, name: str) -> tuple[FileSummaries, int] | None:
    """The summaries and 0-based def line of method ``name`` of ``base``'s class: one class on
    every path, and one def of that name in its family (its bases and subclasses of that file);
    else None (an override elsewhere, or a method it inherits from outside, is not followed)."""
    found_class = _one_class(summaries, base)
    if found_class is None:
        return None
    class_name, class_file, owner = found_class
    if owner.scan.method_replaced(class_name, name) or (
        owner is not summaries and summaries.scan.assigned_elsewhere(name)
    ):
        return None  # `Uploader.send = other`, `up.send = f`, `__getattr__`...: which function runs is not known
    if summaries.project is not None and summaries.project.stored_by_imports(summaries.names, name):
        return None  # a project module this file imports assigns `<x>.<name> = ...` (a monkeypatch at import)
    if owner is not summaries and summaries.project is not None and summaries.project.stored_around(class_file, name):
        return None  # a package `__init__.py` above the class's module, or a module it imports, does
    start = owner.scan.method_start(class_name, name)
    if (
        start is None
        and all(_made_by_calling(o.node, class_name) for o in base)
        and not summaries.scan.names_dynamic_dispatch()  # the calling file's text too
    ):
        # `G3().send(t)`: an object made by calling the class itself runs the class's own
        # method, whatever its bases (an abstract `send`) or subclasses define.
        start = owner.scan.own_method_start(class_name, name)
    if start is None and all(_made_by_calling(o.node, class_name) for o in base):
        return _inherited_method(summaries, owner, class_name, name)
    return (owner, start) if start is not None else None


def _inherited_method(
    summaries: FileSummaries, owner: FileSummaries, class_name: str, name: str
) -> tuple[FileSummaries, int] | None:
    """``Inherit(dev).send(t)``: method ``name`` that no class of ``class_name``'s family (in
    ``owner``'s file) defines, of its one base from another project file, when nothing the
    subclass defines can change what that base's methods do: the base class's text names, as
    ``self.<x>``, no method or attribute the family defines or assigns (an override it would
    dispatch to, a buffer it would replace)."""
    family = owner.scan.family(class_name) or []
    if summaries.scan.names_dynamic_dispatch() or owner.scan.names_dynamic_dispatch():
        return None  # `setattr`, `__class__`, a metaclass...: which function runs is not known
    if any(indented and any(c.start < line < c.end for c in family) for line, indented in owner.scan.defs(name)):
        return None  # defined in the family (an override, or several defs): not inherited
    found = owner.foreign_base(class_name, beside_modules=False)  # (`nn.Module` defines `to`, `cuda`...)
    if found is None:
        return None
    base_summaries, base_name = found
    [base_class] = base_summaries.scan.top_level_classes(base_name)
    start = base_summaries.scan.method_start(base_name, name)
    if start is None or not base_class.start < start < base_class.end:
        return None  # not one def of that name in the base class's own body
    own_text = "".join(line for c in family for line in owner.lines[c.start : c.end])
    defined = set(_DEFINED_IN_CLASS.findall(own_text)) | set(_ASSIGNED_TO_SELF.findall(own_text))
    read_by_base = set(_READ_FROM_SELF.findall("".join(base_summaries.lines[base_class.start : base_class.end])))
    if defined & read_by_base:
        return None  # the subclass defines what the base's methods read through `self`
    return base_summaries, start


_DEFINED_IN_CLASS = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_ASSIGNED_TO_SELF = re.compile(r"\bself\.(\w+)[ \t]*(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=)")
_READ_FROM_SELF = re.compile(r"\bself\.(\w+)")


def _made_by_calling(node: cst.CSTNode | None, class_name: str) -> bool:
    """``node`` is a call of the class by its name (``G3(...)``, ``mod.G3(...)``); not ``cls(...)``
    in a classmethod, which a subclass calling it makes of its own class."""
    return type(node) is cst.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] == class_name


def _summaries_of(summaries: FileSummaries, path: str) -> FileSummaries | None:
    if path == (summaries.path or ""):
        return summaries
    if summaries.project is None:
        return None  # another file's object, seen from a file that follows no imports
    foreign = summaries.project.file(path)
    return foreign.summaries if foreign is not None else None


def _called_cls(summaries: FileSummaries, evaluator: Evaluator, func: cst.BaseExpression) -> ClassRange | None:
    """The class that ``cls(...)`` constructs in a ``@classmethod`` of it (``cls`` being its
    first parameter, never rebound): that class when no class of the file derives from it (a
    subclass calling the classmethod would make one of its own, with its own ``__init__``)."""
    scope = evaluator.scope
    class_name = getattr(evaluator, "class_name", None)
    if (
        type(func) is not cst.Name
        or class_name is None
        or type(scope) is not cst.FunctionDef
        or not scope.params.params
        or scope.params.params[0].name.value != func.value
        or not _is_classmethod(summaries, evaluator, scope)
    ):
        return None
    bound = evaluator.env.get(func.value) or frozenset()
    if len(bound) != 1 or next(iter(bound)).node is not scope.params.params[0]:
        return None  # `cls = other` in the method: not the class any more
    cls = _top_level_class(summaries.scan, class_name)
    if cls is None or any(class_name in c.bases for c in summaries.scan.classes() if c is not cls):
        return None  # not one top-level class of this file, or one with subclasses here
    return cls


def class_of_file(summaries: FileSummaries, name: str) -> ClassRange | None:
    """The one top-level class ``name`` of this file, if it is one."""
    return _top_level_class(summaries.scan, name)


def class_level_method(summaries: FileSummaries, class_name: str, method: str) -> list[int]:
    """The def line of ``method`` in class ``class_name`` when it is one ``@classmethod`` or
    ``@staticmethod`` there (called on the class, its parameters are the call's arguments; an
    instance method would take the object first); else []."""
    cls = _top_level_class(summaries.scan, class_name)
    if cls is None:
        return []
    starts = [
        line
        for line, indented in summaries.scan.defs(method)
        if indented and cls.start < line < cls.end and summaries.scan.class_at(line) == class_name
    ]
    if len(starts) != 1 or _decorators(summaries.lines, starts[0]) not in (["classmethod"], ["staticmethod"]):
        return []
    return starts


def _decorators(lines: list[str], start: int) -> list[str]:
    """The one-line decorators right above the ``def`` on 0-based line ``start`` (comments between
    them skipped), as written after the ``@``."""
    found = []
    row = start - 1
    while row >= 0 and lines[row].strip().startswith(("@", "#")):
        text = lines[row].strip()
        if text.startswith("@"):
            found.append(text[1:].strip())
        row -= 1
    return found


def _is_classmethod(summaries: FileSummaries, evaluator: Evaluator, scope: cst.FunctionDef) -> bool:
    """``@classmethod`` decorates the method: in its tree, or (a parsed segment starts at the
    ``def``) on the lines right above it, one decorator per line."""
    if scope.decorators:
        return any(type(d.decorator) is cst.Name and d.decorator.value == "classmethod" for d in scope.decorators)
    start = getattr(evaluator, "segment_start", None)
    defined = re.match(r"[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", summaries.lines[start]) if start is not None else None
    if defined is None or defined.group(1) != scope.name.value:
        return False  # a function nested in the method: its first parameter is not the class
    return "classmethod" in _decorators(summaries.lines, start)


def _class(summaries: FileSummaries, func: cst.BaseExpression) -> tuple[FileSummaries, ClassRange] | None:
    """The class ``func`` names: one top-level class of this file, or of the project file it is
    imported from."""
    if isinstance(func, cst.Name):
        own = _top_level_class(summaries.scan, func.value)
        if own is not None:
            return summaries, own
        if summaries.scan.defs(func.value) or summaries.project is None:
            return None
    elif not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or summaries.project is None:
        return None
    target = summaries.project.target(summaries.names, func)
    if target is None:
        return None
    path, name, _hops = target
    foreign = summaries.project.file(path)
    if foreign is None or path == summaries.path:
        return None
    cls = _top_level_class(foreign.file.scan, name)
    return (foreign.summaries, cls) if cls is not None else None


def iterated_fields(
    summaries: FileSummaries, evaluator: Evaluator, iterable: cst.BaseExpression
) -> tuple[str, ...] | None:
    """The declared fields of the dataclass whose method runs ``for f in fields(self):``
    (``dataclasses.fields``); None for any other loop. Inherited fields are not listed: what
    ``getattr(self, f.name)`` reads for them stays unknown."""
    if type(iterable) is not cst.Call or len(iterable.args) != 1:
        return None
    (arg,) = iterable.args
    if arg.keyword is not None or arg.star or type(arg.value) is not cst.Name or arg.value.value != "self":
        return None  # the fields of another object: which class it is, is not known here
    if not is_dataclasses_fields(evaluator, iterable.func):
        return None  # a function of that name we do not know: its items are unknown
    class_name = getattr(evaluator, "class_name", None)
    cls = _top_level_class(summaries.scan, class_name) if class_name is not None else None
    if cls is None:
        return None  # not a method of one top-level class of this file
    found = _declared_fields(summaries, cls)
    return tuple(found) if found else None  # None: not a dataclass (`fields()` would raise)


def is_dataclasses_fields(evaluator: Evaluator, func: cst.BaseExpression) -> bool:
    """``func`` is ``dataclasses.fields`` (imported from there, not rebound)."""
    names = evaluator.file_names
    if type(func) is cst.Name:
        name = func.value
        return (
            names.from_imports.get(name) == (0, "dataclasses", "fields")
            and name not in evaluator.env
            and name not in names.module_level_bindings
        )
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.attr.value == "fields"
        and names.modules.get(func.value.value) == "dataclasses"
        and func.value.value not in evaluator.env
    )


def _top_level_class(scan: FileText, name: str) -> ClassRange | None:
    found = scan.top_level_classes(name)
    if len(found) != 1 or any(not indented for _, indented in scan.defs(name)) or scan.rebound(name):
        return None  # not a class here, defined twice, also a function, or rebound
    return found[0]


def _positional_in_order(summaries: FileSummaries, cls: ClassRange) -> bool:
    """The dataclass's ``__init__`` takes its fields in declaration order, all of them."""
    header = "".join(summaries.lines[max(0, cls.start - 3) : cls.start + 1])
    body = "".join(summaries.lines[cls.start + 1 : cls.end])
    return "kw_only" not in header and "init=False" not in body and "KW_ONLY" not in body


def _declared_fields(summaries: FileSummaries, cls: ClassRange) -> list[str] | None:
    """The fields of a dataclass or NamedTuple, in order; None for another class."""
    lines = summaries.lines
    decorated = False
    row = cls.start - 1
    while row >= 0 and lines[row].lstrip().startswith("@"):
        decorated = decorated or _DATACLASS.match(lines[row]) is not None
        row -= 1
    if not decorated and "NamedTuple" not in cls.bases:
        return None
    fields: list[str] = []
    body_indent: str | None = None
    for row in range(cls.start + 1, cls.end):
        line = lines[row]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if body_indent is None:
            body_indent = indent
        if indent != body_indent or _NOT_FIELD.match(line):
            continue  # inside a method, or not a declaration
        match = _FIELD.match(line)
        if match is not None and "ClassVar" not in match.group(3):
            fields.append(match.group(2))
    return fields


def _own_init(summaries: FileSummaries, cls: ClassRange) -> ast.FunctionDef | None:
    """The class's own ``__init__``, parsed with ``ast``; None when it has none (a base's runs),
    it is decorated, or it takes ``*args``/``**kwargs`` (which argument is which is not visible)."""
    if cls.name not in summaries.init_trees:
        summaries.init_trees[cls.name] = _parsed_init(summaries, cls)
    return summaries.init_trees[cls.name]


def _parsed_init(summaries: FileSummaries, cls: ClassRange) -> ast.FunctionDef | None:
    import textwrap

    from pinlint.analysis.triage import segment_for, segment_text

    start = summaries.scan.method_start(cls.name, "__init__")
    if start is None or not cls.start < start < cls.end or summaries.lines[start - 1].lstrip().startswith("@"):
        return None
    text = segment_text(summaries.lines, segment_for(summaries.lines, start))
    try:
        tree = ast.parse(textwrap.dedent(text or ""))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    init = tree.body[0] if tree.body else None
    if not isinstance(init, ast.FunctionDef) or init.args.vararg or init.args.kwarg:
        return None
    return init


def _init_statements(
    summaries: FileSummaries, cls: ClassRange
) -> Iterator[tuple[ast.stmt, set[str], ast.Attribute | None]]:
    """The top-level statements of the class's own ``__init__`` that always run, each with the
    names bound before it and its ``self.<attr>`` target when it assigns one attribute that the
    class family assigns nowhere else."""
    init = _own_init(summaries, cls)
    if init is None:
        return
    rebound: set[str] = set()
    for statement in init.body:
        if isinstance(statement, (ast.Return, ast.Raise)):
            break  # what follows may not run
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        single = None
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            lines = summaries.scan.attribute_lines(cls.name, target.attr)
            single = target if lines is not None and len(lines) == 1 else None
        yield statement, rebound, single
        rebound.update(n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def _init_parameters(init: ast.FunctionDef) -> tuple[list[str], list[str]]:
    """The positional parameters after ``self``, and the keyword-only ones."""
    return [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:], [a.arg for a in init.args.kwonlyargs]


def _scanned_init(
    summaries: FileSummaries,
    cls: ClassRange,
    memo: dict[str, dict[str, T]],
    scan: Callable[[ast.FunctionDef, ast.expr | None, set[str], ast.Attribute], tuple[str, T] | None],
) -> dict[str, T]:
    """What ``scan`` finds in the statements of the class's own ``__init__`` that assign one
    attribute of ``self`` (``_init_statements``), memoised per class in ``memo``."""
    if cls.name in memo:
        return memo[cls.name]
    found: dict[str, T] = {}
    memo[cls.name] = found
    init = _own_init(summaries, cls)
    if init is None:
        return found
    for statement, rebound, target in _init_statements(summaries, cls):
        if target is not None:
            value = statement.value if isinstance(statement, ast.Assign) else None
            got = scan(init, value, rebound, target)
            if got is not None:
                found.setdefault(*got)
    return found


def _stored_by_init(summaries: FileSummaries, cls: ClassRange) -> dict[str, tuple[int | None, str]]:
    """``self.x = x`` statements of the class's own ``__init__`` that always run and store a
    parameter as it was passed: parameter -> (its position after ``self``, or None when
    keyword-only; the attribute). Only attributes the class family assigns nowhere else."""

    def scan(
        init: ast.FunctionDef, value: ast.expr | None, rebound: set[str], target: ast.Attribute
    ) -> tuple[str, tuple[int | None, str]] | None:
        params, keyword_only = _init_parameters(init)
        if not isinstance(value, ast.Name) or value.id in rebound:
            return None
        if value.id not in params and value.id not in keyword_only:
            return None
        return value.id, (params.index(value.id) if value.id in params else None, target.attr)

    return _scanned_init(summaries, cls, summaries.init_stores, scan)


def _allocated_by_init(summaries: FileSummaries, cls: ClassRange) -> dict[str, tuple[int | None, str, bool]]:
    """``self.buf = torch.empty(n, device=device)`` statements of the class's own ``__init__``
    that always run, ``device`` a parameter as it was passed: attribute -> (the parameter's
    position after ``self``, or None when keyword-only; the parameter; whether its default is the
    host). Only attributes the class family assigns nowhere else: a construction passing the
    host for it makes a host tensor there."""

    def scan(
        init: ast.FunctionDef, value: ast.expr | None, rebound: set[str], target: ast.Attribute
    ) -> tuple[str, tuple[int | None, str, bool]] | None:
        if not isinstance(value, ast.Call) or not _torch_factory(summaries, value.func):
            return None
        device = next((k.value for k in value.keywords if k.arg == "device"), None)
        if any(k.arg is None for k in value.keywords) or not isinstance(device, ast.Name):
            return None  # `**kwargs` may carry another device; a device that is no parameter's name
        params, keyword_only = _init_parameters(init)
        name = device.id
        if name in rebound or (name not in params and name not in keyword_only):
            return None
        return target.attr, (params.index(name) if name in params else None, name, _host_default(init, name))

    return _scanned_init(summaries, cls, summaries.init_allocations, scan)


def _default_of(init: ast.FunctionDef, name: str) -> ast.expr | None:
    """The default of ``__init__``'s parameter ``name``, if it has one."""
    args = [*init.args.posonlyargs, *init.args.args]
    defaults: dict[str, ast.expr | None] = dict(
        zip([a.arg for a in args][len(args) - len(init.args.defaults) :], init.args.defaults)
    )
    defaults.update((a.arg, d) for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults))
    return defaults.get(name)


def _literal_default(init: ast.FunctionDef, name: str) -> Value | None:
    """What a literal default of ``__init__``'s parameter ``name`` is: the host's device
    (``"cpu"``, ``torch.device("cpu")``), ``True``, or other Python data (``False``, ``None``,
    a number); None for any other default, or none."""
    if _host_default(init, name):
        return HOST_DEVICE
    default = _default_of(init, name)
    if not isinstance(default, ast.Constant) or isinstance(default.value, (str, bytes)):
        return None
    return TRUE if default.value is True else PYDATA


def _host_default(init: ast.FunctionDef, name: str) -> bool:
    """The parameter's default is ``"cpu"`` or ``torch.device("cpu")``."""
    default = _default_of(init, name)
    if isinstance(default, ast.Call) and isinstance(default.func, ast.Attribute) and default.func.attr == "device":
        default = default.args[0] if len(default.args) == 1 and not default.keywords else None
    return isinstance(default, ast.Constant) and isinstance(default.value, str) and default.value.split(":")[0] == "cpu"


def _torch_factory(summaries: FileSummaries, func: ast.expr) -> bool:
    """``torch.empty`` (also through an alias of torch, or a name imported from it) of a factory
    that allocates where its ``device=`` says."""
    names = summaries.names
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id in names.torch_modules and func.attr in torch_api.PINNABLE_FACTORIES
    if isinstance(func, ast.Name):
        return names.torch_functions.get(func.id) in torch_api.PINNABLE_FACTORIES
    return False
