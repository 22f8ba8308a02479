"""What a rule is: a code, the analysis events it listens to, the trigger text triage looks for,
and ``check``, which turns one event into a finding (message, location, planned fix).

The rule's documentation and examples live in ``<CODE>.toml`` beside its module.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from pinlint.analysis.events import SinkHit
from pinlint.analysis.triage import Trigger
from pinlint.core.results import Finding, FixPlan, RelatedLocation

if TYPE_CHECKING:  # rule modules load without libcst: a warm cached run never imports it
    import libcst as cst

    from pinlint.analysis.interpreter import Interpreter
    from pinlint.analysis.positions import Positions
    from pinlint.analysis.project_summaries import ProjectSummaries
    from pinlint.analysis.summaries import FileSummaries
    from pinlint.core.diagnostics import Location

#: The copy triggers shared by the rules that follow host tensors into non_blocking copies:
#: the keyword, and a literal positional ``True`` (``.to(dev, dtype, True)``, ``.copy_(src, True)``).
NON_BLOCKING_TRIGGERS: tuple[Trigger, ...] = (
    Trigger(b"non_blocking", "non_blocking"),
    # Argument spans bounded: unbounded, every `.to(` on a long line would scan to its end.
    Trigger(b"True", r"\.(?:to|cuda|copy_)\([^\n]{0,2000},[ \t]*True[ \t]*\)"),
)

_API_TEXT = {
    ".to": ".to(..., non_blocking=True)",
    ".cuda": ".cuda(non_blocking=True)",
    ".copy_": ".copy_(..., non_blocking=True)",
}


class RuleContext:
    """What a rule may read about the scope an event came from."""

    def __init__(
        self,
        module: cst.Module,
        positions: Positions,
        interpreter: Interpreter,
        summaries: FileSummaries | None = None,
        project: ProjectSummaries | None = None,
        home: str | None = None,
    ) -> None:
        self.module = module
        self.positions = positions
        self.interpreter = interpreter
        self.summaries = summaries
        #: The other files of the project the analysis read, and the path of the file analysed.
        self.project = project
        self.home = home

    def _all_summaries(self) -> list[FileSummaries]:
        own = [self.summaries] if self.summaries is not None else []
        return own + ([f.summaries for f in self.project.parsed_files()] if self.project is not None else [])

    def interpreter_of(self, node: cst.CSTNode) -> Interpreter:
        """The interpreter of the function where ``node`` (a birth) was evaluated."""
        if id(node) in self.interpreter.statement_of:
            return self.interpreter
        for summaries in self._all_summaries():
            for parsed in summaries.all_parsed():
                for interpreter in parsed.interpreters:
                    if id(node) in interpreter.statement_of:
                        return interpreter
        return self.interpreter

    def copier_of(self, sink: cst.Call, chain: tuple[cst.Call, ...] = ()) -> Interpreter | None:
        """For a copy made in a callee (``SinkHit.via``): the interpreter of the function the call
        runs, which copies the tensor itself or (``chain``) hands it on through those calls."""
        for summaries in self._all_summaries():
            for parsed in summaries.all_parsed():
                for interpreter in parsed.interpreters:
                    events = interpreter.events
                    if any(copy.sink is sink and copy.chain == chain for copy in events.parameter_copies) or (
                        not chain
                        and any(copy.sink is sink for copy in (*events.attribute_copies, *events.computed_copies))
                    ):
                        return interpreter
        return None

    def _callee_name(self, sink: cst.Call, chain: tuple[cst.Call, ...]) -> str:
        import libcst as cst

        copier = self.copier_of(sink, chain)
        if copier is not None and isinstance(copier.scope, cst.FunctionDef):
            return copier.scope.name.value
        return "a callee"

    def file_of(self, node: cst.CSTNode) -> str | None:
        """The path of the file ``node`` is in (None: the analysed file, with no path known)."""
        owner = self.project.owner(node) if self.project is not None else None
        return owner.file.path if owner is not None else self.home

    def _elsewhere(self, node: cst.CSTNode, hit: SinkHit) -> str | None:
        """The path of ``node``'s file when it is not the file of the finding (the birth's)."""
        assert hit.origin.node is not None
        where = self.file_of(node)
        return where if where != self.file_of(hit.origin.node) else None

    def where(self, node: cst.CSTNode, hit: SinkHit) -> str:
        """``line 12``, or ``line 12 of `pkg/serve.py``` when that is another file than the finding's."""
        return f"line {self.positions.start(node).row}{self._of_file(node, hit)}"

    def _of_file(self, node: cst.CSTNode, hit: SinkHit) -> str:
        """`` of `pkg/serve.py``` when ``node`` is in another file than the finding, else ""."""
        import os

        where = self._elsewhere(node, hit)
        if where is None:
            return ""
        root = self.project.modules.root if self.project is not None else None
        shown = os.path.relpath(where, root) if root is not None else where
        return f" of `{shown.replace(os.sep, '/')}`"

    def sink_row(self, hit: SinkHit) -> int:
        """The row of the copy's method name (``.to``), not of the start of its receiver."""
        import libcst as cst

        func = hit.sink.func
        return self.positions.start(func.attr if isinstance(func, cst.Attribute) else hit.sink).row

    def related(self, hit: SinkHit) -> tuple[RelatedLocation, ...]:
        """The copy (and the call that hands the tensor over) as related locations."""
        out = [
            RelatedLocation(
                self.positions.start(hit.sink),
                self.positions.end(hit.sink),
                "the non_blocking copy",
                self._elsewhere(hit.sink, hit),
            )
        ]
        if hit.via is not None:
            out.append(
                RelatedLocation(
                    self.positions.start(hit.via),
                    self.positions.end(hit.via),
                    "the call passing the tensor",
                    self._elsewhere(hit.via, hit),
                )
            )
        for call in hit.chain:
            out.append(
                RelatedLocation(
                    self.positions.start(call),
                    self.positions.end(call),
                    "the call passing it on",
                    self._elsewhere(call, hit),
                )
            )
        return tuple(out)

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def start(self, node: cst.CSTNode) -> Location:
        return self.positions.start(node)

    def statement_rows(self, node: cst.CSTNode) -> tuple[int, int]:
        """Rows where a ``# noqa`` suppresses a finding at ``node``: the statement holding it
        (from its first row to the node's last), as the interpreter recorded it."""
        import libcst as cst

        positions = self.positions
        statement = self.interpreter_of(node).statement_of.get(id(node))
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
        import libcst as cst

        node = hit.origin.node
        assert node is not None  # SinkHits are recorded for born origins only
        sink_row = self.positions.start(hit.sink).row
        if not isinstance(hit.sink_statement, (cst.Module, cst.FunctionDef)):
            sink_rows = self.positions.rows(hit.sink_statement)
        else:
            sink_rows = (sink_row, sink_row)
        finding = self.finding(
            code, node, message, statement_rows=self.statement_rows(node), sink_rows=sink_rows, plan=plan, note=note
        )
        return replace(finding, related=self.related(hit))

    def reaches(self, hit: SinkHit) -> str:
        """``reaches `.to(..., non_blocking=True)` on line 12`` (or "on the same line")."""
        import libcst as cst

        node = hit.origin.node
        assert node is not None
        sink_row = self.sink_row(hit)
        api = _API_TEXT[hit.api]
        if hit.via is not None:
            copier = self.copier_of(hit.sink, hit.chain) if not hit.chain else None
            if copier is not None and id(node) in copier.statement_of and isinstance(copier.scope, cst.FunctionDef):
                # Computed in the callee from what the call passes (`(x * 2).to(dev, non_blocking=True)`).
                return (
                    f"is computed in `{copier.scope.name.value}()` from the tensor passed to it on line "
                    f"{self.positions.start(hit.via).row}{self._of_file(hit.via, hit)}, and reaches `{api}` on "
                    f"line {sink_row}{self._of_file(hit.sink, hit)}"
                )
            handed = [
                f"to `{self._callee_name(hit.sink, hit.chain[i:])}()`, which passes it on line "
                f"{self.positions.start(call).row}{self._of_file(call, hit)}"
                for i, call in enumerate(hit.chain)
            ]
            last = self._callee_name(hit.sink, ())
            return (
                f"is passed on line {self.positions.start(hit.via).row} "
                + "".join(f"{step} " for step in handed)
                + f"to `{last}()`, which copies it with `{api}` on line {sink_row}{self._of_file(hit.sink, hit)}"
            )
        birth = self.interpreter_of(node)
        if birth is not self.interpreter and isinstance(self.interpreter.scope, cst.FunctionDef):
            return (
                f"reaches `{api}` on line {sink_row}{self._of_file(hit.sink, hit)} in "
                f"`{self.interpreter.scope.name.value}()`"
            )
        if self._elsewhere(hit.sink, hit) is not None:
            return f"reaches `{api}` on line {sink_row}{self._of_file(hit.sink, hit)}"
        where = "on the same line" if sink_row == self.positions.start(node).row else f"on line {sink_row}"
        return f"reaches `{api}` {where}"


class Rule:
    """A rule. Subclasses set the class attributes and implement ``check``."""

    code: ClassVar[str]
    #: The event types ``check`` accepts; the interpreter records only these.
    listens_to: ClassVar[frozenset[type]]
    #: Text that marks a line this rule may flag (triage unions the selected rules' triggers).
    triggers: ClassVar[tuple[Trigger, ...]]

    def check(self, event: object, ctx: RuleContext) -> Finding | None:
        raise NotImplementedError
