"""The verify loop: apply fixes in memory, re-parse and re-lint, keep the fixes that verify.

When a batch of fixes fails, each is tried alone so that only the culprits are dropped. Fixing
repeats (a few rounds at most) until nothing is left to fix. The loop knows nothing of how to
lint: it is handed a ``relint`` callable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pinlint.core.diagnostics import Diagnostic, Edit
from pinlint.fix.apply import apply_edits, parses, select_fixes

#: text -> (its diagnostics, or None with the reason it cannot be linted).
Relint = Callable[[str], "tuple[list[Diagnostic] | None, str | None]"]

_MAX_ROUNDS = 5


@dataclass
class FixOutcome:
    text: str
    #: The diagnostics that remain (positions in the new text).
    remaining: list[Diagnostic]
    applied: list[Diagnostic] = field(default_factory=list)
    #: Fixes that did not verify, with why.
    dropped: list[tuple[Diagnostic, str]] = field(default_factory=list)


def fix_text(text: str, diagnostics: list[Diagnostic], unsafe_fixes: bool, relint: Relint) -> FixOutcome:
    """Apply fixes until none is left; verify each round."""
    outcome = FixOutcome(text, diagnostics)
    for _round in range(_MAX_ROUNDS):
        current_text, current = outcome.text, outcome.remaining
        chosen, edits, overlapping = select_fixes(current_text, current, unsafe_fixes)
        if not chosen:
            break
        allowed = len(current) - len(chosen)
        candidate, after, problem = _try(current_text, edits, allowed, relint)
        if problem is not None and len(chosen) > 1:
            # Find the culprits: keep the fixes that verify on their own, drop the others.
            good = []
            for diagnostic in chosen:
                assert diagnostic.fix is not None
                _, _, alone = _try(current_text, list(diagnostic.fix.edits), len(current) - 1, relint)
                if alone is None:
                    good.append(diagnostic)
                else:
                    outcome.dropped.append((diagnostic, f"fix dropped, {alone}"))
            chosen = good
            edits = [e for d in good if d.fix for e in d.fix.edits]
            if not chosen:
                break
            candidate, after, problem = _try(current_text, edits, len(current) - len(chosen), relint)
        if problem is not None:
            outcome.dropped.extend((diagnostic, f"fix dropped, {problem}") for diagnostic in chosen)
            break
        outcome.applied.extend(chosen)
        outcome.text, outcome.remaining = candidate, after
        if overlapping and not any(d.fix for d in after):
            break
    return outcome


def _try(text: str, edits: list[Edit], allowed: int, relint: Relint) -> tuple[str, list[Diagnostic], str | None]:
    """Apply edits in memory, re-parse and re-lint: (new text, its diagnostics, problem or None)."""
    candidate = apply_edits(text, edits)
    problem = parses(candidate)
    if problem is not None:
        return candidate, [], f"the fixed file would not parse ({problem})"
    after, cannot = relint(candidate)
    if after is None:
        return candidate, [], f"the fixed file would not parse ({cannot})"
    if len(after) > allowed:
        return candidate, after, "the fixed file still (or newly) has findings the fix should have removed"
    return candidate, after, None
