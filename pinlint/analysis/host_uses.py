"""What happens to a host tensor besides being copied: host writes into it (or a view of it)
and escapes (stored, returned, handed to code we do not see).

Pinning a tensor makes its non_blocking copies really asynchronous; a host write that can follow
such a copy then races with the DMA. The fixer reads these uses to decide whether pinning is
safe. Only pinnable pageable births (the ones a fix would pin) are tracked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinlint.analysis.values import Kind, Origin, Value

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True)
class HostUse:
    #: "write": the tensor's memory is written on the host; "escape": a reference leaves what
    #: this function shows (stored in an attribute or container, returned, passed to a call).
    kind: str
    node: cst.CSTNode
    #: A short description for the fix's unsafe reason (``x += 1``, ``passed to `fill()` ``).
    what: str
    #: ids of the loops enclosing the use, innermost last.
    loops: tuple[int, ...]
    #: For "stored in an attribute": the attribute chain (``self.x_cpu``).
    attribute: str | None = None


class HostUses:
    def __init__(self) -> None:
        self.by_origin: dict[Origin, list[HostUse]] = {}
        self._seen: set[tuple[int, int, str]] = set()
        #: id(birth node) -> ids of the loops enclosing the birth.
        self.birth_loops: dict[int, tuple[int, ...]] = {}

    @property
    def tracking(self) -> bool:
        """Some tensor a fix would pin has been born in this scope."""
        return bool(self.birth_loops)

    def record(
        self,
        kind: str,
        value: Value,
        node: cst.CSTNode,
        what: str,
        loops: tuple[int, ...],
        attribute: str | None = None,
    ) -> None:
        for origin in value:
            if origin.kind is not Kind.PAGEABLE or not origin.pinnable or origin.node is None:
                continue  # only what a fix would pin matters
            key = (id(origin.node), id(node), kind)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.by_origin.setdefault(origin, []).append(HostUse(kind, node, what, loops, attribute))
