"""``--add-noqa``: instead of a report, every finding gets ``# noqa: CODE`` on its line."""

from __future__ import annotations

from dataclasses import dataclass

from pinlint.app.run_result import CheckRun


@dataclass
class NoqaAdded:
    added: int
    #: (path, message): files left untouched (unreadable, or the comment would change the code).
    problems: list[tuple[str, str]]


def add_noqa(run: CheckRun) -> NoqaAdded:
    from pinlint.noqa_insert import add_noqa_directives

    added, problems = add_noqa_directives(run.diagnostics)
    return NoqaAdded(added, problems)
