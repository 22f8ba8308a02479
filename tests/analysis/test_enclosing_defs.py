"""``EnclosingDefs`` (the defs and column-0 statements found once) answers as the line-by-line
``enclosing_def`` walk does, on every line of awkward sources."""

from __future__ import annotations

import pytest

from pinlint.analysis.triage import EnclosingDefs, enclosing_def
from pinlint.core.text import split_lines

SOURCE = '''import torch


@decorator(
    arg=1,
)
def top(device):
    x = torch.zeros(
        4,
)  # a closing bracket at column 0 does not end the function
# a comment at column 0 inside it
    async def nested():

        def deeper(): return x.to(device, non_blocking=True)
        return deeper
    doc = """
text at column 0 inside a string
"""
    return nested


class Engine:
    def step(self, device):
        if device:
            return 1
        \\
        return 2

    async def later(self):
        pass
\f
x = 1
def after(): pass
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_line_answers_as_the_walk(newline: str) -> None:
    lines = split_lines(SOURCE.replace("\n", newline))
    index = EnclosingDefs(lines)
    answers = [index.of(i) for i in range(len(lines))]
    assert answers == [enclosing_def(lines, i) for i in range(len(lines))]
    assert set(answers) > {None}  # the source has lines inside functions and outside them
