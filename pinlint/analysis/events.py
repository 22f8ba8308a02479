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
    #: For a copy in another function that receives the tensor as an argument: the call that
    #: hands it over (in the function analysed).
    via: cst.Call | None = None
    #: When that function hands it on to others before the copy: the calls it passes through
    #: (each in the function the previous one runs), outermost first.
    chain: tuple[cst.Call, ...] = ()
    #: ``device`` is an expression of the function ``via`` calls (False: the copy's device is
    #: fixed deeper in the chain, and no fix can name it here).
    device_known: bool = True


@dataclass(frozen=True)
class ParameterCopy:
    """A non_blocking host-to-device copy of a parameter: callers that pass a pageable tensor
    for it make a pageable copy (read by the summaries of ``analysis.summaries``)."""

    parameter: str
    sink: cst.Call
    api: str
    #: The copy's device, as an expression of the function that holds this summary.
    device: cst.BaseExpression | None
    copy_dst: cst.BaseExpression | None
    sink_statement: cst.CSTNode
    #: For a copy made further down (the parameter is handed on to a function that copies it):
    #: the expression of this function that decides ``non_blocking`` (a parameter of its own,
    #: or a true value), and the calls the tensor passes through, this function's first. For a
    #: copy made here both are empty: the flag is the copy's own argument.
    flag: cst.BaseExpression | None = None
    chain: tuple[cst.Call, ...] = ()
    #: False when the copy's device is fixed further down (not an expression of this function).
    device_known: bool = True
    #: For a copy of a tensor computed from parameters (``(x * 2).to(dev, non_blocking=True)``;
    #: ``parameter`` is then ""): that computation, replayed on a caller's arguments.
    computed: Value = frozenset()
    #: A parameter that, passed the host, makes the copy never run for a host tensor
    #: (``Origin.unless_host``).
    unless_host: str = ""
    #: The parameters whose truth the copy is made under (``if asynchronous:``): a caller that
    #: passes a value of the other truth makes no such copy.
    when: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class AttributeCopy:
    """A non_blocking host-to-device copy, in a method, of ``self.<attribute>`` that the class
    does not set (a dataclass field): a caller whose object holds a pageable tensor there makes
    a pageable copy (read by ``FileSummaries.forward_fields``)."""

    attribute: str
    sink: cst.Call
    api: str
    device: cst.BaseExpression | None
    copy_dst: cst.BaseExpression | None
    sink_statement: cst.CSTNode


@dataclass(frozen=True)
class ConditionalCopy:
    """A host-to-device copy with ``non_blocking=<flag>``, ``flag`` a parameter without a
    default: non_blocking where a caller passes ``True`` for it."""

    flag: str
    source_node: cst.BaseExpression
    source: Value
    sink: cst.Call
    api: str
    device: cst.BaseExpression | None
    copy_dst: cst.BaseExpression | None
    sink_statement: cst.CSTNode
    loops: tuple[int, ...]


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


@dataclass(frozen=True)
class UnsyncedHostRead:
    """A host read of a non_blocking device-to-host copy's destination, reachable from the copy on
    a path with no (possible) synchronisation (see ``d2h``)."""

    #: The copy: ``gpu.to("cpu", non_blocking=True)`` or ``host.copy_(gpu, non_blocking=True)``.
    copy: cst.Call
    #: ``".to"`` or ``".copy_"``.
    api: str
    copy_statement: cst.CSTNode
    #: The expression read (``cpu`` in ``cpu.tolist()``).
    read: cst.CSTNode
    #: How it is read: ``"`.tolist()`"``, ``"`print()`"``, ``"iteration"``, ``"a truth test"``...
    how: str
    read_statement: cst.CSTNode
    #: The first unsynchronised copy read at this statement (a fix is offered once per statement).
    first_at_statement: bool = True


@dataclass(frozen=True)
class StridedPinnedCopy:
    """A non_blocking host-to-device copy whose source is a provably non-contiguous view of a pinned
    buffer: PyTorch gathers it into a pageable temporary first (see ``views``)."""

    call: cst.Call
    #: ``".to"``, ``".cuda"`` or ``".copy_"``.
    api: str
    #: The source expression (``buf[:, :n]``).
    source: cst.BaseExpression
    #: Why it is not contiguous (``"a restricted slice of dimension 1"``).
    why: str
    statement: cst.CSTNode


def _settled_device(source: Value) -> bool:
    """Some path is on a device whatever the callers pass (not an allocation on a device a
    parameter names, which a call may make the host)."""
    return any(o.kind is Kind.DEVICE and not o.computed for o in source)


@dataclass(frozen=True)
class UncalledIsPinned:
    """``t.is_pinned`` of a tensor used as a truth value without calling it: a bound method,
    always true, so the test never asks whether ``t`` is pinned."""

    #: The attribute (``t.is_pinned``).
    attribute: cst.Attribute
    statement: cst.CSTNode


Event = "SinkHit | DeviceConstruction | UnsyncedHostRead | StridedPinnedCopy | UncalledIsPinned"


