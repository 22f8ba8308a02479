"""Turn the flow's hits into findings with positions, messages and planned fixes (libcst side)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Edit, Location
from ..triage import Segment
from .analyzer import HELPER_CALL, Finding, FixPlan
from .flow import DeviceConstruction, FunctionFlow, SinkHit, dotted, iter_statements
from .names import FileNames
from .positions import NodeSpans

PIN002_REMEDY = (
    "no automatic fix: this value cannot take `pin_memory=` where it is made; copy it into a "
    "pinned staging buffer that you allocate once with `pin_memory=True` and reuse "
    "(`staging[:n].copy_(src)`), or pin the data where it is first built"
)


def parse(source: str, report_errors: bool = False) -> cst.Module | tuple[int, int, str] | None:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        if report_errors:
            return (exc.raw_line, exc.raw_column + 1, exc.message)
        return None
    except (RecursionError, MemoryError) as exc:  # pathological nesting: report, never crash
        if report_errors:
            return (1, 1, f"too deeply nested to parse ({type(exc).__name__})")
        return None


class _Positions:
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

    def end(self, node: cst.CSTNode) -> Location:
        return self._location(*self._end(node))

    def rows(self, node: cst.CSTNode) -> tuple[int, int]:
        return (self._start(node)[0] + self._row_offset, self._end(node)[0] + self._row_offset)

    def _location(self, line: int, column: int) -> Location:
        row = line + self._row_offset
        offset = self._col_offset if self._col_offset and self._dedented(row) else 0
        return Location(row, column + offset + 1)

    def _dedented(self, row: int) -> bool:
        text = self.lines[row - 1] if 0 < row <= len(self.lines) else ""
        return bool(text.strip()) and not text.lstrip().startswith("#")


def findings_for_module(
    module: cst.Module, segment: Segment, names: FileNames, lines: list[str], device_rule: bool, source: str
) -> list[Finding]:
    functions = [s for s in iter_statements(list(module.body), into_functions=True) if isinstance(s, cst.FunctionDef)]
    flows = []
    for scope in [module, *functions]:
        flow = FunctionFlow(names, scope, device_rule)
        flow.run()
        if flow.hits or flow.constructions:
            flows.append(flow)
    if not flows:
        return []
    positions = _Positions(module, segment, lines, source)  # only paid for when something was found
    findings: list[Finding] = []
    for flow in flows:
        seen: set[int] = set()
        for hit in flow.hits:
            if id(hit.origin.node) in seen:
                continue  # one finding per construction: the first copy it reaches
            seen.add(id(hit.origin.node))
            findings.append(_sink_finding(hit, flow, module, positions))
        for construction in flow.constructions:
            findings.append(_device_finding(construction, module, positions))
    return findings


def _snippet(positions: _Positions, row: int) -> str:
    return positions.lines[row - 1].strip() if 0 < row <= len(positions.lines) else ""


def _api_text(hit: SinkHit) -> str:
    return {".to": ".to(..., non_blocking=True)", ".cuda": ".cuda(non_blocking=True)", ".copy_": ".copy_(..., non_blocking=True)"}[hit.api]


def _sink_finding(hit: SinkHit, flow: FunctionFlow, module: cst.Module, positions: _Positions) -> Finding:
    origin = hit.origin
    node = origin.node
    assert node is not None
    start, end = positions.start(node), positions.end(node)
    sink_row = positions.start(hit.sink).row
    statement_rows = _statement_rows(node, flow, positions)
    sink_rows = positions.rows(hit.sink_statement) if hit.sink_statement is not flow.scope else (sink_row, sink_row)
    where = "on the same line" if sink_row == start.row else f"on line {sink_row}"
    if origin.pinnable:
        message = (
            f"`{origin.what}` allocates in pageable memory and reaches `{_api_text(hit)}` {where}: "
            "the copy is not asynchronous; allocate it with `pin_memory=`"
        )
        plan, note = _plan_pin001(hit, flow, module, positions)
        code = "PIN001"
    else:
        message = (
            f"{_article(origin.what)} is pageable host memory and reaches `{_api_text(hit)}` {where}: "
            "the copy is not asynchronous and it cannot be pinned where it is made"
        )
        plan, note = None, PIN002_REMEDY
        code = "PIN002"
    return Finding(
        code=code,
        message=message,
        location=start,
        end_location=end,
        statement_rows=statement_rows,
        sink_rows=sink_rows,
        snippet=_snippet(positions, start.row),
        noqa_codes=frozenset(),
        fix_plan=plan,
        fix_note=note,
    )


def _article(what: str) -> str:
    if what.startswith(("torch.", ".")):
        return f"`{what}`"
    return what[0].upper() + what[1:] if what else "This value"


def _statement_rows(node: cst.CSTNode, flow: FunctionFlow, positions: _Positions) -> tuple[int, int]:
    """Rows where a ``# noqa`` suppresses the finding: the statement holding the construction
    (from its first row to the construction's last), as the flow recorded it."""
    statement = flow.statement_of.get(id(node))
    if statement is None or isinstance(statement, (cst.Module, cst.FunctionDef)):
        return positions.rows(node)
    first = positions.rows(statement)[0]
    return (min(first, positions.rows(node)[0]), max(positions.rows(statement)[1], positions.rows(node)[1]))


def _device_text(module: cst.Module, node: cst.BaseExpression) -> tuple[str, bool]:
    """Source text of a device expression and whether evaluating it has no side effects."""
    text = module.code_for_node(node).strip()
    pure = dotted(node) is not None or isinstance(node, (cst.SimpleString, cst.Integer))
    return text, pure


def _available_at(
    device: cst.BaseExpression | None, construction_row: int, flow: FunctionFlow, positions: _Positions
) -> str | None:
    """None when every name in ``device`` already holds its final value at the construction row;
    else the name that is (re)assigned later."""
    if device is None:
        return None
    chain = dotted(device)
    keys: list[str] = []
    if chain is not None:
        parts = chain.split(".")
        keys = [".".join(parts[: i + 1]) for i in range(len(parts))]
    else:
        for name_node in _names_in(device):
            keys.append(name_node)
    for key in keys:
        for statement in flow.bindings.get(key, []):
            try:
                row = positions.rows(statement)[0]
            except KeyError:
                return key
            if row >= construction_row:
                return key
    return None


def _names_in(node: cst.CSTNode) -> list[str]:
    out: list[str] = []

    class _Collect(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.append(n.value)

    node.visit(_Collect())
    return out


def _plan_pin001(
    hit: SinkHit, flow: FunctionFlow, module: cst.Module, positions: _Positions
) -> tuple[FixPlan | None, str | None]:
    call = hit.origin.node
    if not isinstance(call, cst.Call):
        return None, "no automatic fix for this construction"
    unsafe: list[str] = []
    if hit.copy_dst is not None:
        dst_text, pure = _device_text(module, hit.copy_dst)
        if not pure:
            dst_text = f"({dst_text})"
            unsafe.append("the copy's destination is an expression that would be evaluated again")
        device_text: str | None = f"{dst_text}.device"
        device_node: cst.BaseExpression | None = hit.copy_dst
    elif hit.device is not None:
        device_text, pure = _device_text(module, hit.device)
        device_node = hit.device
        if not pure:
            unsafe.append("the device expression would be evaluated twice and may have side effects")
    else:
        device_text, device_node = None, None  # `.cuda()`: the current CUDA device
    if device_text is not None and "\n" in device_text:
        return None, "no automatic fix: the device expression spans several lines"
    construction_row = positions.start(call).row
    if not hit.chained:
        late = _available_at(device_node, construction_row, flow, positions)
        if late is not None:
            return None, (
                f"no automatic fix: `{late}` is assigned after the construction, so the device is not "
                "known where the tensor is allocated"
            )
    if hit.origin.what == "torch.tensor(...)" and not hit.origin.data_is_python:
        unsafe.append(
            "the data may be a numpy array or a tensor, for which `torch.tensor(..., pin_memory=True)` raises"
        )
    edits = _pin_memory_edits(call, module, positions)
    if edits is None:
        return None, "no automatic fix: the call passes `**kwargs`, which may already hold `pin_memory`"
    return (
        FixPlan(
            edits=edits,
            device_text=device_text,
            applicability="unsafe" if unsafe else "safe",
            unsafe_reason="; ".join(unsafe),
            title="Allocate in pinned memory",
        ),
        None,
    )


def _pin_memory_edits(call: cst.Call, module: cst.Module, positions: _Positions) -> tuple[Edit, ...] | None:
    if any(arg.star == "**" for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "pin_memory":
            # pin_memory=False: replace the value only.
            return (Edit(HELPER_CALL, positions.start(arg.value), positions.end(arg.value)),)
    if not call.args:
        return None
    last = call.args[-1]
    value_end = _past_parens(positions, positions.end(last.value), len(last.value.rpar))
    if value_end is None:
        return None
    value_start = positions.start(last.value)
    if last.keyword is not None:
        value_start = positions.start(last.keyword)
    elif last.star:
        value_start = positions.start(last)
    elif last.value.lpar:
        value_start = Location(value_start.row, max(1, value_start.column - len(last.value.lpar)))
    line = positions.lines[value_end.row - 1]
    after = line[value_end.column - 1 :]
    start_line = positions.lines[value_start.row - 1]
    indent = start_line[: value_start.column - 1]
    rest = after.lstrip(" \t")
    if (
        rest.startswith(",")
        and (not rest[1:].strip() or rest[1:].strip().startswith("#"))
        and not indent.strip()
        and value_end.row < len(positions.lines)
    ):
        # One argument per line with a trailing comma: add a line of the same shape.
        newline = _line_ending(line)
        return (Edit(f"{indent}pin_memory={HELPER_CALL},{newline}", Location(value_end.row + 1, 1), Location(value_end.row + 1, 1)),)
    if (
        (not rest.strip() or rest.strip().startswith("#"))
        and not indent.strip()
        and value_end.row < len(positions.lines)
        and positions.lines[value_end.row].lstrip().startswith(")")
    ):
        # One argument per line, no trailing comma, `)` on the next line: add the comma and a
        # line of the same shape (what a formatter's magic trailing comma would give).
        newline = _line_ending(line)
        return (
            Edit(",", value_end, value_end),
            Edit(f"{indent}pin_memory={HELPER_CALL},{newline}", Location(value_end.row + 1, 1), Location(value_end.row + 1, 1)),
        )
    return (Edit(f", pin_memory={HELPER_CALL}", value_end, value_end),)


def _past_parens(positions: _Positions, end: Location, count: int) -> Location | None:
    """Positions exclude a node's own parentheses: step past ``count`` closing ones."""
    if not count:
        return end
    line = positions.lines[end.row - 1]
    column = end.column - 1
    for _ in range(count):
        while column < len(line) and line[column] in " \t":
            column += 1
        if column >= len(line) or line[column] != ")":
            return None  # the closing parenthesis is on another line: decline rather than guess
        column += 1
    return Location(end.row, column + 1)


def _line_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\r"):
        return "\r"
    return "\n"


def _device_finding(construction: DeviceConstruction, module: cst.Module, positions: _Positions) -> Finding:
    call = construction.call
    start, end = positions.start(call), positions.end(call)
    device_value = construction.device_arg.value
    device_text, _pure = _device_text(module, device_value)
    message = (
        f"`torch.{construction.factory}(<python data>, device=...)` copies from pageable memory and blocks the "
        "host until the stream catches up; build it pinned on the host and copy it with `non_blocking=True`"
    )
    plan: FixPlan | None = None
    note: str | None = None
    if construction.factory == "tensor" and "\n" not in device_text and not any(a.star == "**" for a in call.args):
        arg = construction.device_arg
        edits = (
            Edit(f"pin_memory={HELPER_CALL}", positions.start(arg.keyword) if arg.keyword else positions.start(arg.value), positions.end(arg.value)),
            Edit(f".to({device_text}, non_blocking=True)", end, end),
        )
        plan = FixPlan(
            edits=edits,
            device_text=device_text,
            applicability="unsafe",
            unsafe_reason=(
                "the result is now filled asynchronously: code that hands the host data to another stream or "
                "mutates the Python data source is unaffected, but behaviour on devices without pinned memory "
                "depends on the helper"
            ),
            title="Build pinned on the host, then copy with non_blocking=True",
        )
    else:
        note = "no automatic fix: use `torch.tensor(..., pin_memory=<helper>(device)).to(device, non_blocking=True)`"
    rows = positions.rows(construction.statement) if not isinstance(construction.statement, cst.Module) else (start.row, end.row)
    return Finding(
        code="PIN003",
        message=message,
        location=start,
        end_location=end,
        statement_rows=rows,
        sink_rows=(start.row, end.row),
        snippet=_snippet(positions, start.row),
        noqa_codes=frozenset(),
        fix_plan=plan,
        fix_note=note,
    )
