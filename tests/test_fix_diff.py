"""Diffs and fix selection stay exact while costing about linear time in the file:
``pinlint.fix.diff`` against ``difflib``, ``select_fixes`` against a pairwise check."""

from __future__ import annotations

import difflib
import random

import pytest

from pinlint.core.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from pinlint.fix import diff
from pinlint.fix.apply import select_fixes
from tests.analysis.test_cost import chained_copies


def _ours(a: list[str], b: list[str]) -> list[str]:
    return list(diff.unified_diff(a, b, "a/x.py", "b/x.py"))


def _difflib(a: list[str], b: list[str]) -> list[str]:
    return list(difflib.unified_diff(a, b, "a/x.py", "b/x.py"))


def _edited(rng: random.Random, a: list[str], alphabet: str, edits: int) -> list[str]:
    b = list(a)
    for _ in range(rng.randint(0, edits)):
        op = rng.random()
        if op < 0.4 and b:
            b[rng.randrange(len(b))] = rng.choice(alphabet) + "\n"
        elif op < 0.7:
            b.insert(rng.randint(0, len(b)), rng.choice(alphabet) + "\n")
        elif b:
            del b[rng.randrange(len(b))]
    return b


def _patched(a: list[str], lines: list[str]) -> list[str]:
    """``a`` with a unified diff applied (hunks in order)."""
    out: list[str] = []
    i = 0
    for line in lines[2:]:
        if line.startswith("@@"):
            old = line.split()[1][1:]
            start, _, length = old.partition(",")
            begin = int(start) - (0 if length != "0" else -1) - 1
            out += a[i:begin]
            i = begin
        elif line[0] == " ":
            out.append(line[1:])
            i += 1
        elif line[0] == "-":
            i += 1
        else:
            out.append(line[1:])
    return out + a[i:]


def test_few_changes_are_difflibs_own_diff() -> None:
    rng = random.Random(0)
    for _ in range(500):
        a = [rng.choice("abcdefgh") + "\n" for _ in range(rng.randint(0, 30))]
        b = _edited(rng, a, "abcdxyz", 5)
        assert _ours(a, b) == _difflib(a, b)


def test_anchored_diffs_turn_the_old_text_into_the_new(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff, "_DIFFLIB_BUDGET", -1)  # every diff takes the anchored path
    rng = random.Random(1)
    for _ in range(500):
        a = [rng.choice("abcdefghijklmnopqrstuvw") + "\n" for _ in range(rng.randint(1, 40))]
        b = _edited(rng, a, "abcdxyz0123", 8)
        lines = _ours(a, b)
        assert (_patched(a, lines) if lines else a) == b


def test_a_fix_on_every_other_line_is_anchored_and_reads_as_difflibs() -> None:
    old = chained_copies(3000).splitlines(keepends=True)
    new = [line.replace("])", "], pin_memory=True)") for line in old]
    assert len(old) * diff._new_lines(old, new) > diff._DIFFLIB_BUDGET  # the anchored path
    small_old, small_new = old[:200], new[:200]
    assert _ours(small_old, small_new) == _difflib(small_old, small_new)
    lines = _ours(old, new)
    assert _patched(old, lines) == new
    assert sum(1 for line in lines if line.startswith("@@")) == 1  # one hunk, as difflib would


def _diagnostic(edits: list[tuple[int, int, int, int, str]], row: int) -> Diagnostic:
    fix = Fix(
        Applicability.SAFE,
        "t",
        tuple(Edit(content, Location(r1, c1), Location(r2, c2)) for r1, c1, r2, c2, content in edits),
    )
    return Diagnostic(
        code="PIN001",
        name="n",
        message="m",
        filename="x.py",
        location=Location(row, 1),
        end_location=Location(row, 2),
        noqa_row=row,
        url="",
        fix=fix,
    )


def _pairwise(text: str, diagnostics: list[Diagnostic]) -> list[int]:
    """The rows of the fixes chosen when each span is compared with every chosen span."""
    from pinlint.core.text import LineIndex

    index = LineIndex.of(text)
    taken: list[tuple[int, int, str]] = []
    chosen = []
    for d in sorted(diagnostics, key=lambda d: d.sort_key()):
        assert d.fix is not None
        spans = [(index.offset(e.location), index.offset(e.end_location), e.content) for e in d.fix.edits]
        clash = any(
            (s, e, c) != t and (s < t[1] and t[0] < e or s == e == t[0] == t[1]) for s, e, c in spans for t in taken
        )
        if not clash:
            taken.extend(spans)
            chosen.append(d.location.row)
    return chosen


def test_select_fixes_chooses_what_a_pairwise_check_chooses() -> None:
    rng = random.Random(2)
    text = "".join(f"line {i} with some text\n" for i in range(40))
    for _ in range(300):
        diagnostics = []
        for row in range(1, rng.randint(2, 30)):
            edits = []
            for _ in range(rng.randint(1, 3)):
                r1 = rng.randint(1, 40)
                c1 = rng.randint(1, 12)
                r2, c2 = (r1, c1 + rng.choice((0, 0, 1, 3, 8))) if rng.random() < 0.9 else (r1 + 1, 2)
                edits.append((r1, c1, r2, c2, rng.choice(("x", "y", ", pin_memory=True"))))
            if rng.random() < 0.5:
                edits.append((1, 1, 1, 1, "from m import h\n"))  # the shared import
            diagnostics.append(_diagnostic(edits, row))
        chosen, _, _ = select_fixes(text, diagnostics, unsafe=False)
        assert [d.location.row for d in chosen] == _pairwise(text, diagnostics)
