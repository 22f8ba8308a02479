"""pinlint's lean position pass agrees with libcst's PositionProvider, and falls back to it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from pinlint.analysis import interpreter, positions
from tests.helpers import lint

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(FIXTURES.glob("*/*.py")) + [Path(positions.__file__), Path(interpreter.__file__)]


@pytest.mark.parametrize("path", SOURCES, ids=[p.parent.name + "/" + p.name for p in SOURCES])
def test_spans_match_position_provider(path: Path) -> None:
    source = path.read_text()
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    spans = positions.NodeSpans(module, source)
    checked = 0
    for node, code_range in expected.items():
        if isinstance(node, cst.Module):
            continue  # the module's end differs by the trailing newline; pinlint never asks for it
        assert spans.start(node) == (code_range.start.line, code_range.start.column), node
        assert spans.end(node) == (code_range.end.line, code_range.end.column), node
        checked += 1
    assert checked > 10  # not vacuous: even a one-line import has a dozen nodes


def test_fallback_to_position_provider_gives_the_same_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (FIXTURES / "pin001_formatting" / "m.py").read_text()
    helper = "myproj.utils:is_pin_memory_available(device)"
    before = [(d.location, d.end_location, d.fix) for d in lint(text, helper=helper).diagnostics]

    def broken(*args: object, **kwargs: object) -> None:
        raise AttributeError("libcst changed its codegen hooks")

    monkeypatch.setattr(positions, "NodeSpans", broken)
    after = [(d.location, d.end_location, d.fix) for d in lint(text, helper=helper).diagnostics]
    assert before and after == before
