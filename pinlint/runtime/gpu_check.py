"""pinlint's GPU check: prove the physics on the machine at hand. ``pinlint probe`` runs this file.

    python -m pinlint.runtime.gpu_check [--run pkg.mod:fn] [--json FILE] [--quick]

On a CUDA machine it measures, and checks:

A. host blocking, both halves: after a warm-up (working clocks), the host-side time of
   ``src.to(dev, non_blocking=True)`` / ``dst.copy_(src, non_blocking=True)`` issued behind a ~50 ms
   ``torch.cuda._sleep`` kernel whose real duration is measured with CUDA events, 9 repetitions
   (7 with --quick). Pass: the control (a blocking ``.to``) waits every time; pinned copies return
   at once (median < 20% of the kernel); pageable copies >= 16 MiB block every time (>= 50%).
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

from pinlint.runtime.gpu_verdicts import (
    CONTROL,
    MIN_KERNEL_MS,
    REQUIRED_BLOCKING_BYTES,
    MiB,
    Sample,
    format_sample,
    host_blocking_verdict,
    kinds_verdict,
    run_verdict,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3
_RUN_SPEC_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
#: Target duration of the busy kernel each copy is queued behind; its real duration is measured.
SLEEP_MS = 50.0
REPS, QUICK_REPS = 9, 7
#: Warm-up: keep the GPU busy this long first, so it runs at its working clocks (an idle GPU can run
#: at a fifth of them, which would make "a 50 ms kernel" last 10).
WARMUP_MS = 500.0


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
        raise ValueError(f"{spec} is not callable")  # noqa: TRY004 - a usage error, as the others
    return obj


# -- the GPU parts ------------------------------------------------------------------------------------
def warm_up(torch: Any, ms: float = WARMUP_MS) -> float:
    """Keep the GPU busy for ``ms`` of wall time so it leaves its idle clocks; returns the time."""
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e3 < ms:
        torch.cuda._sleep(5_000_000)
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def _cycles_per_ms(torch: Any) -> float:
    """Calibrated after the warm-up, with sleeps of several milliseconds (events resolve ~0.5 us)."""
    vals = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        end.synchronize()
        vals.append(10_000_000 / start.elapsed_time(end))
    return statistics.median(vals)


def _timed(torch: Any, fn: Callable[[], Any], cycles: int, reps: int) -> Sample:
    """Per repetition: the host time of ``fn()`` issued behind a busy kernel on the same stream,
    and that kernel's real duration (CUDA events around it)."""
    host, kernel = [], []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        host.append(round((t1 - t0) * 1e3, 4))
        kernel.append(round(start.elapsed_time(end), 4))
    return {"host_ms": host, "kernel_ms": kernel}


def _measure_size(
    torch: Any, dev: Any, pageable: Any, pinned: Any, dst: Any, cycles: int, reps: int
) -> dict[str, Sample]:
    return {
        "pageable .to": _timed(torch, lambda: pageable.to(dev, non_blocking=True), cycles, reps),
        "pinned .to": _timed(torch, lambda: pinned.to(dev, non_blocking=True), cycles, reps),
        "pageable copy_": _timed(torch, lambda: dst.copy_(pageable, non_blocking=True), cycles, reps),
        "pinned copy_": _timed(torch, lambda: dst.copy_(pinned, non_blocking=True), cycles, reps),
        CONTROL: _timed(torch, lambda: pageable.to(dev), cycles, reps),
    }


def part_a(torch: Any, dev: Any, cpm: float, sizes: list[int], reps: int) -> dict[str, Any]:
    cycles = int(SLEEP_MS * cpm)
    table: dict[int, dict[str, Sample]] = {}
    for n in sizes:
        pageable = torch.ones(n, dtype=torch.uint8)
        pinned = torch.ones(n, dtype=torch.uint8, pin_memory=True)
        dst = torch.empty(n, dtype=torch.uint8, device=dev)
        for _ in range(2):  # warm-up: caching allocators, context
            pageable.to(dev, non_blocking=True)
            pinned.to(dev, non_blocking=True)
        torch.cuda.synchronize()
        table[n] = _measure_size(torch, dev, pageable, pinned, dst, cycles, reps)
    pin2d = torch.ones(1024, 1024, pin_memory=True)  # 4 MiB, pinned
    strided = {
        "pinned[:, ::2] .to (strided)": _timed(torch, lambda: pin2d[:, ::2].to(dev, non_blocking=True), cycles, reps),
        "pinned.t() .to(half)": _timed(
            torch, lambda: pin2d.t().to(dev, dtype=torch.half, non_blocking=True), cycles, reps
        ),
    }
    return {
        "target_kernel_ms": SLEEP_MS,
        "cycles": cycles,
        "samples": {str(n): row for n, row in table.items()},
        "pinned_strided": strided,
        "verdict": host_blocking_verdict(table),
    }


