"""Triage: decide cheaply, from text alone, what can hold a finding.

On real code only a few percent of files mention ``non_blocking``, and within those only the
functions that contain a copy matter: the analysis is function-local. So the triage (1) tests
the raw bytes for the selected rules' trigger words, then (2) cuts the text into the *outermost
functions* that contain a trigger line, so that libcst parses those functions alone.

Cutting by indentation is a heuristic. It is safe because every segment is parsed: a segment
cut in the wrong place (a line inside a multi-line string at a lower indentation, a backslash
continuation) fails to parse, and the caller then parses the whole file instead.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache, partial

from pinlint.core.text import LineIndex, split_lines

_DEF = re.compile(r"([ \t]*)(?:async[ \t]+)?def[ \t]")


@dataclass(frozen=True)
class Trigger:
    """Text that marks a line a rule may flag: ``word`` must occur in the file's bytes (a fast
    ``in`` test), then ``pattern`` (a regex over one line) must match."""

    word: bytes
    pattern: str
    #: A bytes regex the file must also match for this trigger to count (e.g. PIN003 needs a
    #: data-factory call somewhere besides a ``device=``); None: no further condition.
    requires: bytes | None = None
    #: Substrings any one of which meets ``requires`` without running it: a plain ``in`` test
    #: is many times faster than a regex alternation that no literal prefix anchors.
    requires_any: tuple[bytes, ...] = ()


class Triggers:
    """The union of the selected rules' triggers, compiled once into one regex."""

    def __init__(self, triggers: tuple[Trigger, ...]) -> None:
        unique = tuple(dict.fromkeys(triggers))
        self.triggers = unique
        self._byte_patterns = tuple(
            (
                t.word,
                None if t.pattern == t.word.decode() else re.compile(t.pattern.encode()),
                None if t.requires is None else re.compile(t.requires),
                t.requires_any,
            )
            for t in unique
        )
        self.pattern = re.compile("|".join(t.pattern for t in unique)) if unique else None
        #: A rule follows tensors into ``non_blocking`` copies: a file copying one that an
        #: imported project helper built need not name torch itself.
        self._copies = any(t.word == b"non_blocking" for t in unique)

    def file_matches(self, data: bytes) -> bool:
        """The byte-level test every file gets: is there anything a rule could flag?"""
        if b"torch" not in data:
            # A file that never names torch builds no torch tensor, but it may copy one that a
            # function imported from the project built.
            return self._copies and b"non_blocking=True" in data and b"import" in data
        for word, pattern, requires, requires_any in self._byte_patterns:
            if word in data and (pattern is None or pattern.search(data)):
                if requires is None or any(w in data for w in requires_any) or requires.search(data):
                    return True
        return False


@lru_cache(maxsize=16)
def compile_triggers(triggers: tuple[Trigger, ...]) -> Triggers:
    return Triggers(triggers)


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


def _is_hit(line: str) -> bool:
    stripped = line.lstrip()
    # A comment, or a `def` whose name or defaults mention a trigger: no copy here.
    return not (stripped.startswith("#") or _DEF.match(line))


def enclosing_def(lines: list[str], hit: int) -> int | None:
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


#: The lines that can end ``enclosing_def``'s upward walk: a ``def`` (group 1: its indent), or
#: code at column 0 (not blank, not a comment, not a closing bracket).
_WALK_STOPS = re.compile(r"^(?:([ \t]*)(?:async[ \t]+)?def[ \t]|(?=[^ \t\n#)\]}])(?!\s*$))", re.M)


class EnclosingDefs:
    """``enclosing_def`` for many lines of one file: the defs and column-0 statements are found
    once (one regex pass), and each query walks those alone instead of every line above it."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        text = "".join(lines)
        row_of = LineIndex(lines).row_of
        self.rows: list[int] = []
        #: The def's indent, or -1 for a column-0 statement.
        self.indents: list[int] = []
        for match in _WALK_STOPS.finditer(text):
            indent = match.group(1)
            self.rows.append(row_of(match.start()))
            self.indents.append(len(indent) if indent is not None else -1)

    def of(self, hit: int) -> int | None:
        bound = _indent_of(self.lines[hit])
        if bound == 0:
            return None  # nothing above is less indented: module level
        found: int | None = None
        for k in range(bisect.bisect_left(self.rows, hit) - 1, -1, -1):
            indent = self.indents[k]
            if indent < 0:
                break  # a module-level statement (class, if, ...) closes the search
            if indent >= bound:
                continue
            found, bound = self.rows[k], indent
            if indent == 0:
                break
        return found


_MAX_HEADER_LINES = 500
#: Above this many trigger lines, ``_segments`` indexes the file's defs first.
_INDEX_ABOVE = 8


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


def segment_for(lines: list[str], start: int) -> Segment:
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


def _hit_lines(text: str, lines: list[str], triggers: Triggers) -> list[int]:
    """0-based indices of trigger lines, found by one regex pass over the whole text."""
    if triggers.pattern is None:
        return []
    index_of = LineIndex(lines).row_of
    found: list[int] = []
    for match in triggers.pattern.finditer(text):
        index = index_of(match.start())
        if (not found or found[-1] != index) and _is_hit(lines[index]):
            found.append(index)
    return found


def candidate_segments(text: str, triggers: Triggers, lines: list[str] | None = None) -> list[Segment]:
    """The outermost functions that contain a trigger line; [WHOLE_FILE] for module-level hits."""
    return _segments(text, triggers, lines, module_level=True)


def function_segments(text: str, triggers: Triggers, lines: list[str] | None = None) -> list[Segment]:
    """The outermost functions that contain a trigger line; hits at module or class level are
    left out (for rules that do not flag import-time code)."""
    return _segments(text, triggers, lines, module_level=False)


def _segments(text: str, triggers: Triggers, lines: list[str] | None, *, module_level: bool) -> list[Segment]:
    lines = split_lines(text) if lines is None else lines
    segments: dict[int, Segment] = {}
    covered_until = -1
    hits = _hit_lines(text, lines, triggers)
    # Many hits (PIN003's `device=` lines): find the defs once rather than walk up from each.
    enclosing = EnclosingDefs(lines).of if len(hits) > _INDEX_ABOVE else partial(enclosing_def, lines)
    for index in hits:
        if index < covered_until:
            continue
        start = enclosing(index)
        if start is None:
            if module_level:
                # A copy at module or class level: no function to cut out, parse everything.
                return [WHOLE_FILE]
            continue  # import-time code: not this caller's business
        if start not in segments:
            segments[start] = segment_for(lines, start)
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
