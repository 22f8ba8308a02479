"""What a name means at one place of a file: a small scope model built with ``ast``.

The fixer writes ``pin_memory=<helper>(<device>)`` into a construction, so it must know what
``<helper>`` (or the root of ``mod.<helper>``) is bound to *there*, the way Python will resolve it:
module, class, function, lambda and comprehension scopes; imports anywhere; ``global`` and
``nonlocal``; names bound only under ``if TYPE_CHECKING:`` (or ``if False:``) are not runtime
bindings; a class body's names are not visible in its methods; a local anywhere in a function
(a parameter, an assignment, an import later in the body, a nested ``def``) shadows the global.

``ast`` is used rather than libcst: it is about ten times faster, and the file is parsed only when
it has a finding with a fix.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field

#: Binding kinds.
IMPORT = "import"  # `import a.b` / `from a import b` (module, name recorded)
DEF = "def"
CLASS = "class"
ASSIGN = "assign"  # anything else: assignment, for/with target, parameter, except name, ...
PARAM = "parameter"


@dataclass(frozen=True)
class Binding:
    kind: str
    row: int
    #: For imports: the module imported from (``from M import n``) or the module bound (``import M``).
    module: str = ""
    #: For ``from M import n``: ``n``; for ``import M``: "".
    imported: str = ""
    #: Bound only on some paths (inside if/try/for/while/with/match at this scope's level).
    conditional: bool = False
    #: Inside ``if TYPE_CHECKING:`` / ``if False:``: never bound at run time.
    dead: bool = False
    #: Bound from inside a function through ``global``.
    via_global: bool = False
    #: For defs: the function node (its signature decides the helper's arguments).
    node: ast.AST | None = None

    def describe(self) -> str:
        if self.kind == IMPORT:
            what = f"an import from `{self.module}`" if self.imported else f"`import {self.module}`"
        elif self.kind == PARAM:
            what = "a parameter"
        elif self.kind == DEF:
            what = "a `def`"
        elif self.kind == CLASS:
            what = "a `class`"
        else:
            what = "an assignment"
        where = " (through `global`)" if self.via_global else ""
        return f"{what} on line {self.row}{where}"


@dataclass
class Scope:
    kind: str  # module, function, class, lambda, comprehension
    name: str
    parent: Scope | None
    #: (row, col) start and end of the region whose names this scope resolves (0-based cols, bytes).
    start: tuple[int, int] = (0, 0)
    end: tuple[int, int] = (10**9, 0)
    #: Regions inside ``start..end`` evaluated in the parent (a comprehension's first iterable).
    holes: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    children: list[Scope] = field(default_factory=list)
    #: The function, lambda, class or comprehension node (None for the module).
    node: ast.AST | None = None
    #: A function body not walked yet, and the dead-code depth it sits at (see ``FileScopes``).
    pending: tuple[list[ast.AST], int] | None = None

    def contains(self, pos: tuple[int, int]) -> bool:
        if not (self.start <= pos < self.end):
            return False
        return not any(a <= pos < b for a, b in self.holes)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


@dataclass(frozen=True)
class Resolution:
    """What a name is at one place."""

    #: "unbound", "module" (global bindings, see ``bindings``), "local" (a function, lambda or
    #: comprehension binds it), "class" (the class body binds it).
    where: str
    bindings: tuple[Binding, ...] = ()
    scope_name: str = ""

    @property
    def runtime(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if not b.dead)


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)  # type: ignore[attr-defined]


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _is_dead_test(test: ast.expr) -> bool:
    """``TYPE_CHECKING``, ``typing.TYPE_CHECKING``, ``False``, ``0``: a block never run."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return True
    if isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        return True
    return isinstance(test, ast.Constant) and not test.value


