"""Facts of an analysed scope that the fix checks compute once, however many findings ask."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pinlint.rules.base import RuleContext

_T = TypeVar("_T")


def per_scope(ctx: RuleContext, key: str, compute: Callable[[], _T]) -> _T:
    """A fact of the analysed scope computed once however many of its findings ask (a function
    with thousands of findings stays linear); kept on the scope's interpreter, so it lives
    exactly as long as the nodes it describes."""
    memo = ctx.interpreter.__dict__.setdefault("_fix_safety_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]
