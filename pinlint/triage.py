"""Step 3 of the pipeline: decide cheaply, from text alone, what can hold a finding.

On real code only a few percent of files mention ``non_blocking`` (design §7), and within
those only the functions that contain a copy matter: the analysis is function-local. So the
triage (1) tests the raw bytes for trigger words, then (2) cuts the text into the *outermost
functions* that contain a trigger line, so that libcst parses those functions alone.

Cutting by indentation is a heuristic. It is safe because every segment is parsed: a segment
cut in the wrong place (a line inside a multi-line string at a lower indentation, a backslash
continuation) fails to parse, and the caller then parses the whole file instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A positional non_blocking: `.to(dev, dtype, True)`, `.cuda(dev, True)`, `.copy_(src, True)`.
# The argument spans are bounded ({0,2000}): unbounded, every `.to(` on a long line would scan
# to its end (quadratic on one long comment line).
_POSITIONAL_TRUE = re.compile(rb"\.(?:to|cuda|copy_)\([^\n]{0,2000},\s*True\s*\)")
_POSITIONAL_TRUE_STR = re.compile(r"\.(?:to|cuda|copy_)\(.{0,2000},\s*True\s*\)")
_DEVICE_KW = re.compile(r"\bdevice\s*=")
_DEF = re.compile(r"([ \t]*)(?:async[ \t]+)?def[ \t]")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split only on the newlines Python's tokenizer knows."""
    return _LINE.findall(text)


def has_triggers(data: bytes, device_rule: bool) -> bool:
    """The byte-level test every file gets: is there anything a rule could flag?"""
    if b"torch" not in data:
        return False  # a file that never names torch cannot build a torch tensor
    if b"non_blocking" in data:
        return True
    if b"True" in data and _POSITIONAL_TRUE.search(data):
        return True
    return device_rule and b"device" in data


@dataclass(frozen=True)
class Segment:
    """Lines ``start``..``end`` (0-based, end exclusive) of the file, dedented by ``indent``."""

    start: int
    end: int
    indent: str

    @property
    def whole_file(self) -> bool:
        return self.start == 0 and self.indent == "" and self.end < 0


WHOLE_FILE = Segment(0, -1, "")


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _is_hit(line: str, device_rule: bool) -> bool:
    stripped = line.lstrip()
    if stripped.startswith("#") or _DEF.match(line):
        return False  # a comment, or a `def` whose name or defaults mention it: no copy here
    if "non_blocking" in line:
        return True
    if "True" in line and _POSITIONAL_TRUE_STR.search(line):
        return True
    return device_rule and "device" in line and _DEVICE_KW.search(line) is not None


def _enclosing_def(lines: list[str], hit: int) -> int | None:
    """Index of the outermost ``def`` whose body holds line ``hit``, or None (module level)."""
    bound = _indent_of(lines[hit])
    found: int | None = None
    for i in range(hit - 1, -1, -1):
        line = lines[i]
        if _is_blank_or_comment(line):
            continue
        indent = _indent_of(line)
        if indent >= bound:
            continue
        match = _DEF.match(line)
        if match:
            found, bound = i, indent
            if indent == 0:
                break
        elif indent == 0 and not line.startswith((")", "]", "}")):
            break  # a module-level statement (class, if, ...) closes the search
    return found


_MAX_HEADER_LINES = 500


def _header_end(lines: list[str], start: int) -> int:
    """Last line of a ``def`` header whose parameters may span several lines."""
    depth = 0
    # Bounded: a `(` inside a string in the header never balances, and scanning to the end of
    # the file for every def would be quadratic. No real header is this long.
    for j in range(start, min(len(lines), start + _MAX_HEADER_LINES)):
        code = lines[j].split("#", 1)[0]
        depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
        if depth <= 0 and code.rstrip().endswith(":"):
            return j
    return start


def _segment_for(lines: list[str], start: int) -> Segment:
    indent_str = lines[start][: _indent_of(lines[start])]
    width = len(indent_str)
    end = len(lines)
    for j in range(_header_end(lines, start) + 1, len(lines)):
        line = lines[j]
        if _is_blank_or_comment(line):
            continue
        if _indent_of(line) <= width:
            end = j
            break
    # Trailing blank/comment lines belong to whatever follows.
    while end - 1 > start and _is_blank_or_comment(lines[end - 1]):
        end -= 1
    return Segment(start, end, indent_str)


_HIT = re.compile(r"non_blocking|\.(?:to|cuda|copy_)\([^\n]{0,2000},[ \t]*True[ \t]*\)")
_HIT_WITH_DEVICE = re.compile(r"non_blocking|\.(?:to|cuda|copy_)\([^\n]{0,2000},[ \t]*True[ \t]*\)|\bdevice[ \t]*=")


def _hit_lines(text: str, lines: list[str], device_rule: bool) -> list[int]:
    """0-based indices of trigger lines, found by one regex pass over the whole text."""
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line)
    import bisect

    found: list[int] = []
    pattern = _HIT_WITH_DEVICE if device_rule else _HIT
    for match in pattern.finditer(text):
        index = bisect.bisect_right(starts, match.start()) - 1
        if (not found or found[-1] != index) and _is_hit(lines[index], device_rule):
            found.append(index)
    return found


def candidate_segments(text: str, device_rule: bool, lines: list[str] | None = None) -> list[Segment]:
    """The outermost functions that contain a trigger line; [WHOLE_FILE] for module-level hits."""
    lines = split_lines(text) if lines is None else lines
    segments: dict[int, Segment] = {}
    covered_until = -1
    for index in _hit_lines(text, lines, device_rule):
        if index < covered_until:
            continue
        start = _enclosing_def(lines, index)
        if start is None:
            # A copy at module or class level: no function to cut out, parse everything.
            return [WHOLE_FILE]
        if start not in segments:
            segments[start] = _segment_for(lines, start)
        covered_until = segments[start].end
    return list(segments.values())


def segment_text(lines: list[str], segment: Segment) -> str | None:
    """The segment's source, dedented; None when a line cannot be dedented (parse the file)."""
    if segment.whole_file:
        return "".join(lines)
    width = len(segment.indent)
    out = []
    for line in lines[segment.start : segment.end]:
        if line.startswith(segment.indent):
            out.append(line[width:])
        elif not line.strip():
            out.append(line.lstrip(" \t\f"))
        elif line.lstrip().startswith("#"):
            out.append(line.lstrip(" \t\f"))  # a comment at a lower indentation: position-free
        else:
            return None  # e.g. a multi-line string's continuation line at column 0
    return "".join(out)
