"""Every rule's own examples (``pinlint/rules/*.toml``) are tests, Fixit-style: bad ones are flagged
with the rule's code at the documented row, column and message (and fix to exactly the documented
output), good ones are not flagged. The docs show these same examples."""

from __future__ import annotations

import pytest

from pinlint import catalog
from tests.helpers import assert_parses, codes
from tests.helpers import lint as _lint

# The examples import the helper from `myproj.utils`; configuring it tells pinlint its signature.
HELPER = "myproj.utils:is_pin_memory_available(device)"


def lint(text: str, **kw: object):  # type: ignore[no-untyped-def]
    return _lint(text, helper=HELPER, **kw)  # type: ignore[arg-type]


BAD = [(rule.code, i, ex) for rule in catalog.all_rules() for i, ex in enumerate(rule.bad_examples)]
GOOD = [(rule.code, i, ex) for rule in catalog.all_rules() for i, ex in enumerate(rule.good_examples)]


def test_every_rule_has_examples_both_ways() -> None:
    for rule in catalog.all_rules():
        assert rule.bad_examples, rule.code
        assert rule.good_examples, rule.code


@pytest.mark.parametrize(("code", "index", "example"), BAD, ids=[f"{c}-bad{i}" for c, i, _ in BAD])
def test_bad_example_is_flagged(code: str, index: int, example: catalog.Example) -> None:
    run = lint(example.code)
    found = [d for d in run.diagnostics if d.code == code]
    assert found, run.diagnostics
    assert example.row is not None and example.column is not None and example.message, "document where"
    assert (found[0].location.row, found[0].location.column) == (example.row, example.column)
    assert found[0].message == example.message


@pytest.mark.parametrize(("code", "index", "example"), GOOD, ids=[f"{c}-good{i}" for c, i, _ in GOOD])
def test_good_example_is_not_flagged(code: str, index: int, example: catalog.Example) -> None:
    run = lint(example.code)
    assert code not in codes(run.diagnostics), run.diagnostics


FIXED = [(c, i, ex) for c, i, ex in BAD if ex.fixed is not None]


@pytest.mark.parametrize(("code", "index", "example"), FIXED, ids=[f"{c}-fix{i}" for c, i, _ in FIXED])
def test_bad_example_fixes_to_documented_output(code: str, index: int, example: catalog.Example) -> None:
    if example.unsafe:
        # An unsafe fix is not applied without --unsafe-fixes.
        assert lint(example.code, fix=True).stdin_output != example.fixed
    run = lint(example.code, fix=True, unsafe=example.unsafe)
    assert run.stdin_output == example.fixed
    assert_parses(run.stdin_output)
    again = lint(run.stdin_output, fix=True, unsafe=True)
    assert code not in codes(again.diagnostics)
    assert again.stdin_output == run.stdin_output  # a fixed point


def test_rule_docs_have_ruff_sections() -> None:
    for rule in catalog.all_rules():
        text = rule.to_markdown()
        for heading in ("## What it does", "## Why is this bad?", "## Example", "Use instead", "## Fix safety"):
            assert heading in text, (rule.code, heading)
        assert text.startswith(f"# {rule.name} ({rule.code})")


def test_documented_examples_are_tested_examples() -> None:
    for rule in catalog.all_rules():
        page = rule.to_markdown()
        shown = next((e for e in rule.bad_examples if e.doc), rule.bad_examples[0])
        assert shown.code.strip("\n") in page, rule.code
        if shown.fixed is not None:
            assert shown.fixed.strip("\n") in page, rule.code