class _Builder(ast.NodeVisitor):
    def __init__(self, module: Scope, declarations: bool = True) -> None:
        #: False when the source has no ``global``/``nonlocal``: no body needs pre-scanning for them.
        self.declarations = declarations
        self.scope = module
        self.module = module
        self.conditional = 0
        self.dead = 0

    # -- helpers ---------------------------------------------------------------------------
    def _bind(self, name: str, kind: str, row: int, **kw: object) -> None:
        scope = self.scope
        # A comprehension's walrus binds in the enclosing function (or module).
        via_global = False
        if name in scope.globals and scope.kind != "module":
            scope, via_global = self.module, True
        elif name in scope.nonlocals:
            scope = scope.parent or self.module
            while scope.parent is not None and scope.kind in ("class", "comprehension"):
                scope = scope.parent
        scope.bind(
            name,
            Binding(
                kind,
                row,
                conditional=bool(self.conditional) or via_global or self.scope is not scope,
                dead=bool(self.dead),
                via_global=via_global,
                **kw,  # type: ignore[arg-type]
            ),
        )

    def _child(self, kind: str, name: str, start: tuple[int, int], end: tuple[int, int], node: ast.AST) -> Scope:
        child = Scope(kind, name, self.scope, start, end, node=node)
        self.scope.children.append(child)
        return child

    def _in(self, scope: Scope, nodes: list[ast.AST]) -> None:
        saved = (self.scope, self.conditional, self.dead)
        self.scope, self.conditional = scope, 0
        for node in nodes:
            self.visit(node)
        self.scope, self.conditional, self.dead = saved

    def _block(self, nodes: list[ast.stmt], *, dead: bool = False) -> None:
        self.conditional += 1
        self.dead += dead
        for node in nodes:
            self.visit(node)
        self.conditional -= 1
        self.dead -= dead

    # -- statements ------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".", 1)[0]
            module = alias.name if alias.asname else alias.name.split(".", 1)[0]
            self._bind(local, IMPORT, node.lineno, module=module)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name != "*":
                self._bind(
                    alias.asname or alias.name,
                    IMPORT,
                    node.lineno,
                    module=module,
                    imported=alias.name,
                )

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for decorator in getattr(node, "decorator_list", []):
            self.visit(decorator)
        args = node.args
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    self.visit(a.annotation)
            if node.returns is not None:
                self.visit(node.returns)
            self._bind(node.name, DEF, node.lineno, node=node)
            body: list[ast.AST] = list(node.body)
            start = _start(node.body[0])
            # Decorators sit above `def`: the scope's region starts at its first body statement.
            kind, name = "function", node.name
        else:
            body = [node.body]
            start, kind, name = _start(node.body), "lambda", "<lambda>"
        child = self._child(kind, name, start, _end(node), node)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                child.bind(a.arg, Binding(PARAM, a.lineno))
        if not self.declarations and kind == "function":
            # No `global`/`nonlocal` anywhere in the file: nothing in this body binds outside it,
            # so the body is walked only if a fix asks about a place inside it.
            child.pending = (body, self.dead)
            return
        # `global`/`nonlocal` apply to the whole body, wherever they are written.
        for sub in own_nodes(body) if self.declarations else ():
            if isinstance(sub, ast.Global):
                child.globals.update(sub.names)
            elif isinstance(sub, ast.Nonlocal):
                child.nonlocals.update(sub.names)
        self._in(child, body)

    def build_pending(self, scope: Scope) -> None:
        """Walk a function body left for later (as ``_function`` would have then)."""
        assert scope.pending is not None
        body, dead = scope.pending
        scope.pending = None
        self.dead = dead
        self._in(scope, body)

    visit_FunctionDef = _function  # type: ignore[assignment]
    visit_AsyncFunctionDef = _function  # type: ignore[assignment]
    visit_Lambda = _function  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(expr)
        self._bind(node.name, CLASS, node.lineno)
        child = self._child("class", node.name, _start(node.body[0]), _end(node), node)
        self._in(child, list(node.body))

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        first = node.generators[0]
        self.visit(first.iter)  # evaluated in the enclosing scope
        child = self._child("comprehension", "<comprehension>", _start(node), _end(node), node)
        child.holes.append((_start(first.iter), _end(first.iter)))
        saved = (self.scope, self.conditional)
        self.scope = child
        for i, gen in enumerate(node.generators):
            self.visit(gen.target)
            if i:
                self.visit(gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.scope, self.conditional = saved

    visit_ListComp = _comprehension  # type: ignore[assignment]
    visit_SetComp = _comprehension  # type: ignore[assignment]
    visit_GeneratorExp = _comprehension  # type: ignore[assignment]
    visit_DictComp = _comprehension  # type: ignore[assignment]

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        saved = self.scope
        self.scope = scope
        self._bind(node.target.id, ASSIGN, node.lineno)
        self.scope = saved

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node.id, ASSIGN, node.lineno)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name, ASSIGN, node.lineno)
        for stmt in node.body:
            self.visit(stmt)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self._bind(node.name, ASSIGN, node.lineno)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name, ASSIGN, node.lineno)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self._bind(node.rest, ASSIGN, node.lineno)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        dead = _is_dead_test(node.test)
        self._block(list(node.body), dead=dead)
        self._block(list(node.orelse))

    def _compound(self, node: ast.stmt) -> None:
        # Everything under a loop, try, with or match runs on some paths only.
        self.conditional += 1
        self.generic_visit(node)
        self.conditional -= 1

    visit_For = visit_AsyncFor = visit_While = _compound  # type: ignore[assignment]
    visit_Try = visit_With = visit_AsyncWith = visit_Match = _compound  # type: ignore[assignment]
    if hasattr(ast, "TryStar"):
        visit_TryStar = _compound  # type: ignore[assignment]


