"""The fixer's scope model: a file without ``global``/``nonlocal`` has its function bodies walked
only when asked about a place inside them; every answer must be the eager walk's."""

from __future__ import annotations

import ast

import pytest

from pinlint.fix.scope import FileScopes, may_declare

SOURCE = """
import torch
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pkg.mem import is_pin_memory_available

PIN = 1


def outer(device, items):
    from pkg.platform import is_pin_memory_available

    def inner(x, device=device):
        total = [y for y in x if (z := y)]
        return torch.tensor(total, device=device), z

    class Local:
        device = "cpu"

        def method(self):
            return device, self

    f = lambda q: q + PIN
    for device in items:
        pass
    return inner, Local, f


class Engine:
    pin = PIN

    def step(self, device):
        try:
            import numpy as np
        except ImportError as exc:
            np = None
        match device:
            case {"cuda": idx, **rest}:
                return idx, rest, np
        return self.pin


async def later(device):
    async with device as d:
        return d
"""


@pytest.mark.parametrize("source", [SOURCE])
def test_lazy_bodies_answer_as_the_eager_walk(source: str) -> None:
    assert not may_declare(source)  # the lazy path is the one taken
    tree = ast.parse(source)
    eager, lazy = FileScopes(tree), FileScopes(tree, source)
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    asked = 0
    for node in names:
        pos = (node.lineno, node.col_offset)
        assert lazy.innermost(pos).name == eager.innermost(pos).name, pos
        for name in {node.id, "device", "is_pin_memory_available", "np", "self", "PIN", "z"}:
            assert lazy.resolve(name, pos) == eager.resolve(name, pos), (name, pos)
            asked += 1
    assert asked > 200  # every name of the source, each asked several questions


def test_a_body_is_walked_only_when_asked() -> None:
    source = "def f(device):\n    x = 1\n    return x\n\n\ndef g():\n    y = 2\n"
    tree = ast.parse(source)
    scopes = FileScopes(tree, source)
    f, g = scopes.module.children
    assert f.pending is not None and g.pending is not None  # nothing walked yet
    assert scopes.resolve("x", (3, 11)).where == "local"
    assert f.pending is None and g.pending is not None  # only the body asked about


@pytest.mark.parametrize(
    ("text", "declares"),
    [
        ("def f():\n    global x\n", True),
        ("def f(): global x\n", True),
        ("def f():\n    x = 1; nonlocal y\n", True),
        ("global_rank = 1\nself.global_step\n", False),
        ("# no global here\n", False),
    ],
)
def test_declarations_are_found_where_a_statement_can_start(text: str, declares: bool) -> None:
    assert may_declare(text) is declares
