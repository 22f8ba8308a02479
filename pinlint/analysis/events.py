"""What the interpreter reports to rules. It records only the event types some selected rule
listens to, and knows nothing of the rules themselves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pinlint import torch_api
from pinlint.analysis.values import Kind, Origin, Value, kinds
from pinlint.core.diagnostics import Location

if TYPE_CHECKING:  # libcst is imported where used: rule modules load without it
    import libcst as cst


@dataclass(frozen=True)
class SinkHit:
    """A pageable origin that reaches a non_blocking host-to-device copy."""

    origin: Origin
    sink: cst.Call
    #: ``".to"``, ``".cuda"`` or ``".copy_"``.
    api: str
    #: The copy's target device expression; None for ``.cuda()`` (current device).
    device: cst.BaseExpression | None
    #: For ``dst.copy_(src)``: the ``dst`` expression (the device is ``dst.device``).
    copy_dst: cst.BaseExpression | None
    #: The construction is the copy's receiver itself (``torch.tensor(x).to(...)``).
    chained: bool
    sink_statement: cst.CSTNode
    #: ids of the loops enclosing the copy, innermost last.
    loops: tuple[int, ...] = ()


@dataclass(frozen=True)
class DeviceConstruction:
    """``torch.tensor(<python data>, device=<not provably host>)``: a blocking pageable copy."""

    call: cst.Call
    factory: str
    device_arg: cst.Arg
    statement: cst.CSTNode
    #: What is copied: "python", "numpy", "tensor" (a host tensor) or "unknown".
    data: str = "unknown"
    #: ``requires_grad=`` is given (a fix through ``.to()`` would make a non-leaf tensor).
    requires_grad: bool = False


@dataclass(frozen=True)
class ConstructionSite:
    """A device construction as plain data (rows and 1-based character columns of the file):
    what the fast path (``fast_constructions``) reports without a CST, and what PIN003 turns
    into a finding from either path."""

    factory: str
    data: str
    requires_grad: bool
    star_kwargs: bool
    call_start: Location
    call_end: Location
    #: From the ``device`` keyword to the end of its value (the span the fix replaces).
    device_start: Location
    device_end: Location
    device_text: str
    statement_rows: tuple[int, int]


Event = "SinkHit | DeviceConstruction"


class EventSink:
    """Collects the events of one scope, each once."""

    def __init__(self, listened: frozenset[type]) -> None:
        self.listened = listened
        self.events: list[Event] = []
        self._seen: set[tuple[int, ...]] = set()

    @property
    def wants_constructions(self) -> bool:
        return DeviceConstruction in self.listened

    def copy(
        self,
        source_node: cst.BaseExpression,
        source: Value,
        call: cst.Call,
        api: str,
        device: cst.BaseExpression | None,
        copy_dst: cst.BaseExpression | None,
        statement: cst.CSTNode,
        loops: tuple[int, ...] = (),
    ) -> None:
        """A non_blocking host-to-device copy of ``source`` (a SinkHit per pageable origin)."""
        if SinkHit not in self.listened:
            return
        if Kind.DEVICE in kinds(source):
            return  # host-ness rests on a run-time condition (some path is already on a device)
        for origin in source:
            if origin.kind is not Kind.PAGEABLE or origin.node is None:
                continue
            key = (id(origin.node), id(call))
            if key in self._seen:
                continue
            self._seen.add(key)
            chained = strip_views(source_node) is origin.node
            self.events.append(SinkHit(origin, call, api, device, copy_dst, chained, statement, loops))

    def construction(
        self,
        call: cst.Call,
        factory: str,
        device_arg: cst.Arg,
        statement: cst.CSTNode,
        *,
        data: str = "unknown",
        requires_grad: bool = False,
    ) -> None:
        if DeviceConstruction not in self.listened:
            return
        key = (id(call),)
        if key in self._seen:
            return
        self._seen.add(key)
        self.events.append(DeviceConstruction(call, factory, device_arg, statement, data, requires_grad))


def strip_views(node: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.tensor(x)[:n].view(-1)`` -> ``torch.tensor(x)``: the construction behind views."""
    import libcst as cst

    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in torch_api.VIEW_METHODS
        ):
            node = node.func.value
        else:
            return node