class FileScopes:
    """The scopes of one parsed file."""

    def __init__(self, tree: ast.Module, text: str | None = None) -> None:
        """``text``, the source, when known: a file without ``global``/``nonlocal`` is walked once,
        and a function body only when a question is asked about a place inside it."""
        self.tree = tree
        self.module = Scope("module", "<module>", None)
        declarations = text is None or may_declare(text)
        self._builder = _Builder(self.module, declarations)
        self._builder.visit(tree)
        self._starts: dict[int, tuple[list[tuple[int, int]], bool]] = {}

    def innermost(self, pos: tuple[int, int]) -> Scope:
        scope = self.module
        while True:
            child = self._child_at(scope, pos)
            if child is None:
                return scope
            if child.pending is not None:
                self._builder.build_pending(child)  # its own scopes and bindings, now needed
            scope = child

    def _child_at(self, scope: Scope, pos: tuple[int, int]) -> Scope | None:
        """The first child of ``scope`` that holds ``pos``: a binary search over the children's
        starts (a scan per fix made a file of many functions quadratic)."""
        index = self._starts.get(id(scope))
        if index is None:
            children = scope.children
            starts = [child.start for child in children]
            # Sibling scopes do not overlap in Python; checked, not assumed.
            ordered = all(
                children[i].start <= children[i].end <= children[i + 1].start for i in range(len(children) - 1)
            )
            index = self._starts[id(scope)] = (starts, ordered)
        starts, ordered = index
        if not ordered:
            return next((child for child in scope.children if child.contains(pos)), None)
        i = bisect.bisect_right(starts, pos) - 1
        return scope.children[i] if i >= 0 and scope.children[i].contains(pos) else None

    def resolve(self, name: str, pos: tuple[int, int]) -> Resolution:
        """What ``name`` means at ``pos`` (1-based row, 0-based UTF-8 byte column)."""
        scope: Scope | None = self.innermost(pos)
        first = True
        while scope is not None:
            if scope.kind == "module" or name in scope.globals:
                found = self.module.bindings.get(name, [])
                return Resolution("module" if found else "unbound", tuple(found), "<module>")
            # A class body's names are visible in the class body only, not in its methods.
            if name in scope.bindings and (scope.kind != "class" or first):
                where = "class" if scope.kind == "class" else "local"
                return Resolution(where, tuple(scope.bindings[name]), scope.name)
            first = False
            scope = scope.parent
        return Resolution("unbound")  # pragma: no cover - the module scope always answers


#: Where a ``global``/``nonlocal`` statement can start: a line, or after ``;`` or a header's ``:``.
_DECLARATION = re.compile(r"(?:^|[;:])[ \t]*(?:global|nonlocal)\b", re.M)


def may_declare(text: str) -> bool:
    """The source may hold a ``global`` or ``nonlocal`` statement (a cheap over-approximation:
    the word in a string or after a slice's colon counts too)."""
    return _DECLARATION.search(text) is not None


def own_nodes(nodes: list[ast.AST]) -> list[ast.AST]:
    """Every node under ``nodes`` that belongs to their scope: nested function, lambda and class
    bodies are not entered."""
    out: list[ast.AST] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def byte_column(line: str, column: int) -> int:
    """0-based UTF-8 byte offset (what ``ast`` uses) of 1-based character ``column`` in ``line``."""
    return len(line[: column - 1].encode("utf-8"))
