"""PIN004 unsynchronized-device-to-host-read: the destination of a non_blocking device-to-host
copy is read on the host on a path with no synchronisation after the copy. Docs and examples:
``PIN004.toml``; what counts as a synchronisation: ``analysis/d2h.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pinlint.analysis.events import UnsyncedHostRead
from pinlint.core.results import Finding
from pinlint.rules.base import NON_BLOCKING_TRIGGERS, Rule, RuleContext

if TYPE_CHECKING:
    import libcst as cst

_API_TEXT = {".to": '.to("cpu", non_blocking=True)', ".copy_": ".copy_(..., non_blocking=True)"}


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
        sync = _stream_sync(event, ctx)
        if sync is not None:
            note = f"no automatic fix: insert `{sync}` before this line (or wait on an event recorded after the copy)"
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
            note=note,
        )


def _rows(ctx: RuleContext, statement: cst.CSTNode, node: cst.CSTNode) -> tuple[int, int]:
    import libcst as cst

    if isinstance(statement, (cst.Module, cst.FunctionDef)):
        return ctx.positions.rows(node)
    return ctx.positions.rows(statement)


def _stream_sync(event: UnsyncedHostRead, ctx: RuleContext) -> str | None:
    """The line that synchronises the copy's stream, when the stream is known: the current stream
    when neither the copy nor the read sits in a ``with <stream context>:`` block of this function,
    or ``S.synchronize()`` when both sit in the same ``with torch.cuda.stream(S):``."""
    import libcst as cst

    from pinlint.analysis.scopes import dotted

    scope = ctx.interpreter.scope
    withs_of = _enclosing_withs(scope, [event.copy, event.read])
    copy_withs, read_withs = withs_of.get(id(event.copy)), withs_of.get(id(event.read))
    if copy_withs is None or read_withs is None:
        return None  # not found under the scope (cannot happen): no advice we can stand by
    torch_alias = next(iter(sorted(ctx.interpreter.names.torch_modules)), "torch")
    if not copy_withs and not read_withs:
        return f"{torch_alias}.cuda.current_stream().synchronize()"
    if copy_withs and copy_withs[-1] is (read_withs[-1] if read_withs else None):
        item = copy_withs[-1]
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "stream":
            args = [a.value for a in item.args if a.keyword is None]
            stream = dotted(args[0]) if args else None
            if stream is not None:
                return f"{stream}.synchronize()"
    return None  # a stream chosen elsewhere, or different blocks: the stream is not known


def _enclosing_withs(scope: cst.CSTNode, targets: list[cst.CSTNode]) -> dict[int, list[cst.BaseExpression]]:
    """id(target) -> the items of the ``with`` statements around it (outermost first) whose item
    is a call (a stream context is one; other context managers may switch streams too)."""
    import libcst as cst

    wanted = {id(t) for t in targets}
    found: dict[int, list[cst.BaseExpression]] = {}
    stack: list[tuple[cst.CSTNode, list[cst.BaseExpression]]] = [(scope, [])]
    while stack and len(found) < len(wanted):
        node, withs = stack.pop()
        if id(node) in wanted:
            found[id(node)] = withs
        inner = withs
        if isinstance(node, cst.With) and node is not scope:
            inner = withs + [item.item for item in node.items]
        for child in node.children:
            stack.append((child, inner))
    return found
