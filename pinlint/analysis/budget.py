"""The analysis work budget: steps per scope, counted (deterministic), and a wall-clock watchdog."""

from __future__ import annotations


class BudgetExceeded(Exception):
    """The scope took more analysis steps (or time) than allowed: its results are dropped."""


#: Analysis steps (statements walked + expressions evaluated) allowed per scope. Real functions
#: of large projects take a few thousand; generated code can take far more.
SCOPE_STEP_BUDGET = 400_000
#: How often (in steps) the wall-clock deadline is looked at.
_DEADLINE_EVERY = 4096
