"""The rules, one module each beside its TOML, listed in one table (like ruff's ``codes.rs``).

Adding a rule: write ``pinNNN_<name>.py`` (a ``Rule`` subclass) and ``PINNNN.toml`` (its docs
and tested examples) in this folder, and add one line to ``RULES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pinlint.analysis.triage import Trigger
from pinlint.rules.base import Rule
from pinlint.rules.pin001_unpinned_non_blocking_copy import UnpinnedNonBlockingCopy
from pinlint.rules.pin002_unpinnable_non_blocking_source import UnpinnableNonBlockingSource
from pinlint.rules.pin003_blocking_device_construction import BlockingDeviceConstruction
from pinlint.rules.pin004_unsynchronized_device_to_host_read import UnsynchronizedDeviceToHostRead
from pinlint.rules.pin005_non_contiguous_pinned_source import NonContiguousPinnedSource
from pinlint.rules.pin006_is_pinned_not_called import IsPinnedNotCalled

RULES: tuple[Rule, ...] = (
    UnpinnedNonBlockingCopy(),
    UnpinnableNonBlockingSource(),
    BlockingDeviceConstruction(),
    UnsynchronizedDeviceToHostRead(),
    NonContiguousPinnedSource(),
    IsPinnedNotCalled(),
)


@dataclass(frozen=True)
class RuleSet:
    """The selected rules, as one value: what the interpreter records and triage looks for."""

    rules: tuple[Rule, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(rule.code for rule in self.rules)

    @property
    def listened(self) -> frozenset[type]:
        return frozenset().union(*(rule.listens_to for rule in self.rules))

    @property
    def triggers(self) -> tuple[Trigger, ...]:
        return tuple(trigger for rule in self.rules for trigger in rule.triggers)

    @property
    def follows_copies(self) -> bool:
        """A selected rule follows tensors into ``non_blocking`` copies (which may be in a
        function another file defines)."""
        return any(trigger.word == b"non_blocking" for trigger in self.triggers)


@lru_cache(maxsize=32)
def select(codes: tuple[str, ...]) -> RuleSet:
    """The registered rules among ``codes`` (unknown codes are not rules and are ignored)."""
    wanted = set(codes)
    return RuleSet(tuple(rule for rule in RULES if rule.code in wanted))


def by_code(code: str) -> Rule | None:
    return next((rule for rule in RULES if rule.code == code), None)
