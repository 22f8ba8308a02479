"""Sections of a generated Markdown report: one script's section replaced, the others kept.

``docs/performance.md`` is written by ``bench.py`` (the corpus runs) and ``shapes.py`` (the
generated worst cases); each rewrites its own ``## ...`` section and leaves the rest as it was.
"""

from __future__ import annotations

import re


def section(text: str, heading: str) -> str | None:
    """The section that starts with ``heading`` (its line included, up to the next ``## ``), or None."""
    match = re.search(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", text, re.S | re.M)
    return match.group(0) if match else None


def with_section(text: str, heading: str, body: str, before: str = "## Reproduce") -> str:
    """``text`` with the section ``heading`` replaced by ``body`` (which starts with the heading);
    a new section goes before ``before`` (or at the end)."""
    body = body.rstrip("\n") + "\n\n"
    old = section(text, heading)
    if old is not None:
        return text.replace(old, body, 1)
    anchor = re.search(rf"^{re.escape(before)}\n", text, re.M)
    if anchor is None:
        return text.rstrip("\n") + "\n\n" + body
    return text[: anchor.start()] + body + text[anchor.start() :]
