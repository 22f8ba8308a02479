"""Overhead of pinlint.runtime.watch per intercepted torch call (a benchmark, not a test).

    python benchmarks/runtime_overhead.py [--reps 11] [--n 2000] [--json FILE]

Measures, with tiny CPU tensors (so torch's own work is small and the overhead shows; the worst
case per call):

* small ops: torch calls the watch does not handle (``x + 1``, a dtype cast, ``sum``), bare, under a
  real-mode watch (the TorchFunctionMode dispatch plus one dict lookup) and under
  ``simulate="fake"`` (where FakeTensorMode also runs every op on fake tensors);
* factory: ``torch.zeros`` under a watch records a birth site (frame walk + weak storage ref), in
  real and simulated mode;
* real-mode bookkeeping: ``Session._record`` on a real CPU tensor, what a GPU run adds per
  H2D copy on top of the passthrough (the copy itself cannot run here);
* recorded transfer: a ``.to(device, non_blocking=True)`` H2D copy that the watch parses,
  classifies and appends to the report. Measured under ``simulate="fake"`` (no GPU needed), the
  simulated copy itself is subtracted by timing the same FakeTensor ``aten._to_copy`` without
  the watch's bookkeeping.

Numbers are the fastest of ``--reps`` runs of ``--n`` iterations, in microseconds per call.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from pinlint.runtime import watch


def per_call_us(
    body: Callable[[int], None],
    ctx: Callable[[], contextlib.AbstractContextManager[object]],
    n: int,
    calls: int,
    reps: int,
) -> float:
    times = []
    for _ in range(reps):
        with ctx():
            t0 = time.perf_counter()
            body(n)
            times.append(time.perf_counter() - t0)
    return min(times) / (n * calls) * 1e6  # min: the least disturbed run (2 shared cores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    torch.set_num_threads(1)
    n, reps = args.n, args.reps
    x = torch.ones(8)

    def passthrough(k: int) -> None:
        for _ in range(k):
            y = x + 1
            z = y.to(torch.float64)
            z.sum()

    def factories(k: int) -> None:
        for _ in range(k):
            torch.zeros(8)

    def h2d(k: int) -> None:
        # Created inside the block, as hot paths do: a FakeTensor. Deliberately pageable: the
        # benchmark times the watch catching this very copy, so pinlint's finding is suppressed.
        src = torch.ones(8)  # noqa: PIN001
        for _ in range(k):
            src.to("cuda", non_blocking=True)

    from torch._subclasses.fake_tensor import FakeTensorMode

    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    cuda0 = torch.device("cuda", 0)

    def h2d_bare(k: int) -> None:  # the simulated copy alone, without the watch
        src = torch.ones(8)
        for _ in range(k):
            torch.ops.aten._to_copy.default(src, device=cuda0, non_blocking=True)

    for _ in range(2):  # warm-up
        passthrough(200)
        with watch():
            passthrough(200)
        with watch(simulate="fake"):
            h2d(200)

    results: dict[str, float] = {}

    def fake_watch():  # type: ignore[no-untyped-def]
        return watch(simulate="fake", max_records=10 * n)

    # Real mode (what a GPU run pays) and simulated mode side by side, on the same small ops.
    base = per_call_us(passthrough, contextlib.nullcontext, n, 3, reps)
    results["small op: bare (us)"] = base
    results["small op: watch() (us)"] = per_call_us(passthrough, watch, n, 3, reps)
    results["small op: watch(simulate='fake') (us)"] = per_call_us(passthrough, fake_watch, n, 3, reps)
    f_base = per_call_us(factories, contextlib.nullcontext, n, 1, reps)
    results["factory: bare (us)"] = f_base
    results["factory: watch(), birth recorded (us)"] = per_call_us(factories, watch, n, 1, reps)
    results["factory: watch(simulate='fake'), birth recorded (us)"] = per_call_us(factories, fake_watch, n, 1, reps)
    bare = per_call_us(h2d_bare, lambda: fake_mode, n, 1, reps)
    recorded = per_call_us(h2d, fake_watch, n, 1, reps)
    results["simulated H2D copy alone (us)"] = bare
    results["recorded H2D transfer under watch(simulate='fake') (us)"] = recorded
    results["recorded transfer overhead, simulated (us)"] = recorded - bare

    # Real mode per transfer: the watch's bookkeeping for one H2D copy (Session._record on a real
    # CPU source). Measured directly because the copy itself cannot run on a CPU-only build.
    from pinlint.runtime._engine import Session
    from pinlint.runtime.model import Report

    real_src = torch.ones(8)
    target = torch.device("cuda", 0)

    def record_real(k: int) -> None:
        session = Session(Report(max_records=10 * k), strict=False, simulation=None)
        for _ in range(k):
            session._record("Tensor.to", real_src, target, True, same_dtype=True)

    results["real-mode bookkeeping per recorded transfer (us)"] = per_call_us(
        record_real, contextlib.nullcontext, n, 1, reps
    )
    results["small op: real-mode slowdown (x)"] = results["small op: watch() (us)"] / base
    results["small op: simulated slowdown (x)"] = results["small op: watch(simulate='fake') (us)"] / base
    results["factory: real-mode slowdown (x)"] = results["factory: watch(), birth recorded (us)"] / f_base
    results["factory: simulated slowdown (x)"] = (
        results["factory: watch(simulate='fake'), birth recorded (us)"] / f_base
    )

    meta = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpus": __import__("os").cpu_count(),
        "n": n,
        "reps": reps,
    }
    print(
        f"pinlint.runtime overhead  (python {meta['python']}, torch {meta['torch']}, {meta['cpus']} CPUs, best of {reps} x {n})"
    )
    for name, value in results.items():
        print(f"  {name:58s} {value:8.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "results_us": results}, indent=1))


if __name__ == "__main__":
    main()