class EventSink:
    """Collects the events of one scope, each once."""

    def __init__(self, listened: frozenset[type]) -> None:
        self.listened = listened
        self.events: list[Event] = []
        self._seen: set[tuple[object, ...]] = set()
        #: Copies whose source is a parameter (on some path).
        self.parameter_copies: list[ParameterCopy] = []
        self.attribute_copies: list[AttributeCopy] = []
        #: Copies of a new tensor computed from parameters: a caller passing host tensors for
        #: them makes the copy pageable (born here, where it is computed).
        self.computed_copies: list[ParameterCopy] = []
        #: Copies whose ``non_blocking=`` is a parameter without a default (``nb``): non_blocking
        #: where a caller passes ``True`` for it. (parameter, the copy's arguments for ``copy``.)
        self.conditional_copies: list[ConditionalCopy] = []
        #: id(copy call) -> its ``d2h.D2HCopy`` (PIN004's non_blocking device-to-host copies).
        self.d2h_copies: dict[int, object] = {}
        #: ids of the statements where an unsynchronised read was reported.
        self.d2h_read_statements: set[int] = set()
        #: The `if` sides the interpreter is in that test a parameter of the function
        #: (``if asynchronous:``): (parameter, the truth of the parameter there).
        self.conditions: tuple[tuple[str, bool], ...] = ()

    @property
    def wants_constructions(self) -> bool:
        return DeviceConstruction in self.listened

    @property
    def wants_d2h(self) -> bool:
        """Device-to-host copies and host reads are tracked (see ``d2h``)."""
        return UnsyncedHostRead in self.listened

    @property
    def wants_strided(self) -> bool:
        return StridedPinnedCopy in self.listened

    @property
    def wants_uncalled(self) -> bool:
        return UncalledIsPinned in self.listened

    def add(self, event: UnsyncedHostRead | StridedPinnedCopy | UncalledIsPinned, key: tuple[object, ...]) -> None:
        """Record ``event`` once per ``key`` (an event type's own identity)."""
        if type(event) not in self.listened or key in self._seen:
            return
        self._seen.add(key)
        self.events.append(event)

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
        via: cst.Call | None = None,
        chain: tuple[cst.Call, ...] = (),
        device_known: bool = True,
    ) -> None:
        """A non_blocking host-to-device copy of ``source`` (a SinkHit per pageable origin)."""
        if SinkHit not in self.listened:
            return
        if Kind.DEVICE in kinds(source):
            if via is None and not _settled_device(source):
                # On a device here, but where the callers say (`torch.arange(n, device=dev)`,
                # `.to(t)` of a parameter): a caller passing the host makes a host tensor.
                self._summary_copies(source, call, api, device, copy_dst, statement)
            return  # host-ness rests on a run-time condition (some path is already on a device)
        if via is None:
            self._summary_copies(source, call, api, device, copy_dst, statement)
        for origin in source:
            if origin.kind is not Kind.PAGEABLE or origin.node is None:
                continue
            key = (id(origin.node), id(call))
            if key in self._seen:
                continue
            self._seen.add(key)
            chained = via is None and strip_views(source_node) is origin.node
            self.events.append(
                SinkHit(origin, call, api, device, copy_dst, chained, statement, loops, via, chain, device_known)
            )

    @property
    def decided_by_callers(self) -> bool:
        """A copy here whose source or flag this function's callers decide: a parameter, a
        computation on parameters, or ``non_blocking=`` a parameter."""
        return bool(self.parameter_copies or self.conditional_copies or self.computed_copies)

    def _summary_copies(
        self,
        source: Value,
        call: cst.Call,
        api: str,
        device: cst.BaseExpression | None,
        copy_dst: cst.BaseExpression | None,
        statement: cst.CSTNode,
    ) -> None:
        """What the callers of this function decide about the copy: the parameters, ``self``
        fields and computations on parameters it copies."""
        for origin in source:
            if origin.parameter:
                self.parameter_copies.append(
                    ParameterCopy(
                        origin.parameter,
                        call,
                        api,
                        device,
                        copy_dst,
                        statement,
                        unless_host=origin.unless_host,
                        when=self.conditions,
                    )
                )
            if origin.attribute:
                self.attribute_copies.append(AttributeCopy(origin.attribute, call, api, device, copy_dst, statement))
        computed = frozenset(o for o in source if o.computed and not o.parameter)
        if computed and not _settled_device(source):
            self.computed_copies.append(ParameterCopy("", call, api, device, copy_dst, statement, computed=computed))

    def forwarded(self, copy: ParameterCopy) -> None:
        """A parameter handed to a function that copies it (``copy.chain``): this function's
        callers that pass a pageable tensor for it make a pageable copy."""
        if SinkHit in self.listened and copy not in self.parameter_copies:
            self.parameter_copies.append(copy)

    def conditional_copy(
        self,
        flag: str,
        source_node: cst.BaseExpression,
        source: Value,
        call: cst.Call,
        api: str,
        device: cst.BaseExpression | None,
        copy_dst: cst.BaseExpression | None,
        statement: cst.CSTNode,
        loops: tuple[int, ...] = (),
    ) -> None:
        """A host-to-device copy that is non_blocking when the caller passes ``True`` for the
        parameter ``flag`` (kept for the callers that do; a parameter it copies is a parameter
        copy whose flag each call decides, see ``_copies_here``)."""
        if SinkHit not in self.listened:
            return
        self.conditional_copies.append(
            ConditionalCopy(flag, source_node, source, call, api, device, copy_dst, statement, loops)
        )
        self._summary_copies(source, call, api, device, copy_dst, statement)

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