def labelled_copies(torch: Any, dev: Any) -> list[tuple[str, Callable[[], Any]]]:
    """The copies parts B and C label. The expected memcpy kind of each comes from the watch (C)."""
    n = 4 * MiB
    pageable = torch.ones(n, dtype=torch.uint8)
    pinned = torch.ones(n, dtype=torch.uint8, pin_memory=True)
    dst = torch.empty(n, dtype=torch.uint8, device=dev)
    pin2d = torch.ones(1024, 1024, pin_memory=True)
    row = torch.empty(1, n, dtype=torch.uint8, device=dev)
    wide = torch.empty(4, n // 4, dtype=torch.uint8, device=dev)
    return [
        # Size-1 dimensions only: no broadcast, so the watch expects a direct pinned DMA.
        ("pinned (N,) copy_ into (1, N)", lambda: row.copy_(pinned, non_blocking=True)),
        # A real broadcast: the watch expects a pageable temporary.
        ("pinned row broadcast copy_", lambda: wide.copy_(pinned[: n // 4], non_blocking=True)),
        ("pageable .to(nb)", lambda: pageable.to(dev, non_blocking=True)),
        ("pinned .to(nb)", lambda: pinned.to(dev, non_blocking=True)),
        ("pageable copy_(nb)", lambda: dst.copy_(pageable, non_blocking=True)),
        ("pinned copy_(nb)", lambda: dst.copy_(pinned, non_blocking=True)),
        ("pinned view [8:] .to(nb)", lambda: pinned[8:].to(dev, non_blocking=True)),
        ("pinned[:, ::2] .to(nb)", lambda: pin2d[:, ::2].to(dev, non_blocking=True)),
        ("pinned.t() .to(nb) same dtype", lambda: pin2d.t().to(dev, non_blocking=True)),
        (
            "pinned.t() .to(half, nb)",
            lambda: pin2d.t().to(dev, dtype=torch.half, non_blocking=True),
        ),
        (
            "pinned .to(half, nb) contiguous",
            lambda: pin2d.to(dev, dtype=torch.half, non_blocking=True),
        ),
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
            with watch(simulate=None) as report, record_function(label):
                fn()
            kinds = {"Pinned" if t.kind == "pinned-non-blocking" else "Pageable" for t in report.transfers}
            # Not exactly one transfer: the label cannot be checked; say so instead of aborting.
            predicted[label] = (
                kinds.pop() if len(report.transfers) == 1 else f"<watch saw {len(report.transfers)} transfers>"
            )
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
        with watch(simulate=None) as report, record_function(f"pinlint.probe.run:{spec}"):
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
        "verdict": run_verdict(memcpys, sum(1 for t in report.transfers if not t.non_blocking)),
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
            from pinlint.safeio import write_replacing

            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            # Renamed over the path: a committed symlink there is replaced, not written through.
            write_replacing(args.json, json.dumps(result, indent=1, default=str).encode(), os.getcwd())
        return code

    try:
        import torch
    except ImportError:
        print(
            "pinlint probe: torch is not installed: pip install 'torch-pinlint[runtime]'",
            file=sys.stderr,
        )
        return finish(EXIT_USAGE)
    result.update(torch=torch.__version__, cuda_build=torch.version.cuda)
    if not torch.cuda.is_available():
        result["skipped"] = "no CUDA device"
        print(
            f"pinlint probe: SKIPPED (not passed): no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda})"
        )
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
    reps = QUICK_REPS if args.quick else REPS
    checks: dict[str, bool] = {}
    try:
        result["warmup_ms"] = round(warm_up(torch), 1)
        cpm = _cycles_per_ms(torch)
        result["sleep_cycles_per_ms"] = cpm
        a = part_a(torch, dev, cpm, sizes, reps)
        result["A_host_blocking"] = a
        v = a["verdict"]
        checks[f"busy kernel lasts >= {MIN_KERNEL_MS:g} ms and holds the blocking control"] = (
            v["kernel_long_enough"] and v["control_blocks"]
        )
        checks["pinned non_blocking copies return at once behind a busy stream"] = v["pinned_returns_early"]
        checks[
            f"pageable non_blocking copies >= {REQUIRED_BLOCKING_BYTES // MiB} MiB block until the stream drains"
        ] = v["pageable_blocks"]
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
        a = result["A_host_blocking"]
        for nbytes, row in a["samples"].items():
            for case, sample in row.items():
                print(f"info  {int(nbytes) // 1024} KiB {case}: {format_sample(sample)}")
        for line in a["verdict"]["failures"]:
            print(f"FAIL  {line}")
        if "B_C_memcpy_kinds" in result:
            for m in result["B_C_memcpy_kinds"]["verdict"]["mismatches"]:
                print(f"FAIL  {m['label']}: profiler saw {m['observed']}, watch predicted {m['expected']}")
    if "error" in result:
        print(f"error {result['error']}", file=sys.stderr)
    return finish(EXIT_OK if checks and all(checks.values()) else EXIT_FAILED)


if __name__ == "__main__":
    sys.exit(main())
