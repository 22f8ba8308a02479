"""pinlint's GPU check: prove the physics on the machine at hand. ``pinlint probe`` runs this file.

    python -m pinlint.runtime.gpu_check [--run pkg.mod:fn] [--json FILE] [--quick]

On a CUDA machine it measures, and checks:

A. host blocking: the host-side time of ``src.to(dev, non_blocking=True)`` / ``dst.copy_(src,
   non_blocking=True)`` issued behind a ~50 ms ``torch.cuda._sleep`` kernel on the same stream,
   pageable vs pinned, for a few sizes (a blocking ``.to(dev)`` is the control that shows the
   sleep works). Expected: pinned returns at once; pageable may block (driver- and size-dependent).
B. memcpy kinds: each labelled copy under torch.profiler; Kineto names the DMA
   "Memcpy HtoD (Pageable -> Device)" or "(Pinned -> Device)". Includes pinned-but-strided copies.
C. the runtime companion (``watch``, real mode) over the same labelled copies: its verdict for each
   label must agree with the profiler's memcpy kind (this checks ``layout.py``'s model).
D. ``--run pkg.mod:fn``: calls ``fn()`` under the profiler and checks that every H2D memcpy in it is
   Pinned (zero H2D memcpys is a failure, not a pass), listing the watch's call sites.

Exit status: 0 all checks hold; 1 a check failed; 2 usage error (bad --run, no torch);
3 skipped because there is no CUDA device (never a pass).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
_RUN_SPEC_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
SLEEP_MS = 50.0
MiB = 1 << 20
#: A non_blocking copy that holds the host longer than this share of the queued kernel blocked.
BLOCKED_FRACTION = 0.5
#: A pinned non_blocking copy must return within this share of the queued kernel.
PINNED_FAST_FRACTION = 0.2


def resolve_run_spec(spec: str) -> Callable[[], Any]:
    """``"pkg.mod:fn"`` (``fn`` may be dotted: ``Class.method``) -> the callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--run expects 'pkg.module:function', got {spec!r}")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: the current project is importable
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{spec} is not callable")
    return obj


# -- verdicts (pure: unit-tested on CPU with made-up numbers) -------------------------------------
def host_blocking_verdict(table: dict[str, dict[str, float]], sleep_ms: float) -> dict[str, Any]:
    """``table[size][case] = host ms`` -> checks. Cases: "pinned .to", "pinned copy_",
    "pageable .to", "pageable copy_", "pageable .to blocking (control)"."""
    controls = [row["pageable .to blocking (control)"] for row in table.values() if "pageable .to blocking (control)" in row]
    sleep_effective = bool(controls) and min(controls) >= BLOCKED_FRACTION * sleep_ms
    slow_pinned = sorted(
        f"{size} {case}: {ms:.3f} ms"
        for size, row in table.items()
        for case, ms in row.items()
        if case.startswith("pinned") and ms >= PINNED_FAST_FRACTION * sleep_ms
    )
    blocked_pageable = sorted(
        f"{size} {case}"
        for size, row in table.items()
        for case, ms in row.items()
        if case in ("pageable .to", "pageable copy_") and ms >= BLOCKED_FRACTION * sleep_ms
    )
    return {
        "sleep_effective": sleep_effective,
        "pinned_returns_early": sleep_effective and not slow_pinned,
        "slow_pinned": slow_pinned,
        "pageable_blocked": blocked_pageable,
        # Reported, not required: small pageable copies may be staged without blocking.
        "pageable_blocks_somewhere": bool(blocked_pageable),
    }


def kinds_verdict(observed: dict[str, list[str]], expected: dict[str, str]) -> dict[str, Any]:
    """``observed[label]`` = memcpy source kinds; ``expected[label]`` = "Pinned" or "Pageable"."""
    mismatches = []
    for label, want in expected.items():
        got = observed.get(label, [])
        if not got or any(k != want for k in got):
            mismatches.append({"label": label, "expected": want, "observed": got})
    return {"ok": not mismatches, "mismatches": mismatches}


def run_verdict(memcpys: list[dict[str, Any]]) -> dict[str, Any]:
    pageable = [m for m in memcpys if not m.get("pinned")]
    if not memcpys:
        return {"ok": False, "reason": "no H2D memcpy observed in the function: nothing was proven", "pageable": []}
    return {"ok": not pageable, "reason": f"{len(pageable)} of {len(memcpys)} H2D memcpy(s) from non-pinned memory", "pageable": pageable}


