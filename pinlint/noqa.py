"""``# noqa`` directives, as ruff and flake8 spell them.

``# noqa`` alone suppresses every finding on the statement; ``# noqa: PIN001, PIN002`` only
those codes (a prefix such as ``PIN`` is not a code, as in ruff).
"""

from __future__ import annotations

import re

# Case-insensitive "noqa", like ruff; codes are letters followed by digits.
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)

ALL = "*"


def directive(line: str) -> frozenset[str] | None:
    """The codes a line's noqa comment suppresses ({"*"} for a bare noqa); None without one."""
    if "#" not in line:
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset({ALL})
    return frozenset(code.upper() for code in _CODE.findall(codes))


def codes_on_rows(lines: list[str], rows: list[tuple[int, int]]) -> frozenset[str]:
    """Union of the noqa codes on every line of the given 1-based inclusive row ranges."""
    found: set[str] = set()
    for start, end in rows:
        for row in range(max(start, 1), min(end, len(lines)) + 1):
            codes = directive(lines[row - 1])
            if codes:
                found |= codes
    return frozenset(found)


def suppresses(codes: frozenset[str], code: str) -> bool:
    return ALL in codes or code in codes
