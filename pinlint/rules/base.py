"""What a rule is: a code, the analysis events it listens to, the trigger text triage looks for,
and ``check``, which turns one event into a finding (message, location, planned fix).

The rule's documentation and examples live in ``<CODE>.toml`` beside its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pinlint.analysis.events import SinkHit
from pinlint.analysis.triage import Trigger
from pinlint.core.results import Finding, FixPlan

if TYPE_CHECKING:  # rule modules load without libcst: a warm cached run never imports it
    import libcst as cst

    from pinlint.analysis.interpreter import Interpreter
    from pinlint.analysis.positions import Positions
    from pinlint.core.diagnostics import Location

#: The copy triggers shared by the rules that follow host tensors into non_blocking copies:
#: the keyword, and a literal positional ``True`` (``.to(dev, dtype, True)``, ``.copy_(src, True)``).
NON_BLOCKING_TRIGGERS: tuple[Trigger, ...] = (
    Trigger(b"non_blocking", "non_blocking"),
    Trigger(b"True", r"\.(?:to|cuda|copy_)\([^\n]*,[ \t]*True[ \t]*\)"),
)

_API_TEXT = {
    ".to": ".to(..., non_blocking=True)",
    ".cuda": ".cuda(non_blocking=True)",
    ".copy_": ".copy_(..., non_blocking=True)",
}


class RuleContext:
    """What a rule may read about the scope an event came from."""

    def __init__(self, module: cst.Module, positions: Positions, interpreter: Interpreter) -> None:
        self.module = module
        self.positions = positions
        self.interpreter = interpreter

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def start(self, node: cst.CSTNode) -> Location:
        return self.positions.start(node)

    def statement_rows(self, node: cst.CSTNode) -> tuple[int, int]:
        """Rows where a ``# noqa`` suppresses a finding at ``node``: the statement holding it
        (from its first row to the node's last), as the interpreter recorded it."""
        import libcst as cst

        positions = self.positions
        statement = self.interpreter.statement_of.get(id(node))
        if statement is None or isinstance(statement, (cst.Module, cst.FunctionDef)):
            return positions.rows(node)
        first, last = positions.rows(statement)
        node_first, node_last = positions.rows(node)
        return (min(first, node_first), max(last, node_last))

    def finding(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        *,
        statement_rows: tuple[int, int],
        sink_rows: tuple[int, int],
        plan: FixPlan | None = None,
        note: str | None = None,
    ) -> Finding:
        start = self.positions.start(node)
        return Finding(
            code=code,
            message=message,
            location=start,
            end_location=self.positions.end(node),
            statement_rows=statement_rows,
            sink_rows=sink_rows,
            snippet=self.positions.snippet(start.row),
            noqa_codes=frozenset(),
            fix_plan=plan,
            fix_note=note,
        )

    def copy_finding(
        self,
        code: str,
        hit: SinkHit,
        message: str,
        *,
        plan: FixPlan | None = None,
        note: str | None = None,
    ) -> Finding:
        """A finding at the construction of a host tensor that reaches a copy."""
        node = hit.origin.node
        assert node is not None  # SinkHits are recorded for born origins only
        sink_row = self.positions.start(hit.sink).row
        if hit.sink_statement is not self.interpreter.scope:
            sink_rows = self.positions.rows(hit.sink_statement)
        else:
            sink_rows = (sink_row, sink_row)
        return self.finding(
            code, node, message, statement_rows=self.statement_rows(node), sink_rows=sink_rows, plan=plan, note=note
        )

    def reaches(self, hit: SinkHit) -> str:
        """``reaches `.to(..., non_blocking=True)` on line 12`` (or "on the same line")."""
        node = hit.origin.node
        assert node is not None
        sink_row = self.positions.start(hit.sink).row
        where = "on the same line" if sink_row == self.positions.start(node).row else f"on line {sink_row}"
        return f"reaches `{_API_TEXT[hit.api]}` {where}"


class Rule:
    """A rule. Subclasses set the class attributes and implement ``check``."""

    code: ClassVar[str]
    #: The event types ``check`` accepts; the interpreter records only these.
    listens_to: ClassVar[frozenset[type]]
    #: Text that marks a line this rule may flag (triage unions the selected rules' triggers).
    triggers: ClassVar[tuple[Trigger, ...]]

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        raise NotImplementedError