# -- the GPU parts ------------------------------------------------------------------------------------
def _cycles_per_ms(torch: Any) -> float:
    vals = []
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        torch.cuda._sleep(1_000_000)
        end.record()
        end.synchronize()
        vals.append(1_000_000 / start.elapsed_time(end))
    return statistics.median(vals)


def _host_ms(torch: Any, fn: Callable[[], Any], cycles: int, reps: int) -> float:
    """Host-side duration of ``fn()`` issued behind a queued sleep kernel on the same stream."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        torch.cuda._sleep(cycles)
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append((t1 - t0) * 1e3)
    return round(statistics.median(times), 3)


def part_a(torch: Any, dev: Any, cpm: float, sizes: list[int], reps: int) -> dict[str, Any]:
    cycles = int(SLEEP_MS * cpm)
    table: dict[str, dict[str, float]] = {}
    for n in sizes:
        pageable = torch.ones(n, dtype=torch.uint8)
        pinned = torch.ones(n, dtype=torch.uint8, pin_memory=True)
        dst = torch.empty(n, dtype=torch.uint8, device=dev)
        for _ in range(2):  # warm-up: caching allocators, context
            pageable.to(dev, non_blocking=True)
            pinned.to(dev, non_blocking=True)
        torch.cuda.synchronize()
        table[f"{n // 1024}KiB"] = {
            "pageable .to": _host_ms(torch, lambda: pageable.to(dev, non_blocking=True), cycles, reps),
            "pinned .to": _host_ms(torch, lambda: pinned.to(dev, non_blocking=True), cycles, reps),
            "pageable copy_": _host_ms(torch, lambda: dst.copy_(pageable, non_blocking=True), cycles, reps),
            "pinned copy_": _host_ms(torch, lambda: dst.copy_(pinned, non_blocking=True), cycles, reps),
            "pageable .to blocking (control)": _host_ms(torch, lambda: pageable.to(dev), cycles, reps),
        }
    pin2d = torch.ones(1024, 1024, pin_memory=True)  # 4 MiB, pinned
    strided = {
        "pinned[:, ::2] .to (strided)": _host_ms(torch, lambda: pin2d[:, ::2].to(dev, non_blocking=True), cycles, reps),
        "pinned.t() .to(half)": _host_ms(torch, lambda: pin2d.t().to(dev, dtype=torch.half, non_blocking=True), cycles, reps),
    }
    return {"sleep_ms": SLEEP_MS, "host_ms": table, "pinned_strided_host_ms": strided, "verdict": host_blocking_verdict(table, SLEEP_MS)}


def labelled_copies(torch: Any, dev: Any) -> list[tuple[str, Callable[[], Any]]]:
    """The copies parts B and C label. The expected memcpy kind of each comes from the watch (C)."""
    n = 4 * MiB
    pageable = torch.ones(n, dtype=torch.uint8)
    pinned = torch.ones(n, dtype=torch.uint8, pin_memory=True)
    dst = torch.empty(n, dtype=torch.uint8, device=dev)
    pin2d = torch.ones(1024, 1024, pin_memory=True)
    return [
        ("pageable .to(nb)", lambda: pageable.to(dev, non_blocking=True)),
        ("pinned .to(nb)", lambda: pinned.to(dev, non_blocking=True)),
        ("pageable copy_(nb)", lambda: dst.copy_(pageable, non_blocking=True)),
        ("pinned copy_(nb)", lambda: dst.copy_(pinned, non_blocking=True)),
        ("pinned view [8:] .to(nb)", lambda: pinned[8:].to(dev, non_blocking=True)),
        ("pinned[:, ::2] .to(nb)", lambda: pin2d[:, ::2].to(dev, non_blocking=True)),
        ("pinned.t() .to(nb) same dtype", lambda: pin2d.t().to(dev, non_blocking=True)),
        ("pinned.t() .to(half, nb)", lambda: pin2d.t().to(dev, dtype=torch.half, non_blocking=True)),
        ("pinned .to(half, nb) contiguous", lambda: pin2d.to(dev, dtype=torch.half, non_blocking=True)),
    ]


def parts_b_c(torch: Any, dev: Any, trace_path: str) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile, record_function

    from pinlint.runtime import kineto
    from pinlint.runtime.watch import watch

    copies = labelled_copies(torch, dev)
    for _label, fn in copies:  # warm-up outside the profile
        fn()
    torch.cuda.synchronize()
    predicted: dict[str, str] = {}
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for label, fn in copies:
            with watch(simulate=None) as report:
                with record_function(label):
                    fn()
            [transfer] = report.transfers
            predicted[label] = "Pinned" if transfer.kind == "pinned-non-blocking" else "Pageable"
        torch.cuda.synchronize()
    prof.export_chrome_trace(trace_path)
    memcpys = kineto.classify(trace_path)
    observed = kineto.by_annotation(memcpys)
    return {
        "trace": trace_path,
        "memcpys": [m.to_dict() for m in memcpys],
        "observed": observed,
        "predicted_by_watch": predicted,
        "verdict": kinds_verdict(observed, predicted),
    }


def part_d(torch: Any, fn: Callable[[], Any], spec: str, trace_path: str) -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile, record_function

    from pinlint.runtime import kineto
    from pinlint.runtime.watch import watch

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with watch(simulate=None) as report:
            with record_function(f"pinlint.probe.run:{spec}"):
                fn()
        torch.cuda.synchronize()
    prof.export_chrome_trace(trace_path)
    memcpys = [m.to_dict() for m in kineto.classify(trace_path)]
    return {
        "spec": spec,
        "trace": trace_path,
        "memcpys": memcpys,
        "watch_violations": [str(v) for v, _n in report.grouped()],
        "watch_transfers": report.total,
        "verdict": run_verdict(memcpys),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pinlint probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", metavar="pkg.mod:fn", help="check that every H2D memcpy of fn() is Pinned")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (the chrome trace goes beside it)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else EXIT_OK
    result: dict[str, Any] = {"pinlint_probe": 1}
    if args.run and not _RUN_SPEC_RE.match(args.run):
        print(f"pinlint probe: --run expects 'pkg.module:function', got {args.run!r}", file=sys.stderr)
        return EXIT_USAGE

    def finish(code: int) -> int:
        result["exit_status"] = code
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=1, default=str)
        return code

    try:
        import torch
    except ImportError:
        print("pinlint probe: torch is not installed: pip install 'torch-pinlint[runtime]'", file=sys.stderr)
        return finish(EXIT_USAGE)
    result.update(torch=torch.__version__, cuda_build=torch.version.cuda)
    if not torch.cuda.is_available():
        result["skipped"] = "no CUDA device"
        print(f"pinlint probe: SKIPPED (not passed): no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda})")
        return finish(EXIT_SKIPPED)
    run_fn = None
    if args.run:
        try:
            run_fn = resolve_run_spec(args.run)
        except (ValueError, ImportError, AttributeError) as exc:
            print(f"pinlint probe: --run {args.run}: {exc}", file=sys.stderr)
            return finish(EXIT_USAGE)

    dev = torch.device("cuda", torch.cuda.current_device())
    result["gpu"] = torch.cuda.get_device_name(dev)
    out_dir = os.path.dirname(os.path.abspath(args.json)) if args.json else tempfile.mkdtemp(prefix="pinlint-probe-")
    stem = os.path.splitext(os.path.basename(args.json))[0] if args.json else "probe"
    sizes = [64 << 10, 16 * MiB] if args.quick else [64 << 10, 1 * MiB, 16 * MiB, 64 * MiB]
    reps = 2 if args.quick else 3
    checks: dict[str, bool] = {}
    try:
        cpm = _cycles_per_ms(torch)
        result["sleep_cycles_per_ms"] = cpm
        a = part_a(torch, dev, cpm, sizes, reps)
        result["A_host_blocking"] = a
        checks["sleep kernel holds the blocking control"] = a["verdict"]["sleep_effective"]
        checks["pinned non_blocking copies return before the queued kernel ends"] = a["verdict"]["pinned_returns_early"]
        bc = parts_b_c(torch, dev, os.path.join(out_dir, f"{stem}.labelled.trace.json"))
        result["B_C_memcpy_kinds"] = bc
        checks["profiler memcpy kinds agree with the watch's verdicts"] = bc["verdict"]["ok"]
        if run_fn is not None:
            d = part_d(torch, run_fn, args.run, os.path.join(out_dir, f"{stem}.run.trace.json"))
            result["D_run"] = d
            checks[f"every H2D memcpy in {args.run} is Pinned"] = d["verdict"]["ok"]
    except Exception as exc:  # noqa: BLE001 - report, never pass
        result["error"] = f"{type(exc).__name__}: {exc}"
        checks["probe ran to completion"] = False
    result["checks"] = checks
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if "A_host_blocking" in result:
        v = result["A_host_blocking"]["verdict"]
        note = ", ".join(v["pageable_blocked"]) if v["pageable_blocked"] else "none (the driver staged them without blocking here)"
        print(f"info  pageable non_blocking copies that blocked the host: {note}")
    if "error" in result:
        print(f"error {result['error']}", file=sys.stderr)
    return finish(EXIT_OK if checks and all(checks.values()) else EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(main())
