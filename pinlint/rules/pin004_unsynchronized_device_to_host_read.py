"""PIN004 unsynchronized-device-to-host-read: the destination of a non_blocking device-to-host
copy is read on the host on a path with no synchronisation after the copy. Docs and examples:
``PIN004.toml``; what counts as a synchronisation: ``analysis/d2h.py``.

The unsafe fix inserts the copy's stream synchronisation as a statement of its own just before
the statement holding the first read, when the stream is known and the statement can take one."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinlint.analysis.events import UnsyncedHostRead
from pinlint.core.diagnostics import Applicability, Location
from pinlint.core.results import Finding, FixPlan, PlannedEdit
from pinlint.core.text import line_ending
from pinlint.rules.base import NON_BLOCKING_TRIGGERS, Rule, RuleContext

if TYPE_CHECKING:
    import libcst as cst

_API_TEXT = {".to": '.to("cpu", non_blocking=True)', ".copy_": ".copy_(..., non_blocking=True)"}
#: An unindented import line (a top-level statement of the file).
_TOP_LEVEL_IMPORT = re.compile(r"import[ \t]")


class UnsynchronizedDeviceToHostRead(Rule):
    code = "PIN004"
    listens_to = frozenset({UnsyncedHostRead})
    triggers = NON_BLOCKING_TRIGGERS

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        if not isinstance(event, UnsyncedHostRead):
            return None
        copy_row = ctx.start(event.copy).row
        read_row = ctx.start(event.read).row
        where = "on the same line" if copy_row == read_row else f"on line {copy_row}"
        message = (
            f"`{ctx.source(event.read)}` is read on the host ({event.how}) before the "
            f"`{_API_TEXT[event.api]}` {where} is synchronised: it may still hold stale data"
        )
        tree = _Tree.of(ctx.interpreter.scope, [event.copy, event.read])
        sync = _stream_sync(event, ctx, tree)
        plan: FixPlan | None = None
        note: str | None
        if sync is not None:
            plan, why_not = _plan(event, ctx, tree, sync)
            note = (
                None
                if plan is not None
                else f"no automatic fix ({why_not}): insert `{sync.text}` before this line (or wait on an event recorded after the copy)"
            )
        else:
            note = (
                "no automatic fix: synchronise the copy's stream before this read (the copy runs on a "
                "stream chosen by a `with` block, or an event recorded after the copy)"
            )
        return ctx.finding(
            self.code,
            event.read,
            message,
            statement_rows=_rows(ctx, event.read_statement, event.read),
            sink_rows=_rows(ctx, event.copy_statement, event.copy),
            plan=plan,
            note=note,
        )


def _rows(ctx: RuleContext, statement: cst.CSTNode, node: cst.CSTNode) -> tuple[int, int]:
    import libcst as cst

    if isinstance(statement, (cst.Module, cst.FunctionDef)):
        return ctx.positions.rows(node)
    return ctx.positions.rows(statement)


@dataclass(frozen=True)
class _Sync:
    #: The statement that synchronises the copy's stream.
    text: str
    #: The torch module's name it uses (current stream), or None.
    torch_name: str | None = None
    #: The stream expression (``with torch.cuda.stream(S):``) and that ``with`` statement, or None.
    stream: str | None = None
    with_statement: cst.With | None = None


class _Tree:
    """Parent links from a scope down to a few nodes (one walk, only for a finding)."""

    def __init__(self, parents: dict[int, cst.CSTNode], found: set[int]) -> None:
        self.parents = parents
        self.found = found

    @classmethod
    def of(cls, scope: cst.CSTNode, targets: list[cst.CSTNode]) -> _Tree:
        from pinlint.analysis.cst_walk import children  # libcst: not imported on a warm run

        wanted = {id(t) for t in targets}
        parents: dict[int, cst.CSTNode] = {}
        found: set[int] = set()
        stack = [scope]
        while stack and found != wanted:
            node = stack.pop()
            if id(node) in wanted:
                found.add(id(node))
            for child in children(node):
                parents[id(child)] = node
                stack.append(child)
        return cls(parents, found)

    def path(self, node: cst.CSTNode) -> list[cst.CSTNode] | None:
        """The nodes from the scope (first) down to ``node`` (last); None when not under it."""
        if id(node) not in self.found:
            return None
        out = [node]
        while id(out[-1]) in self.parents:
            out.append(self.parents[id(out[-1])])
        return out[::-1]


def _call_withs(path: list[cst.CSTNode]) -> list[tuple[cst.With, cst.BaseExpression]]:
    """The ``with`` statements around the end of ``path`` (outermost first) whose item is a call
    (a stream context is one; other context managers may switch streams too), with that item."""
    import libcst as cst

    out: list[tuple[cst.With, cst.BaseExpression]] = []
    for node in path[1:-1]:
        if isinstance(node, cst.With):
            out.extend((node, item.item) for item in node.items if isinstance(item.item, cst.Call))
    return out


def _stream_sync(event: UnsyncedHostRead, ctx: RuleContext, tree: _Tree) -> _Sync | None:
    """What synchronises the copy's stream, when the stream is known: the current stream when
    neither the copy nor the read sits in a ``with <call>:`` block of this function, or
    ``S.synchronize()`` when both sit in the same ``with torch.cuda.stream(S):``."""
    import libcst as cst

    from pinlint.analysis.scopes import dotted

    copy_path, read_path = tree.path(event.copy), tree.path(event.read)
    if copy_path is None or read_path is None:
        return None  # not found under the scope (cannot happen): no advice we can stand by
    copy_withs, read_withs = _call_withs(copy_path), _call_withs(read_path)
    names = ctx.interpreter.names
    if not copy_withs and not read_withs:
        # A name the file imports at its top is bound at the read; `torch` itself reads best.
        top = _top_level_torch_names(ctx.positions.lines, ctx.start(event.read).row)
        ranked = sorted(names.torch_modules, key=lambda n: (n not in top, n != "torch", n))
        torch_name = ranked[0] if ranked else "torch"
        return _Sync(f"{torch_name}.cuda.current_stream().synchronize()", torch_name=torch_name)
    if copy_withs and read_withs and copy_withs[-1][1] is read_withs[-1][1]:
        statement, item = copy_withs[-1]
        assert isinstance(item, cst.Call)  # _call_withs keeps calls only
        func = dotted(item.func)
        args = [a.value for a in item.args if a.keyword is None]
        stream = dotted(args[0]) if len(args) == 1 and len(item.args) == 1 else None
        if func is not None and stream is not None:
            root, _, rest = func.partition(".")
            if root in names.torch_modules and rest == "cuda.stream":
                return _Sync(f"{stream}.synchronize()", stream=stream, with_statement=statement)
    return None  # a stream chosen elsewhere, or different blocks: the stream is not known


# ---------------------------------------------------------------------------- the fix
def _plan(event: UnsyncedHostRead, ctx: RuleContext, tree: _Tree, sync: _Sync) -> tuple[FixPlan | None, str]:
    """Insert ``sync.text`` as a statement just before the statement holding the read, or why not.

    Sound when the copy is not inside that statement: every path from the copy to the read then
    enters the statement at its start, right after the inserted line."""
    import libcst as cst

    copy_path, read_path = tree.path(event.copy), tree.path(event.read)
    assert copy_path is not None and read_path is not None  # _stream_sync found both
    index = _statement_index(read_path)
    if index is None:
        return None, "the read is not in a block of statements"  # `def f(): return cpu.tolist()`
    statement = read_path[index]
    if any(node is statement for node in copy_path):
        # `x.to("cpu", non_blocking=True).tolist()`, or a `while` test read after a copy in its
        # body: no line lies between the copy and the read.
        return None, "the copy and the read are in one statement"
    for node in read_path[index + 1 :]:
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            # A lambda or generator runs later (a comprehension has a scope of its own): the
            # line before the statement is not provably just before the read.
            return None, "the read is inside a lambda or a comprehension"
    anchor: cst.CSTNode = statement
    decorators = getattr(statement, "decorators", ())
    if decorators:
        # A decorated definition starts at its first `@` (the line must not split it from its
        # decorators; decorators are not walked today, so no read is found there yet).
        anchor = decorators[0]
    start = ctx.start(anchor)
    lines = ctx.positions.lines
    if not 0 < start.row <= len(lines):
        return None, "the statement's line is not in the file"  # cannot happen: no edit we can place
    line = lines[start.row - 1]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if len(indent) != start.column - 1:
        return None, "the statement does not start its line"  # `a = 1; b = cpu.tolist()` is one line: cannot happen
    why_not = _names_bound(sync, ctx, start.row)
    if why_not is not None:
        return None, why_not
    edit = PlannedEdit(Location(start.row, 1), Location(start.row, 1), f"{indent}{sync.text}{line_ending(line)}")
    if sync.stream is not None:
        reason = f"the host waits here for all work queued on `{sync.stream}`, not only for the copy"
    else:
        reason = (
            "the host waits here for all work queued on the current stream, not only for the copy; "
            "it assumes the copy ran on the current device"
        )
    return FixPlan((edit,), None, Applicability.UNSAFE, reason, f"Insert `{sync.text}` before the read"), ""


def _statement_index(path: list[cst.CSTNode]) -> int | None:
    """Index in ``path`` of the innermost statement that sits in a block (a function's indented
    body, a compound statement's block, the module): where a new statement can go before it."""
    import libcst as cst

    found = None
    for i in range(1, len(path)):
        parent = path[i - 1]
        if isinstance(parent, (cst.IndentedBlock, cst.Module)) and isinstance(path[i], cst.BaseStatement):
            found = i
    return found


def _names_bound(sync: _Sync, ctx: RuleContext, row: int) -> str | None:
    """None when every name the inserted line uses means, at ``row``, what the analysis says;
    otherwise why not. Nothing is imported: the line only uses what the file already binds."""
    from pinlint.analysis.scopes import BoundNames, dotted, statements_in

    if sync.torch_name is not None:
        name = sync.torch_name
        if name not in ctx.interpreter.names.torch_modules:
            return "`torch` is not imported in this file"
        if name not in _top_level_torch_names(ctx.positions.lines, row):
            # Bound by a local import only (which may come after this line), or rebound at module
            # level: not provably the torch module here.
            return f"`{name}` is not imported at the top of the file, before this line"
        if name in ctx.interpreter.names.file.module_level_bindings:
            return f"`{name}` is rebound at module level"
        return None
    assert sync.stream is not None and sync.with_statement is not None
    # The `with` block set S as the current stream; S must name the same object at the line.
    body = sync.with_statement.body
    bound = BoundNames()
    bound.statements(statements_in(body))
    root = sync.stream.split(".", 1)[0]
    if root in bound.names:
        return f"`{root}` is rebound inside the `with` block"
    if "." in sync.stream:
        for node in _assign_targets(body):
            if dotted(node) == sync.stream:
                return f"`{sync.stream}` is assigned inside the `with` block"
    return None


def _assign_targets(suite: cst.BaseSuite) -> list[cst.BaseExpression]:
    import libcst as cst

    from pinlint.analysis.scopes import flatten_targets, iter_statements, statements_in

    out: list[cst.BaseExpression] = []
    for statement in iter_statements(statements_in(suite)):
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
        for small in smalls:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    out.extend(flatten_targets(target.target))
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                out.append(small.target)
    return out


def _top_level_torch_names(lines: list[str], before_row: int) -> set[str]:
    """Names bound to the torch module by an unindented ``import`` line above ``before_row``."""
    names: set[str] = set()
    for line in lines[: before_row - 1]:
        if not _TOP_LEVEL_IMPORT.match(line):
            continue
        try:
            tree = ast.parse(line.strip())
        except SyntaxError:
            continue  # `import (` spanning lines, or not code: not counted (precision first)
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "torch" or (alias.asname is None and alias.name.startswith("torch.")):
                        names.add(alias.asname or "torch")
    return names
