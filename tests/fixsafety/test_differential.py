"""Issue 12: every safe fix keeps behaviour (helper answering False and True) and adds no race.

Runs the whole harness once (about 20 s on 2 cores). ``python -m tests.fixsafety.run`` prints the
table; ``--filter KIND`` narrows it.
"""

from __future__ import annotations

import pytest

from tests.fixsafety import harness
from tests.fixsafety.program import KINDS, NOT_SAFE, SAFE


@pytest.fixture(scope="module")
def outcomes() -> list[harness.Outcome]:
    return harness.run()


def _ids(outcomes: list[harness.Outcome], pred: object) -> list[str]:
    return [f"{o.program.id}: {'; '.join(o.problems)[:300]}" for o in outcomes if pred(o)]  # type: ignore[operator]


def test_the_programs_cover_every_kind(outcomes: list[harness.Outcome]) -> None:
    assert len(outcomes) >= 200
    for kind in KINDS:
        assert sum(1 for o in outcomes if o.program.kind == kind) >= 5, kind


def test_the_programs_run_before_any_fix(outcomes: list[harness.Outcome]) -> None:
    # A program that fails or races on its own would make every comparison meaningless.
    assert [(o.program.id, o.bad_program) for o in outcomes if o.bad_program] == []


def test_pinlint_runs_without_error(outcomes: list[harness.Outcome]) -> None:
    assert [(o.program.id, o.pinlint_error) for o in outcomes if o.pinlint_error] == []


def test_race_programs_race_exactly_when_expected_once_pinned(
    outcomes: list[harness.Outcome],
) -> None:
    # The race model checked on its own: pin every host tensor the program makes.
    wrong = [
        o.program.id
        for o in outcomes
        if o.program.kind == "race" and bool(o.pinned_races) != (o.program.expect == NOT_SAFE)
    ]
    assert wrong == []


def test_no_safe_fix_changes_behaviour(outcomes: list[harness.Outcome]) -> None:
    assert _ids(outcomes, lambda o: o.fixed and not o.same) == []


def test_no_safe_fix_introduces_a_race(outcomes: list[harness.Outcome]) -> None:
    assert _ids(outcomes, lambda o: o.fixed and o.raced) == []


def test_enough_safe_fixes_are_applied(outcomes: list[harness.Outcome]) -> None:
    # A fixer that declines everything passes the two tests above: this one catches it.
    expected = [o for o in outcomes if o.program.expect == SAFE]
    applied = [o for o in expected if o.fixed]
    assert len(applied) >= len(expected), [o.program.id for o in expected if not o.fixed]


def test_no_safe_fix_where_none_should_be(outcomes: list[harness.Outcome]) -> None:
    assert [o.program.id for o in outcomes if o.program.expect == NOT_SAFE and o.fixed] == []
