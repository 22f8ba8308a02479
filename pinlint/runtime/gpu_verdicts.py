"""The verdicts of pinlint's GPU check (``gpu_check.py``): what its measurements must show, as
pure functions of the numbers, with the thresholds they apply. Unit-tested on CPU with made-up
numbers; the measuring itself needs a CUDA device."""

from __future__ import annotations

import statistics
from typing import Any

MiB = 1 << 20
#: The busy kernel must really last this long (else clocks or calibration are off: FAIL).
MIN_KERNEL_MS = 20.0
#: The blocking control must hold the host for this share of the kernel, in every repetition.
CONTROL_FRACTION = 0.8
#: A pageable non_blocking copy "blocks" when it holds the host for this share of the kernel, in
#: every repetition (the minimum): noise only adds time, so it cannot fake a block 7 times in a row.
BLOCKED_FRACTION = 0.5
#: A pinned non_blocking copy "returns at once" when its median is under this share of the kernel
#: (about 0.01 ms expected against 50 ms: noise can only make it fail, never pass).
PINNED_FAST_FRACTION = 0.2
#: Pageable copies must block from this size up; smaller ones are reported only (a driver may stage
#: them through its own buffer without waiting).
REQUIRED_BLOCKING_BYTES = 16 * MiB
PAGEABLE_CASES = ("pageable .to", "pageable copy_")
PINNED_CASES = ("pinned .to", "pinned copy_")
CONTROL = "pageable .to blocking (control)"


# -- verdicts (pure: unit-tested on CPU with made-up numbers) -------------------------------------
Sample = dict[str, list[float]]  # {"host_ms": [...], "kernel_ms": [...]}, one entry per repetition


def _ratios(sample: Sample) -> list[float]:
    return [h / k if k > 0 else float("inf") for h, k in zip(sample["host_ms"], sample["kernel_ms"])]


def format_sample(sample: Sample) -> str:
    """A sample's host times and kernel, for a failure line."""
    h, k = sample["host_ms"], sample["kernel_ms"]
    return (
        f"host min/median/max {min(h):.3f}/{statistics.median(h):.3f}/{max(h):.3f} ms "
        f"behind a {statistics.median(k):.1f} ms kernel ({len(h)} reps)"
    )


def host_blocking_verdict(
    table: dict[int, dict[str, Sample]], required_bytes: int = REQUIRED_BLOCKING_BYTES
) -> dict[str, Any]:
    """``table[nbytes][case]`` = per-repetition host and kernel times -> both halves of the claim.

    Pass needs all four: the busy kernel really lasted >= MIN_KERNEL_MS; the blocking control held
    the host for most of it every time; pinned copies returned at once; pageable copies of at least
    ``required_bytes`` blocked every time. Each failure is a line with its numbers.
    """
    failures: list[str] = []
    kernels = [k for row in table.values() for sample in row.values() for k in sample["kernel_ms"]]
    kernel_ok = bool(kernels) and min(kernels) >= MIN_KERNEL_MS
    if not kernel_ok:
        failures.append(f"busy kernel too short: min {min(kernels, default=0.0):.2f} ms < {MIN_KERNEL_MS} ms")
    control_ok, pinned_ok = bool(table), True
    blocked, not_blocked = [], []
    for nbytes, row in sorted(table.items()):
        size = f"{nbytes // 1024}KiB" if nbytes < MiB else f"{nbytes // MiB}MiB"
        control = row.get(CONTROL)
        if control is None or min(_ratios(control)) < CONTROL_FRACTION:
            control_ok = False
            failures.append(
                f"{size} blocking control did not wait for the kernel: {format_sample(control) if control else 'missing'}"
            )
        for case in PINNED_CASES:
            if case in row and statistics.median(_ratios(row[case])) > PINNED_FAST_FRACTION:
                pinned_ok = False
                failures.append(f"{size} {case} did not return at once: {format_sample(row[case])}")
        for case in PAGEABLE_CASES:
            if case not in row:
                continue
            if min(_ratios(row[case])) >= BLOCKED_FRACTION:
                blocked.append(f"{size} {case}")
            else:
                not_blocked.append(f"{size} {case}")
                if nbytes >= required_bytes:
                    failures.append(f"{size} {case} did not block until the stream drained: {format_sample(row[case])}")
    required = [n for n in table if n >= required_bytes]
    pageable_ok = bool(required) and all(
        min(_ratios(table[n][case])) >= BLOCKED_FRACTION
        for n in required
        for case in PAGEABLE_CASES
        if case in table[n]
    )
    if not required:
        failures.append(f"no size >= {required_bytes // MiB} MiB measured: the pageable half is unproven")
    valid = kernel_ok and control_ok
    return {
        "kernel_long_enough": kernel_ok,
        "control_blocks": control_ok,
        "pinned_returns_early": valid and pinned_ok,
        "pageable_blocks": valid and pageable_ok,
        "pageable_blocked": blocked,
        "pageable_not_blocked": not_blocked,
        "failures": failures,
    }


def kinds_verdict(observed: dict[str, list[str]], expected: dict[str, str]) -> dict[str, Any]:
    """``observed[label]`` = memcpy source kinds; ``expected[label]`` = "Pinned" or "Pageable"."""
    mismatches = []
    for label, want in expected.items():
        got = observed.get(label, [])
        if not got or any(k != want for k in got):
            mismatches.append({"label": label, "expected": want, "observed": got})
    return {"ok": not mismatches, "mismatches": mismatches}


def run_verdict(memcpys: list[dict[str, Any]], blocking_transfers: int = 0) -> dict[str, Any]:
    """Every H2D memcpy must be Pinned, except as many as the watch saw *blocking* copies (those
    read pageable memory by request and are never findings). Zero memcpys is a failure."""
    pageable = [m for m in memcpys if not m.get("pinned")]
    if not memcpys:
        return {
            "ok": False,
            "reason": "no H2D memcpy observed in the function: nothing was proven",
            "pageable": [],
        }
    ok = len(pageable) <= blocking_transfers
    reason = f"{len(pageable)} of {len(memcpys)} H2D memcpy(s) from non-pinned memory ({blocking_transfers} blocking copies allowed)"
    return {"ok": ok, "reason": reason, "pageable": pageable}
