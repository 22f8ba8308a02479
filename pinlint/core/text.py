"""Lines and offsets of a source text, split the way Python's tokenizer splits them."""

from __future__ import annotations

import bisect
import hashlib
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
    """Character offsets of line starts: offset <-> (row, column), both 1-based."""

    def __init__(self, lines: list[str]) -> None:
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        self.starts = starts

    @classmethod
    def of(cls, text: str) -> LineIndex:
        return cls(split_lines(text))

    def offset(self, location: Location) -> int:
        row = min(max(location.row, 1), len(self.starts))
        return self.starts[row - 1] + location.column - 1

    def row_of(self, offset: int) -> int:
        """0-based index of the line holding ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1


def digest(data: bytes) -> str:
    """The content hash that keys the cache and guards fixes against concurrent edits."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()
