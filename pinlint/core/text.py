"""Lines and offsets of a source text, split the way Python's tokenizer splits them."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re

from pinlint.core.diagnostics import Location

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split only on the newlines Python's tokenizer knows."""
    return _LINE.findall(text)


def line_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\r"):
        return "\r"
    return "\n"


class LineIndex:
    """Where each line starts, as character offsets: offset <-> (row, column).

    A line starts at 0 and after every newline (``\n``, ``\r\n``, ``\r``), so a text that ends
    with one has an empty last line at its end, as Python's tokenizer and libcst count them. The
    one line index of pinlint: the fixer, the CST positions, triage and file summaries use it.
    """

    def __init__(self, lines: list[str]) -> None:
        ends = list(itertools.accumulate(map(len, lines)))
        #: The length of the text.
        self.end = ends[-1] if ends else 0
        if lines and not lines[-1].endswith(("\n", "\r")):
            ends.pop()  # the end of a last line without a newline starts no line
        self.starts = [0, *ends]

    @classmethod
    def of(cls, text: str) -> LineIndex:
        return cls(split_lines(text))

    def offset(self, location: Location) -> int:
        """The offset of a 1-based (row, column); a row past the last line is the text's end."""
        if location.row > len(self.starts):
            return self.end + location.column - 1
        return self.starts[max(location.row, 1) - 1] + location.column - 1

    def row_of(self, offset: int) -> int:
        """0-based index of the line holding ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based row and 0-based column of ``offset`` (libcst's ``CodeRange`` convention)."""
        row = bisect.bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1]


def digest(data: bytes) -> str:
    """The content hash that keys the cache and guards fixes against concurrent edits."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
