"""The interpreter's environment: one mutable map from names and attribute chains to values,
with an undo trail, so that branches cost what they change rather than a copy of everything.

``mark()`` starts a branch, ``changes_since(mark)`` reads what it changed, ``undo(mark)`` goes
back. Merging two paths joins only the keys either path changed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pinlint.analysis.values import UNKNOWN, Value

#: A key that is not bound (on the trail, and in change maps).
ABSENT: Value | None = None

Changes = dict[str, "Value | None"]


class Env:
    __slots__ = ("_values", "_trail", "_under", "_open")

    def __init__(self) -> None:
        self._values: dict[str, Value] = {}
        self._trail: list[tuple[str, Value | None]] = []
        #: prefix ("self", "self.a") -> attribute-chain keys ever bound below it; an index for
        #: invalidating ``x.attr`` when ``x`` is rebound (entries may be stale: checked on use).
        self._under: dict[str, set[str]] = {}
        self._open = 0  # open marks: the trail is only kept while a branch may be undone

    def get(self, key: str) -> Value | None:
        return self._values.get(key)

    def items(self) -> list[tuple[str, Value]]:
        return list(self._values.items())

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def set(self, key: str, value: Value) -> None:
        if self._open:
            self._trail.append((key, self._values.get(key)))
        self._values[key] = value
        if "." in key:
            parts = key.split(".")
            for i in range(1, len(parts)):
                self._under.setdefault(".".join(parts[:i]), set()).add(key)

    def delete(self, key: str) -> None:
        if key in self._values:
            if self._open:
                self._trail.append((key, self._values[key]))
            del self._values[key]

    def bind(self, key: str, value: Value) -> None:
        """``key = value``: rebinding ``x`` also forgets what was known of ``x.attr``."""
        for stale in self.keys_under(key):
            self.delete(stale)
        self.set(key, value)

    def forget_under(self, key: str) -> None:
        """What was known of ``key``'s attributes (``x.a``, ``x.a.b``...) is unknown from here on."""
        for stale in self.keys_under(key):
            self.set(stale, UNKNOWN)

    def keys_under(self, key: str) -> list[str]:
        return [k for k in self._under.get(key, ()) if k in self._values]

    # ------------------------------------------------------------------ branches
    def mark(self) -> int:
        self._open += 1
        return len(self._trail)

    def changes_since(self, mark: int) -> Changes:
        """Every key changed since ``mark`` -> its current value (ABSENT when deleted)."""
        return {key: self._values.get(key) for key, _ in self._trail[mark:]}

    def undo(self, mark: int) -> None:
        """Back to the state at ``mark`` (the mark stays open: call ``close`` when done)."""
        trail = self._trail
        values = self._values
        while len(trail) > mark:
            key, previous = trail.pop()
            if previous is None:
                values.pop(key, None)
            else:
                values[key] = previous

    def close(self, mark: int) -> None:
        """End the branch started at ``mark``, keeping the current state."""
        self._open -= 1
        if not self._open:
            del self._trail[:]  # nothing can be undone any more

    def apply(self, changes: Changes) -> None:
        for key, value in changes.items():
            if value is None:
                self.delete(key)
            else:
                self.set(key, value)

    def merge(self, outcomes: Iterable[Changes]) -> None:
        """Join the outcomes of alternative paths (each a change map against the current state).

        A key bound on some paths only holds, on the others, whatever it held before: unknown.
        """
        outcomes = list(outcomes)
        keys: dict[str, None] = {}
        for outcome in outcomes:
            keys.update(dict.fromkeys(outcome))
        for key in keys:
            current = self._values.get(key)
            values = [outcome.get(key, current) if key in outcome else current for outcome in outcomes]
            if current is None and _POSITION.search(key):
                # `found.[]0`, the first items of a list of tuples, made on some paths only: on a
                # path where the list is still empty there is no tuple, nothing to join.
                items = list_key(key)
                values = [
                    value
                    for value, outcome in zip(values, outcomes)
                    if value is not None or outcome.get(items, self._values.get(items)) != frozenset()
                ]
            merged = join_all(values)
            if merged is None:
                self.delete(key)
            elif merged != current:
                self.set(key, merged)


#: An element key of a list of tuples: the items at one position (``found.[]0``).
_POSITION = re.compile(r"\.\[\]\d+$")


def list_key(position: str) -> str | None:
    """``found.[]`` for a position key ``found.[]0`` (None for any other key)."""
    return position[: position.rindex(".[]")] + ".[]" if _POSITION.search(position) else None


def join(a: Value | None, b: Value | None) -> Value | None:
    """Two paths' values of one key (None: not bound on that path)."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        return (a or b or UNKNOWN) | UNKNOWN
    return a | b


def join_all(values: list[Value | None]) -> Value | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    merged: Value = frozenset().union(*present)
    if len(present) < len(values):
        merged = merged | UNKNOWN  # unbound on some path: whatever it held there is unknown
    return merged
