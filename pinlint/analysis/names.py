"""What the names of a file mean: which are torch, numpy, or the project's pin-memory helper.

Import statements are found by a line scan and parsed one by one with ``ast`` (each is tiny),
so no parse of the whole file is needed. Imports at any indentation count: a ``torch`` bound
inside a function or a ``try:`` block is still torch.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from dataclasses import dataclass, field

from pinlint import torch_api

_HELPER_ATTR_CALL = re.compile(r"\.is_pin_memory_available\s*\(")
_MAX_IMPORT_CHARS = 64 * 1024
_IMPORT_LINE_BUDGET = 200_000
_NAME_START = re.compile(r"[A-Za-z_]")


def _helper_attr_prefixes(text: str) -> list[str]:
    """``mod.sub`` of each ``mod.sub.is_pin_memory_available(`` call. Found from the literal
    and walked back: a regex starting with the name restarts inside a long identifier
    (quadratic)."""
    out = []
    for match in _HELPER_ATTR_CALL.finditer(text):
        j = match.start()
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_."):
            j -= 1
        first = _NAME_START.search(text, j, match.start())
        if first is not None:
            out.append(text[first.start() : match.start()])
    return out


@dataclass
class FileNames:
    #: Local names bound to the ``torch`` module (``import torch as T`` -> {"T"}).
    torch_modules: set[str] = field(default_factory=set)
    #: Local name -> torch function name (``from torch import tensor as tt`` -> {"tt": "tensor"}).
    torch_functions: dict[str, str] = field(default_factory=dict)
    numpy_modules: set[str] = field(default_factory=set)
    numpy_functions: dict[str, str] = field(default_factory=dict)
    #: Local name -> dotted module, for every ``import a.b as x`` / ``import a``.
    modules: dict[str, str] = field(default_factory=dict)
    #: Local names bound to two different modules (``import a as h`` here, ``import b as h`` in a
    #: function): which one a call reaches is not known.
    ambiguous_modules: set[str] = field(default_factory=set)
    #: (level, dotted module) of every module an import statement runs (``import a.b`` runs
    #: ``a.b``, ``from .x import y`` runs ``.x``), in order.
    imported_modules: list[tuple[int, str]] = field(default_factory=list)
    #: Local name -> (level, module, name) for every ``from module import name [as local]``
    #: (level: the leading dots of a relative import), so that calls into the project resolve.
    from_imports: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    #: Local name of the pin-memory helper -> module it was imported from ("" when defined here).
    helper_bindings: dict[str, str] = field(default_factory=dict)
    #: ``mod.is_pin_memory_available(`` spellings seen in the file: (``mod`` as written, the
    #: module it names).
    helper_attribute_calls: list[tuple[str, str]] = field(default_factory=list)
    #: Names bound at module level by something other than an import (def, class, assignment).
    module_level_bindings: set[str] = field(default_factory=set)
    #: Names of the ``class`` statements at module level.
    top_level_classes: set[str] = field(default_factory=set)
    #: 0-based index of the last line of the last module-level import (where new imports go).
    last_top_level_import_line: int | None = None
    #: top-level package -> 0-based index of the last line of its last module-level import,
    #: so a new import joins the imports of its own package.
    import_group_lines: dict[str, int] = field(default_factory=dict)
    #: Whether the file calls ``torch.set_default_device`` (factories may then allocate on a device).
    sets_default_device: bool = False
    #: Project functions taught in [tool.pinlint] (names as called).
    pinned_functions: frozenset[str] = frozenset()
    host_functions: frozenset[str] = frozenset()

    @property
    def imports_torch(self) -> bool:
        return bool(self.torch_modules or self.torch_functions)


_IMPORT_LINE = re.compile(r"^([ \t]*)(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t])", re.M)
_TOP_LEVEL_BINDING = re.compile(
    r"^(?:(?:async[ \t]+)?def|(class))[ \t]+(\w+)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M
)


def scan_names(text: str, lines: list[str] | None = None) -> FileNames:
    """Imports and module-level bindings, found with whole-text regexes (fast on big files)."""
    names = FileNames()
    last_top_level_end = -1
    group_ends: dict[str, int] = {}
    budget = _IMPORT_LINE_BUDGET
    maybe: list[tuple[int, int]] | None = None
    strings: list[tuple[int, int]] | None = None
    for match in _IMPORT_LINE.finditer(text):
        start = match.start()
        if '"""' in text or "'''" in text:
            if maybe is None:
                maybe = _maybe_string_spans(text)
            if _inside(maybe, start):
                if strings is None:
                    strings = _triple_quoted_spans(text)
                if _inside(strings, start):
                    continue  # `from x import y` in a docstring: text, not an import
        # The statement runs to the end of the line, or further while a bracket is open or
        # the line ends with a backslash.
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        snippet = text[start:end]
        # Count only the new line each round (recounting the snippet was cubic on unbalanced
        # `import (` lines inside a string), and give up on a statement no real import reaches.
        # A per-file budget of lines bounds the whole scan linearly whatever the input.
        balance = snippet.count("(") - snippet.count(")")
        while (balance > 0 or text[start:end].rstrip().endswith("\\")) and end < len(text):
            if end - start >= _MAX_IMPORT_CHARS or budget <= 0:
                break
            budget -= 1
            nxt = text.find("\n", end + 1)
            nxt = len(text) if nxt == -1 else nxt
            balance += text.count("(", end, nxt) - text.count(")", end, nxt)
            end = nxt
        snippet = text[start:end]
        if balance > 0:
            continue  # never closed: not a real import (text inside a string)
        try:
            tree = ast.parse(snippet.strip())
        except SyntaxError:
            continue  # not a real import (e.g. text inside a string)
        for node in tree.body:
            _record_import(node, names)
        if not match.group(1):
            last_top_level_end = end
            for node in tree.body:
                module = (
                    node.module
                    if isinstance(node, ast.ImportFrom)
                    else (node.names[0].name if isinstance(node, ast.Import) else None)
                )
                if module and not (isinstance(node, ast.ImportFrom) and node.level):
                    group_ends[module.split(".", 1)[0]] = end
    if last_top_level_end >= 0:
        # 0-based index of the last top-level import's last line (where new imports go).
        names.last_top_level_import_line = text.count("\n", 0, last_top_level_end)
        for package, end in group_ends.items():
            names.import_group_lines[package] = text.count("\n", 0, end)
    for match in _TOP_LEVEL_BINDING.finditer(text):
        name = match.group(2) or match.group(3)
        if name not in ("import", "from"):
            names.module_level_bindings.add(name)
            if match.group(1):
                names.top_level_classes.add(name)
    if (
        "*" in names.from_imports
        and not names.torch_modules
        and "torch" not in names.module_level_bindings
        and "torch" not in names.from_imports
        and "torch" not in names.modules
        and "torch." in text
    ):
        # `from .common import *` and `torch.arange(...)` with no import of torch here: the star
        # import binds it (nothing else could), and a module named `torch` is torch.
        names.torch_modules.add("torch")
    for name in list(names.torch_functions):
        if name in names.module_level_bindings:
            del names.torch_functions[name]  # `def tensor(...)` after the import: not torch's
    if "is_pin_memory_available" in text:
        for prefix in _helper_attr_prefixes(text):
            root, _, rest = prefix.partition(".")
            if root in names.modules:
                module = names.modules[root] + (f".{rest}" if rest else "")
                names.helper_attribute_calls.append((prefix, module))
        if torch_api.PIN_HELPER_NAME in names.module_level_bindings and re.search(
            rf"^(?:async[ \t]+)?def[ \t]+{torch_api.PIN_HELPER_NAME}\b", text, re.M
        ):
            names.helper_bindings.setdefault(torch_api.PIN_HELPER_NAME, "")
    names.sets_default_device = "set_default_device" in text and _calls_set_default_device(text)
    return names


def _maybe_string_spans(text: str) -> list[tuple[int, int]]:
    """Spans between successive triple quotes of one kind (a `\"\"\"` in a comment or a one-line
    string counts too): every real triple-quoted string is inside one. Only an import found
    inside one needs ``_triple_quoted_spans``'s exact scan."""
    spans: list[tuple[int, int]] = []
    opened, kind = -1, ""
    for match in _TRIPLE_QUOTE.finditer(text):
        if opened < 0:
            opened, kind = match.start(), match.group()
        elif match.group() == kind:
            spans.append((opened, match.end()))
            opened = -1
    if opened >= 0:
        spans.append((opened, len(text)))
    return spans


_TRIPLE_QUOTE = re.compile(r"\"\"\"|'''")


def _triple_quoted_spans(text: str) -> list[tuple[int, int]]:
    """Start and end offsets of the triple-quoted strings of ``text``, in order, by a scan that
    skips comments and one-line strings (a `\"\"\"` in either opens nothing). Only the quote and
    hash characters are visited (``str.find``), so it costs little more than a search."""
    spans: list[tuple[int, int]] = []
    at, end = 0, len(text)
    while True:
        match = _QUOTE_OR_HASH.search(text, at)
        if match is None:
            return spans
        start, token = match.start(), match.group()
        if token == "#":
            newline = text.find("\n", start)
            at = end if newline < 0 else newline + 1
            continue
        if len(token) == 3:
            close = _closing(text, start + 3, token)
            spans.append((start, close))
            at = close
            continue
        at = _end_of_line_string(text, start + 1, token)


def _closing(text: str, at: int, quote: str) -> int:
    """The offset after the triple ``quote`` that closes a string whose body starts at ``at``."""
    while True:
        found = text.find(quote, at)
        if found < 0:
            return len(text)  # never closed: to the end
        backslashes = 0
        while found - backslashes - 1 >= at and text[found - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return found + 3
        at = found + 1


def _end_of_line_string(text: str, at: int, quote: str) -> int:
    """The offset after a one-line string's closing ``quote`` (or its line's end)."""
    while True:
        found = text.find(quote, at)
        newline = text.find("\n", at)
        if found < 0 or (0 <= newline < found):
            return len(text) if newline < 0 else newline + 1
        backslashes = 0
        while text[found - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return found + 1
        at = found + 1


_QUOTE_OR_HASH = re.compile(r"\"\"\"|'''|[\"'#]")


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    index = bisect.bisect_right(spans, (offset, offset)) - 1
    return index >= 0 and spans[index][0] < offset < spans[index][1]


def _bind_module(names: FileNames, local: str, target: str) -> None:
    known = names.modules.get(local)
    if known is not None and known != target:
        names.ambiguous_modules.add(local)
    names.modules[local] = target


def _record_import(node: ast.stmt, names: FileNames) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or alias.name.split(".", 1)[0]
            target = alias.name if alias.asname else alias.name.split(".", 1)[0]
            _bind_module(names, local, target)
            names.imported_modules.append((0, alias.name))
            if target == "torch":
                names.torch_modules.add(local)
            elif target in torch_api.NUMPY_MODULES:
                names.numpy_modules.add(local)
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names.imported_modules.append((0, node.module))
        for alias in node.names:
            local = alias.asname or alias.name
            _from_import(names, local, (0, node.module, alias.name))
            # `from vllm import utils` may bind a module: `utils.is_pin_memory_available()`.
            if local in names.modules and names.modules[local] != f"{node.module}.{alias.name}":
                names.ambiguous_modules.add(local)
            names.modules.setdefault(local, f"{node.module}.{alias.name}")
            if node.module == "torch":
                names.torch_functions[local] = alias.name
            elif node.module in torch_api.NUMPY_MODULES:
                names.numpy_functions[local] = alias.name
            if alias.name == torch_api.PIN_HELPER_NAME:
                names.helper_bindings[local] = node.module
    elif isinstance(node, ast.ImportFrom) and node.level > 0:
        names.imported_modules.append((node.level, node.module or ""))
        for alias in node.names:
            _from_import(names, alias.asname or alias.name, (node.level, node.module or "", alias.name))
            if alias.name == torch_api.PIN_HELPER_NAME:
                names.helper_bindings[alias.asname or alias.name] = "." * node.level + (node.module or "")


#: Top-level modules that are never the project's: calls into them are not followed.
LIBRARY_ROOTS = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "triton", "typing_extensions"}


def project_imports(names: FileNames) -> set[str]:
    """The local names this file imports from modules that may be the project's (relative
    imports, and absolute ones outside the standard library and torch's own stack)."""
    local = {
        name
        for name, (level, module, _) in names.from_imports.items()
        if level or module.split(".", 1)[0] not in LIBRARY_ROOTS
    }
    local |= {name for name, module in names.modules.items() if module.split(".", 1)[0] not in LIBRARY_ROOTS}
    return local - names.torch_modules - set(names.torch_functions)


#: A local name imported from two different places (``try: from a import f`` / ``except: from b
#: import f``): which one runs is not known, so calls through it are not followed.
AMBIGUOUS_IMPORT = (-1, "", "")


def _from_import(names: FileNames, local: str, source: tuple[int, str, str]) -> None:
    known = names.from_imports.get(local)
    names.from_imports[local] = source if known is None or known == source else AMBIGUOUS_IMPORT


def _calls_set_default_device(text: str) -> bool:
    """``set_default_device(`` as code, not in a comment or a string (tokenized: this only runs
    for the rare files that mention it)."""
    import io
    import tokenize

    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string == "(" and previous == "set_default_device":
                return True
            previous = token.string if token.type == tokenize.NAME else ""
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True  # cannot tell: assume it may be called (fewer findings, never wrong ones)
    return False
