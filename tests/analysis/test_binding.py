"""Definite assignment (``pinlint.analysis.binding``): which names are bound on every path to a
row. One walk per scope answers every row; these pin the semantics the fixer relies on."""

from __future__ import annotations

import libcst as cst
import pytest

from pinlint.analysis.binding import DefiniteAssignment, bound_at
from pinlint.analysis.positions import NodeSpans


def _analysis(source: str) -> tuple[cst.FunctionDef, DefiniteAssignment, list[str]]:
    module = cst.parse_module(source)
    spans = NodeSpans(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))

    def rows(node: cst.CSTNode) -> tuple[int, int]:
        return spans.start(node)[0], spans.end(node)[0]

    return function, DefiniteAssignment(function, rows), source.splitlines()


def _bound(source: str, marker: str, names: set[str]) -> set[str]:
    """The names bound on every path to the line that holds ``marker``."""
    _, definite, lines = _analysis(source)
    row = next(i for i, line in enumerate(lines, start=1) if marker in line)
    return definite.bound_at(row, names)


NAMES = {"a", "b", "c", "d", "e", "x", "y", "dev"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # parameters, and what every path before the row binds
        ("def f(dev, *a, b=1, **c):\n    x = 1\n    HERE\n", {"dev", "a", "b", "c", "x"}),
        # a binding on the row itself does not count (it may come after the construction)
        ("def f():\n    x = 1; y = 2; HERE\n", set()),
        # both branches bind, one of them only: the meet
        ("def f(k):\n    if k:\n        x = y = 1\n    else:\n        x = 2\n    HERE\n", {"k", "x"}),
        # a branch that returns does not reach what follows
        ("def f(k):\n    if k:\n        return\n    else:\n        x = 2\n    HERE\n", {"k", "x"}),
        # after a return, nothing reaches the row
        ("def f():\n    x = 1\n    return x\n    HERE\n", set()),
        # a loop body may run zero times; its target too
        ("def f(xs):\n    for x in xs:\n        y = 1\n    HERE\n", {"xs"}),
        ("def f(xs):\n    while xs:\n        y = 1\n    else:\n        x = 1\n    HERE\n", {"xs"}),
        # inside the loop body its target is bound
        ("def f(xs):\n    for x, (y, *a) in xs:\n        HERE\n", {"xs", "x", "y", "a"}),
        # `except ... as e` is unbound after its handler; a handler starts before the body's bindings
        (
            "def f():\n    try:\n        x = 1\n    except E as e:\n        x = 2\n    else:\n        y = 1\n    HERE\n",
            {"x"},
        ),
        ("def f():\n    try:\n        x = 1\n    except E as e:\n        HERE\n", {"e"}),
        ("def f():\n    try:\n        pass\n    finally:\n        x = 1\n    HERE\n", {"x"}),
        # walrus binds in this scope, but not from inside a comprehension or lambda
        ("def f(v):\n    print(x := v)\n    HERE\n", {"v", "x"}),
        ("def f(v):\n    a = [(x := i) for i in v]\n    HERE\n", {"v", "a"}),
        # del, imports, defs and classes
        (
            "def f():\n    x = y = 1\n    del x\n    import a.b, c as d\n    def e(): pass\n    HERE\n",
            {"y", "a", "d", "e"},
        ),
        # with: the names of its items, in its body
        ("def f():\n    with open(p) as x, g() as (y, a):\n        HERE\n", {"x", "y", "a"}),
        # match: a case may not match; captures inside the case
        ("def f(v):\n    match v:\n        case [x, *a]:\n            HERE\n", {"v", "x", "a"}),
        ("def f(v):\n    match v:\n        case [x]:\n            y = 1\n    HERE\n", {"v"}),
        # (even after `case _:`: no case is taken to be sure to match)
        (
            "def f(v):\n    match v:\n        case [x]:\n            y = 1\n        case _:\n            y = 2\n    HERE\n",
            {"v"},
        ),
        # an if/elif chain: every branch, the final else included
        (
            "def f(k):\n    if k:\n        x = 1\n    elif k > 1:\n        x = 2\n    else:\n        x = 3\n    HERE\n",
            {"x", "k"},
        ),
        ("def f(k):\n    if k:\n        x = 1\n    elif k > 1:\n        x = 2\n    HERE\n", {"k"}),
    ],
)
def test_bound_on_every_path(source: str, expected: set[str]) -> None:
    source = source.replace("HERE", "here = 0")
    assert _bound(source, "here = 0", NAMES | {"k", "v", "xs"}) == expected


def test_header_rows_see_what_holds_before_the_statement() -> None:
    source = "def f(k):\n    x = 1\n    if (y := k):\n        z = 1\n    for a in g(x):\n        pass\n"
    _, definite, _ = _analysis(source)
    assert definite.bound_at(3, {"x", "y", "k"}) == {"x", "k"}  # the `if` test
    assert definite.bound_at(5, {"x", "a"}) == {"x"}  # the loop's iterable
    assert definite.bound_at(99, {"x"}) == set()  # no statement there


def test_one_walk_answers_like_a_walk_per_question() -> None:
    source = "def f(k):\n    x = 1\n    if k:\n        y = 1\n    else:\n        y = 2\n    z = 3\n"
    function, definite, _ = _analysis(source)
    module = cst.parse_module(source)
    spans = NodeSpans(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))

    def rows(node: cst.CSTNode) -> tuple[int, int]:
        return spans.start(node)[0], spans.end(node)[0]

    again = DefiniteAssignment(function, rows)
    for row in range(1, 8):
        assert again.bound_at(row, {"x", "y", "z", "k"}) == bound_at(function, row, {"x", "y", "z", "k"}, rows)
