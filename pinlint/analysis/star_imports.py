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
#: text -> what a star import of that module binds (parsed once per text).
_EXPORTS: dict[str, _Exports | None] = {}


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
    if text not in _EXPORTS:
        if len(_EXPORTS) > 1024:
            _EXPORTS.clear()
        try:
            _EXPORTS[text] = _Exports(ast.parse(text), bool(star_imports(text)))
        except (SyntaxError, ValueError, RecursionError):
            _EXPORTS[text] = None  # not a module Python would import
    found = _EXPORTS[text]
    return found.binds(name) if found is not None else None


class _Exports:
    """A module's names as a star import of it sees them."""

    def __init__(self, tree: ast.Module, has_star: bool) -> None:
        self.listed = _listed(tree)
        self.certain: set[str] = set()
        self.conditional: set[str] = set()
        self.has_star = has_star
        _collect(tree.body, self.certain, self.conditional)

    def binds(self, name: str) -> bool | None:
        if self.listed is None:
            return None  # `__all__` built by code: what it lists is not known
        if self.listed is not False and name not in self.listed:  # type: ignore[operator]
            return False  # `__all__` decides, whatever the module binds
        if self.listed is False and name.startswith("_"):
            return False  # without `__all__`, private names are not exported
        if name in self.conditional:
            return None  # (also) bound under an `if`/`try`: which binding holds is not known
        if name in self.certain:
            return True
        return None if self.has_star else False  # maybe from a star import of its own


def _collect(body: list[ast.stmt], certain: set[str], conditional: set[str], *, certain_here: bool = True) -> None:
    for statement in body:
        (certain if certain_here else conditional).update(bound_names(statement))
        for nested in conditional_bodies(statement):
            _collect(nested, certain, conditional, certain_here=False)


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


def bound_names(statement: ast.stmt) -> set[str]:
    """The names a module-level statement binds."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".", 1)[0] for a in statement.names if a.name != "*"}
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def conditional_bodies(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The bodies of a module-level statement whose code may or may not run (``if``, ``try``, loops, ``with``)."""
    if isinstance(statement, (ast.If, ast.For, ast.While, ast.With)):
        return [statement.body, getattr(statement, "orelse", [])]
    if isinstance(statement, ast.Try):
        return [statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)]
    return []
