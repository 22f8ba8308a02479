"""What a star import binds: ``from .copiers import *`` in a package's ``__init__.py`` re-exports
the module's public names (or those its ``__all__`` lists). A name is resolved through the star
imports of a module only when every one that could bind it is decided; the last that binds it
wins, as at run time."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

#: ``from <dots><module> import *`` at a line's start (a star import is only legal at module
#: level; an indented one is under an ``if``/``try``, and whether it ran is not known).
_STAR_IMPORT = re.compile(r"^([ \t]*)from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.M)

#: text -> its star imports (a text's hash is computed once; the texts are the files' own).
_STARS: dict[str, list[tuple[str, int, str]]] = {}
#: (text, name) -> whether a star import of the module binds the name.
_EXPORTS: dict[tuple[str, str], bool | None] = {}


def star_imports(text: str) -> list[tuple[str, int, str]]:
    """(indentation, level, module) of each star import of ``text``, in order."""
    if "*" not in text:
        return []
    found = _STARS.get(text)
    if found is None:
        if len(_STARS) > 4096:
            _STARS.clear()
        found = _STARS[text] = [(indent, len(dots), module) for indent, dots, module in _STAR_IMPORT.findall(text)]
    return found


def provider(text: str, name: str, module_text: Callable[[int, str], str | None]) -> tuple[int, str] | None:
    """The (level, module) of the star import of ``text`` that binds ``name`` there, or None:
    none does, or which one does is not known (an indented star import, a module that cannot be
    read, one that may bind the name through star imports of its own or a computed
    ``__all__``). ``module_text(level, module)`` reads a module (None: not the project's, or
    missing). The caller has checked that ``text`` binds ``name`` in no other way."""
    stars = star_imports(text)
    for indent, level, module in reversed(stars):
        if indent:
            return None  # under an `if`/`try`: whether it ran is not known
        other = module_text(level, module)
        if other is None:
            return None  # a library's module (or a missing one): what it binds is not known
        binds = exports(other, name)
        if binds is None:
            return None
        if binds:
            return level, module  # the last star import that binds it wins
    return None


def exports(text: str, name: str) -> bool | None:
    """Whether ``from <the module> import *`` binds ``name``; None when that is not known."""
    key = (text, name)
    if key not in _EXPORTS:
        if len(_EXPORTS) > 16384:
            _EXPORTS.clear()
        _EXPORTS[key] = _exports(text, name)
    return _EXPORTS[key]


def _exports(text: str, name: str) -> bool | None:
    if name not in text:
        # Not named at all: bound only by a star import of its own, if any.
        return None if star_imports(text) else False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None  # not a module Python would import
    listed = _listed(tree)
    if listed is None:
        return None  # `__all__` built by code: what it lists is not known
    if listed is not False and name not in listed:
        return False  # `__all__` decides, whatever the module binds
    if listed is False and name.startswith("_"):
        return False  # without `__all__`, private names are not exported
    bound = _binding(tree.body, name)
    if bound is None:
        return None
    if not bound and star_imports(text):
        return None  # may come from a star import of its own
    return bound


def _listed(tree: ast.Module) -> set[str] | None | bool:
    """The names a literal ``__all__`` lists; False without one; None when it is computed or
    changed after its assignment."""
    listed: set[str] | None | bool = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__all__" and not isinstance(node.ctx, ast.Load):
            if listed is not False:
                return None  # assigned twice, or augmented
            listed = None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "__all__":
            return None  # `__all__.append(...)`, `__all__.extend(...)`
    if listed is False:
        return False
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == "__all__"
            and isinstance(statement.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in statement.value.elts)
        ):
            return {e.value for e in statement.value.elts}  # type: ignore[misc]
    return None  # not a literal at module level


def _binding(body: list[ast.stmt], name: str) -> bool | None:
    """Whether the module-level statements bind ``name`` for certain (True), not at all (False),
    or under a condition (None)."""
    for statement in body:
        if _binds(statement, name):
            return True
        for nested in _conditional_bodies(statement):
            if _binding(nested, name) is not False:
                return None  # bound under an `if`/`try`/loop: whether it is, is not known
    return False


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".", 1)[0]) == name for a in statement.names)
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
    return False


def _conditional_bodies(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, (ast.If, ast.For, ast.While, ast.With)):
        return [statement.body, getattr(statement, "orelse", [])]
    if isinstance(statement, ast.Try):
        return [statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)]
    return []
