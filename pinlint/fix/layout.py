"""Layout of a fix's edits: a call whose new argument overflows the line is exploded, one
argument per line (kept apart from ``edits.py`` so that reporting never imports libcst)."""

from __future__ import annotations

import ast
import io
import tokenize

from pinlint.core.diagnostics import Edit, Location
from pinlint.core.text import line_ending


def explode_long_calls(lines: list[str], tree: ast.Module, edits: list[Edit], line_length: int) -> list[Edit]:
    """When a fix's edits make a line longer than ``line_length``, put the arguments of the
    call they edit one per line, with a magic trailing comma (what ruff's fixes do, and a layout
    ``ruff format``/black keep). Only single-line calls are exploded: they hold no comments."""
    by_row: dict[int, list[Edit]] = {}
    for edit in edits:
        if edit.location.row == edit.end_location.row and "\n" not in edit.content and "\r" not in edit.content:
            by_row.setdefault(edit.location.row, []).append(edit)
    out = list(edits)
    for row, row_edits in by_row.items():
        if row > len(lines):
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        if len(_apply_on_line(body, row_edits)) <= line_length:
            continue
        call = _call_to_split(tree, line, row, row_edits)
        if call is None:
            # A line of a multi-line call: the new argument goes on a line of its own, indented
            # like the arguments before it.
            indent = body[: len(body) - len(body.lstrip())]
            for e in row_edits:
                if e.location == e.end_location and e.content.startswith(", ") and indent.strip() == "" and indent:
                    out[out.index(e)] = Edit(f",{line_ending(line)}{indent}{e.content[2:]}", e.location, e.end_location)
            continue
        open_col, close_col = call  # 0-based character indices of `(` and `)`
        inside = [e for e in row_edits if e.location.column - 1 > open_col and e.end_location.column - 1 <= close_col]
        if not inside:
            continue
        shifted = [
            Edit(
                e.content,
                Location(1, e.location.column - open_col - 1),
                Location(1, e.end_location.column - open_col - 1),
            )
            for e in inside
        ]
        args = _split_arguments(_apply_on_line(body[open_col + 1 : close_col], shifted))
        if not args:
            continue
        indent = body[: len(body) - len(body.lstrip())]
        unit = "\t" if indent.startswith("\t") else "    "
        newline = line_ending(line)
        replacement = newline + "".join(f"{indent}{unit}{a},{newline}" for a in args) + indent
        out = [e for e in out if e not in inside]
        out.append(Edit(replacement, Location(row, open_col + 2), Location(row, close_col + 1)))
    return out


def _apply_on_line(body: str, edits: list[Edit]) -> str:
    out, cursor = [], 0
    for e in sorted(edits, key=lambda e: (e.location.column, e.end_location.column)):
        start, end = e.location.column - 1, e.end_location.column - 1
        out.append(body[cursor:start])
        out.append(e.content)
        cursor = max(cursor, end)
    out.append(body[cursor:])
    return "".join(out)


def _char(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _call_to_split(tree: ast.Module, line: str, row: int, edits: list[Edit]) -> tuple[int, int] | None:
    """``(`` and ``)`` of the outermost single-line call on ``row`` whose arguments hold the first edit."""
    target = min(e.location.column - 1 for e in edits)
    best: tuple[int, int] | None = None
    for node in _one_line_calls(tree, row):
        if node.func.end_lineno != row:
            continue
        func_end = _char(line, node.func.end_col_offset or 0)
        close = _char(line, node.end_col_offset or 0) - 1
        open_col = line.find("(", func_end)
        if open_col < 0 or open_col >= close or line[close] != ")" or line[func_end:open_col].strip():
            continue
        # The outermost call whose arguments hold the edit: the one a formatter splits first
        # (`f(g(x, new=...), y)` splits `f`; `tensor(x, new=...).to(d)` splits `tensor`).
        if open_col < target <= close and (best is None or close - open_col > best[1] - best[0]):
            best = (open_col, close)
    return best


def _one_line_calls(tree: ast.Module, row: int) -> list[ast.Call]:
    """The calls that start and end on ``row``: only the nodes whose lines span it are entered
    (a file with hundreds of fixed rows must not be walked whole for each)."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and node.lineno == row == node.end_lineno:
            found.append(node)
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None or first <= row <= (child.end_lineno or first):  # type: ignore[attr-defined]
                stack.append(child)  # spans the row (or has no position: `arguments`, `withitem`)
    return found


def _split_arguments(inner: str) -> list[str] | None:
    """The top-level, comma-separated arguments of a one-line argument list; None if it does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(inner).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    depth, cuts = 0, []
    for tok in tokens:
        if tok.type == tokenize.OP:
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string == "," and depth == 0 and tok.start[0] == 1:
                cuts.append(tok.start[1])
        elif tok.type == tokenize.COMMENT:
            return None
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(inner[start:cut])
        start = cut + 1
    pieces.append(inner[start:])
    args = [p.strip() for p in pieces if p.strip()]
    return args or None
