"""A function met first as a deep callee (where summaries stop at the depth bound) and then
analysed itself is interpreted again, on the same tree."""

from __future__ import annotations

from pinlint.core.results import AnalysisSettings
from pinlint.lint import analyze_text

SETTINGS = AnalysisSettings(rules=("PIN001", "PIN002"))

# `g` is summarised as `f`'s callee before it is analysed on its own (no blank line between
# them, as the adversarial program had it): the finding through `g` must keep its position.
AWAITED = """import torch
async def f(dev, it):
    async for t in it:
        t.to(dev, non_blocking=True)
    t = torch.zeros(4)
    await g(t)
async def g(t):
    return t.to("cuda", non_blocking=True)
"""


def test_a_copy_found_through_a_callee_keeps_its_position() -> None:
    analysis = analyze_text(AWAITED, SETTINGS)
    assert [(f.code, f.location.row) for f in analysis.findings] == [("PIN001", 5)]


# `warm` is analysed first (it copies too); through `a` and `b` it meets `flush` three calls
# deep, where the summary of `self.buf` is cut off by the depth bound.
DEEP = """import torch
class C:
    def __init__(self):
        self.buf = torch.zeros(4)
    def warm(self, dev, x):
        x.to(dev, non_blocking=True)
        return self.a(dev)
    def a(self, dev):
        return self.b(dev)
    def b(self, dev):
        return self.flush(dev)
    def flush(self, dev):
        return self.buf.to(dev, non_blocking=True)
"""


def test_a_function_first_met_deep_is_analysed_at_full_depth() -> None:
    analysis = analyze_text(DEEP, SETTINGS)
    assert [(f.code, f.location.row) for f in analysis.findings] == [("PIN001", 4)]
