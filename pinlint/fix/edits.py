"""Edit builders shared by rules: add or replace a keyword argument of a call, append to a call.

They plan edits with a hole for the pin-memory helper's call (see ``PlannedEdit``), keep the
call's layout (one argument per line gets a new line of the same shape) and decline rather than
guess when the layout is unusual.
"""

from __future__ import annotations

import libcst as cst

from pinlint.analysis.callargs import has_star_kwargs
from pinlint.analysis.positions import Positions
from pinlint.core.diagnostics import Location
from pinlint.core.results import PlannedEdit
from pinlint.core.text import line_ending


def set_keyword_to_helper(call: cst.Call, keyword: str, positions: Positions) -> tuple[PlannedEdit, ...] | None:
    """``keyword=<helper call>`` in ``call``: replace the value of an existing ``keyword=``, or
    add the argument after the last one. None when the call's layout does not allow it."""
    if has_star_kwargs(call):
        return None  # `**kwargs` may already hold the keyword
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            # e.g. pin_memory=False: replace the value only.
            return (PlannedEdit(positions.start(arg.value), positions.end(arg.value), "", helper_call=True),)
    if not call.args:
        return None  # no argument to follow: the layout of the new one is a guess
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
    lines = positions.lines
    line = lines[value_end.row - 1]
    after = line[value_end.column - 1 :]
    indent = lines[value_start.row - 1][: value_start.column - 1]
    rest = after.lstrip(" \t")
    next_line = Location(value_end.row + 1, 1)
    if (
        rest.startswith(",")
        and (not rest[1:].strip() or rest[1:].strip().startswith("#"))
        and not indent.strip()
        and value_end.row < len(lines)
    ):
        # One argument per line with a trailing comma: add a line of the same shape.
        newline = line_ending(line)
        return (PlannedEdit(next_line, next_line, f"{indent}{keyword}=", f",{newline}", helper_call=True),)
    if (
        (not rest.strip() or rest.strip().startswith("#"))
        and not indent.strip()
        and value_end.row < len(lines)
        and lines[value_end.row].lstrip().startswith(")")
    ):
        # One argument per line, no trailing comma, `)` on the next line: add the comma and a
        # line of the same shape (what a formatter's magic trailing comma would give).
        newline = line_ending(line)
        return (
            PlannedEdit(value_end, value_end, ","),
            PlannedEdit(next_line, next_line, f"{indent}{keyword}=", f",{newline}", helper_call=True),
        )
    return (PlannedEdit(value_end, value_end, f", {keyword}=", helper_call=True),)


def replace_argument_by_helper(arg: cst.Arg, keyword: str, positions: Positions) -> PlannedEdit:
    """Replace the whole argument ``arg`` (keyword and value) by ``keyword=<helper call>``."""
    start = positions.start(arg.keyword) if arg.keyword else positions.start(arg.value)
    return PlannedEdit(start, positions.end(arg.value), f"{keyword}=", helper_call=True)


def append_after(node: cst.CSTNode, text: str, positions: Positions) -> PlannedEdit:
    end = positions.end(node)
    return PlannedEdit(end, end, text)


def _past_parens(positions: Positions, end: Location, count: int) -> Location | None:
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
