"""Classify the host-to-device memcpys of a torch.profiler (Kineto) chrome trace by source memory.

Kineto names GPU memcpy activities ``"Memcpy {HtoD|DtoH|...} ({src} -> {dst})"`` with the memory
kinds of ``libkineto/src/cupti_strings.cpp`` ("Pageable", "Pinned", "Device", ...). Early Kineto
spelled it "Pagable" and used the categories "Memcpy"/"Runtime" instead of
"gpu_memcpy"/"cuda_runtime"; both are accepted. Each memcpy carries ``args.correlation``, which
matches the CPU-side ``cudaMemcpyAsync`` runtime event; that event falls inside the enclosing
``record_function`` range (category ``user_annotation``) on the same thread.

No torch import: the probe uses it on a GPU, and tests feed it synthetic traces on CPU.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEMCPY_RE = re.compile(r"^Memcpy (?P<kind>\w+) \((?P<src>[\w ]+?) -> (?P<dst>[\w ]+?)\)$")
#: Old Kineto builds wrote "Pagable".
_SPELLINGS = {"Pagable": "Pageable"}
_RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "Runtime", "cuda_driver"})
_ANNOTATION_CATEGORIES = frozenset({"user_annotation"})


@dataclass(frozen=True)
class Memcpy:
    name: str  #: the activity name as written in the trace
    kind: str  #: "HtoD", "DtoH", "DtoD", ...
    src: str  #: normalised memory kind: "Pageable", "Pinned", "Device", ...
    dst: str
    nbytes: int | None
    gpu_dur_us: float | None
    correlation: int | None
    runtime_call: str | None  #: the CPU runtime call, e.g. "cudaMemcpyAsync"
    host_call_dur_us: float | None  #: how long that call held the host thread
    annotation: str | None  #: innermost record_function label around the runtime call

    @property
    def pinned(self) -> bool:
        return self.src == "Pinned"

    @property
    def pageable(self) -> bool:
        return self.src == "Pageable"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.nbytes,
            "gpu_dur_us": self.gpu_dur_us,
            "correlation": self.correlation,
            "runtime_call": self.runtime_call,
            "host_call_dur_us": self.host_call_dur_us,
            "annotation": self.annotation,
            "pinned": self.pinned,
        }


def parse_memcpy_name(name: str) -> tuple[str, str, str] | None:
    """``"Memcpy HtoD (Pageable -> Device)"`` -> ``("HtoD", "Pageable", "Device")``."""
    m = MEMCPY_RE.match(name)
    if m is None:
        return None
    return m["kind"], _SPELLINGS.get(m["src"], m["src"]), _SPELLINGS.get(m["dst"], m["dst"])


def load_trace(trace: dict[str, Any] | str | Path) -> dict[str, Any]:
    if isinstance(trace, dict):
        return trace
    with open(trace, encoding="utf-8") as fh:
        data = json.load(fh)
    if isinstance(data, list):  # the bare-array chrome trace form
        return {"traceEvents": data}
    return data


def classify(trace: dict[str, Any] | str | Path, kind: str | None = "HtoD") -> list[Memcpy]:
    """Every memcpy of ``kind`` (all kinds when None), in trace order, linked to its runtime call and
    innermost annotation."""
    events = [e for e in load_trace(trace).get("traceEvents", []) if e.get("ph") == "X"]
    runtime: dict[Any, dict[str, Any]] = {}
    annotations: list[dict[str, Any]] = []
    for e in events:
        cat = e.get("cat", "")
        args = e.get("args") or {}
        if cat in _RUNTIME_CATEGORIES and "correlation" in args:
            runtime[args["correlation"]] = e
        elif cat in _ANNOTATION_CATEGORIES:
            annotations.append(e)
    out: list[Memcpy] = []
    for e in events:
        parsed = parse_memcpy_name(str(e.get("name", "")))
        if parsed is None or (kind is not None and parsed[0] != kind):
            continue
        args = e.get("args") or {}
        corr = args.get("correlation")
        rt = runtime.get(corr) if corr is not None else None
        out.append(
            Memcpy(
                name=str(e["name"]),
                kind=parsed[0],
                src=parsed[1],
                dst=parsed[2],
                nbytes=args.get("bytes"),
                gpu_dur_us=e.get("dur"),
                correlation=corr,
                runtime_call=rt.get("name") if rt else None,
                host_call_dur_us=rt.get("dur") if rt else None,
                annotation=_innermost(annotations, rt) if rt else None,
            )
        )
    return out


def _innermost(annotations: list[dict[str, Any]], rt: dict[str, Any]) -> str | None:
    best: dict[str, Any] | None = None
    ts = rt.get("ts", 0)
    for a in annotations:
        if a.get("tid") != rt.get("tid") or a.get("pid") != rt.get("pid"):
            continue
        start = a.get("ts", 0)
        if start <= ts <= start + a.get("dur", 0) and (best is None or a.get("dur", 0) < best.get("dur", 0)):
            best = a
    return str(best["name"]) if best is not None else None


def by_annotation(memcpys: list[Memcpy]) -> dict[str, list[str]]:
    """label -> the source memory kinds of its memcpys, in order."""
    out: dict[str, list[str]] = {}
    for m in memcpys:
        out.setdefault(m.annotation or "<none>", []).append(m.src)
    return out
