"""Unified diffs of a file before and after its fixes, in time about linear in the file.

``difflib`` finds the longest matching block and recurses on both sides; a file with changes
on every other line makes that quadratic (10,000 fixes: minutes). When the changes are that
many, the lines that occur once in each text (and keep their order) are matched first, and
``difflib`` only aligns the short stretches between them (the "patience" idea). Files with a
few changes keep exactly ``difflib``'s output.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Iterator

Opcode = tuple[str, int, int, int, int]

#: Above about this many steps (lines times changed lines, ~0.1 s) ``difflib`` alone is too slow.
_DIFFLIB_BUDGET = 1_000_000


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str, n: int = 3) -> Iterator[str]:
    """``difflib.unified_diff(a, b, fromfile, tofile, n=n)``, with the matching above."""
    if len(a) * _new_lines(a, b) > _DIFFLIB_BUDGET:
        matcher: difflib.SequenceMatcher[str] = _Given(_anchored_opcodes(a, b))
    else:
        matcher = difflib.SequenceMatcher(None, a, b)
    started = False
    for group in matcher.get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])


class _Given(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """A matcher whose opcodes are already known (its hunk grouping is ``difflib``'s)."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._given = opcodes

    def get_opcodes(self) -> list[Opcode]:  # type: ignore[override]
        return self._given


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (``difflib``'s rule)."""
    beginning = start + 1
    length = stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1  # an empty range begins just before it
    return f"{beginning},{length}"


def _new_lines(a: list[str], b: list[str]) -> int:
    """How many lines of ``b`` are not in ``a``: about how many places changed."""
    old = set(a)
    return sum(1 for line in b if line not in old)


def _anchored_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """Opcodes from the unique lines of both texts (in order), ``difflib`` between them."""
    in_a = Counter(a)
    in_b = Counter(b)
    where_b = {line: j for j, line in enumerate(b) if in_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if in_a[line] == 1 and line in where_b]
    anchors = _increasing(pairs)
    opcodes: list[Opcode] = []
    i0 = j0 = 0
    for i, j in [*anchors, (len(a), len(b))]:
        gap = difflib.SequenceMatcher(None, a[i0:i], b[j0:j]).get_opcodes()
        for tag, i1, i2, j1, j2 in gap:
            _append(opcodes, (tag, i0 + i1, i0 + i2, j0 + j1, j0 + j2))
        if i < len(a):
            _append(opcodes, ("equal", i, i + 1, j, j + 1))
        i0, j0 = i + 1, j + 1
    return opcodes


def _append(opcodes: list[Opcode], opcode: Opcode) -> None:
    """Adds ``opcode``, merged into the previous one when both are equal runs (as ``difflib``
    never writes two in a row)."""
    if opcode[1] == opcode[2] and opcode[3] == opcode[4]:
        return  # empty
    if opcodes and opcodes[-1][0] == "equal" and opcode[0] == "equal":
        tag, i1, _, j1, _ = opcodes[-1]
        opcodes[-1] = (tag, i1, opcode[2], j1, opcode[4])
    else:
        opcodes.append(opcode)


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by their first item) whose second items increase."""
    tails: list[int] = []  # tails[k]: the smallest last second item of an increasing run of k + 1
    tail_at: list[int] = []  # the index in ``pairs`` of that last item
    previous = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(index)
        else:
            tails[k] = j
            tail_at[k] = index
        previous[index] = tail_at[k - 1] if k else -1
    run: list[tuple[int, int]] = []
    index = tail_at[-1] if tail_at else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]
