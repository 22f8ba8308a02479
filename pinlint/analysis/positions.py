"""Source positions of libcst nodes, computed in one lean code-generation pass.

libcst's ``PositionProvider`` builds a ``CodeRange`` for every node and splits every token on
newlines; on the functions pinlint analyses that costs ~5x the code generation itself. Here the
pass only adds token lengths to a running character offset and stores ``(start, end)`` offsets;
rows and columns are computed afterwards for the few nodes a finding needs. The semantics are
``PositionProvider``'s (syntactic positions: whitespace the node owns is excluded where libcst
records it so). It relies on libcst's code-generation hooks (``CodegenState``); should they ever
change shape, ``Positions`` falls back to ``PositionProvider``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import MetadataWrapper, PositionProvider

from pinlint.analysis.triage import Segment
from pinlint.core.diagnostics import Location
from pinlint.core.text import LineIndex


@dataclass
class _OffsetState(CodegenState):
    offset: int = 0
    last_token: str = ""
    starts: list[int] = field(default_factory=list)
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)
        self.last_token = value

    def pop_trailing_newline(self) -> None:
        self.offset -= len(self.last_token)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        self.spans.setdefault(id(node), (start, self.offset))

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> "_Recorder":
        return _Recorder(self, node, start_node, end_node)


class _Recorder:
    """A plain context manager (a generator-based one costs more than the work it wraps)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self, state: _OffsetState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc: object) -> None:
        spans = self.state.spans
        start = spans[id(self.start_node)][0] if self.start_node is not None else self.start
        end = spans[id(self.end_node)][1] if self.end_node is not None else self.state.offset
        spans[id(self.node)] = (start, end)


class NodeSpans:
    """1-based line and 0-based column of node starts and ends, like ``CodeRange``."""

    def __init__(self, module: cst.Module, source: str) -> None:
        self._lines = LineIndex.of(source)
        state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
        module._codegen(state)
        self._spans = state.spans

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._lines.line_column(self._spans[id(node)][0])

    def end(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._lines.line_column(self._spans[id(node)][1])


class Positions:
    """Maps nodes of a (dedented) segment back to 1-based rows and columns of the file."""

    def __init__(self, module: cst.Module, segment: Segment, lines: list[str], source: str) -> None:
        try:
            spans = NodeSpans(module, source)
            self._start, self._end = spans.start, spans.end
        except Exception:  # noqa: BLE001 - libcst's codegen hooks changed: use its public provider
            ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
            self._start = lambda node: (ranges[node].start.line, ranges[node].start.column)
            self._end = lambda node: (ranges[node].end.line, ranges[node].end.column)
        self._row_offset = 0 if segment.whole_file else segment.start
        self._col_offset = len(segment.indent)
        self.lines = lines

    def start(self, node: cst.CSTNode) -> Location:
        return self._location(*self._start(node))

    def holds(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is part of this segment's tree."""
        try:
            self._start(node)
        except KeyError:
            return False
        return True

    def end(self, node: cst.CSTNode) -> Location:
        return self._location(*self._end(node))

    def rows(self, node: cst.CSTNode) -> tuple[int, int]:
        return (self._start(node)[0] + self._row_offset, self._end(node)[0] + self._row_offset)

    def snippet(self, row: int) -> str:
        return self.lines[row - 1].strip() if 0 < row <= len(self.lines) else ""

    def _location(self, line: int, column: int) -> Location:
        row = line + self._row_offset
        offset = self._col_offset if self._col_offset and self._dedented(row) else 0
        return Location(row, column + offset + 1)

    def _dedented(self, row: int) -> bool:
        text = self.lines[row - 1] if 0 < row <= len(self.lines) else ""
        return bool(text.strip()) and not text.lstrip().startswith("#")


class CompositePositions:
    """Positions of nodes from several parsed segments of one file (a finding whose tensor is
    born in one function and copied in another)."""

    def __init__(self, primary: Positions, others) -> None:  # type: ignore[no-untyped-def]
        self.primary = primary
        self._others = others  # a callable returning the other segments' Positions
        self.lines = primary.lines

    def _find(self, node: cst.CSTNode) -> Positions:
        try:
            self.primary.start(node)
            return self.primary
        except KeyError:
            for positions in self._others():
                try:
                    positions.start(node)
                    return positions
                except KeyError:
                    continue
        raise KeyError(node)

    def start(self, node: cst.CSTNode) -> Location:
        return self._find(node).start(node)

    def end(self, node: cst.CSTNode) -> Location:
        return self._find(node).end(node)

    def rows(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._find(node).rows(node)

    def snippet(self, row: int) -> str:
        return self.primary.snippet(row)
