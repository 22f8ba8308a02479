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


@pytest.mark.parametrize(
    "text", ["", "a", "a\n", "a\r\nb", "a\rb\r", "a\x0cb\nc\x1c\n", "é\n\nxy", "\n\n", "a\u2028b\n"]
)
def test_line_index_counts_lines_as_the_tokenizer_does(text: str) -> None:
    """Line starts at 0 and after each \\n, \\r\\n or \\r (not at form feeds or U+2028, which
    str.splitlines also splits at); the end of the text belongs to its last line."""
    from pinlint.core.diagnostics import Location
    from pinlint.core.text import LineIndex

    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" or (c == "\r" and text[i + 1 : i + 2] != "\n")]
    index = LineIndex.of(text)
    assert index.starts == starts
    for offset in range(len(text) + 1):
        row = max(r for r, start in enumerate(starts) if start <= offset)
        assert index.row_of(offset) == row
        assert index.line_column(offset) == (row + 1, offset - starts[row])
        assert index.offset(Location(row + 1, offset - starts[row] + 1)) == offset


def test_fast_path_columns_after_a_form_feed_are_in_characters(tmp_path: Path) -> None:
    """A form feed line inside the function must not shift the fast path's lines."""
    line = '    return torch.tensor(["é" for s in seqs], dtype=torch.int32, device=device)'
    text = f"import torch\n\ndef f(seqs, device):\n    x = 1\n\x0c\n{line}\n"
    [finding] = [d for d in lint(text, select={"PIN003"}).diagnostics]
    assert (finding.location.row, finding.location.column) == (6, 12)
    assert (finding.end_location.row, finding.end_location.column) == (6, len(line) + 1)


def test_diffs_split_lines_where_the_tokenizer_does() -> None:
    """A form feed inside a line keeps the line whole (str.splitlines would cut it, and the
    diff would claim a missing newline mid-file)."""
    from pinlint.fix.apply import unified_diff

    diff = unified_diff("a = 1\x0c  # ff\nb = 2\n", "a = 1\x0c  # ff\nb = 3\n", "m.py")
    assert diff.split("\n")[3:] == [" a = 1\x0c  # ff", "-b = 2", "+b = 3", ""]
    assert "No newline" not in diff
