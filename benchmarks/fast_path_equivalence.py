"""PIN003's ast fast path against the full analysis, and `--select PIN` against ruff, on corpora.

    python benchmarks/fast_path_equivalence.py [DIR ...]   (default: the bench set in .corpus/)

Runs `pinlint check --select PIN --no-cache` with the fast path and with
``PINLINT_SLOW_CONSTRUCTIONS=1`` (every function through libcst and the interpreter): the JSON
findings must be identical (exit status 1 otherwise). Prints cold wall times beside
`ruff check --select E,F --no-cache` and the ratio to ruff (the target is 1.5x).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = [HERE / ".corpus" / "sglang-0.5.23", HERE / ".corpus" / "vllm-0.33.0"]


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - started, out.stdout


def main(argv: list[str]) -> int:
    dirs = [str(Path(d)) for d in argv] or [str(d) for d in DEFAULT]
    pinlint = [sys.executable, "-m", "pinlint", "check", "--no-cache", "--select", "PIN"]
    pinlint += ["--output-format", "json", "--exit-zero", *dirs]
    ruff = shutil.which("ruff") or str(HERE / ".tools" / "bin" / "ruff")
    ruff_cmd = [ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "-q", *dirs]
    times: dict[str, list[float]] = {"ruff": [], "fast": []}
    fast_out = ""
    for _ in range(3):  # interleaved rounds: medians survive a noisy machine
        times["ruff"].append(_run(ruff_cmd)[0])
        seconds, fast_out = _run(pinlint)
        times["fast"].append(seconds)
    slow_seconds, slow_out = _run(pinlint, env={**os.environ, "PINLINT_SLOW_CONSTRUCTIONS": "1"})
    fast, slow = json.loads(fast_out), json.loads(slow_out)
    key = lambda d: json.dumps(d, sort_keys=True)  # noqa: E731
    same = sorted(map(key, fast)) == sorted(map(key, slow))
    med = {name: sorted(values)[1] for name, values in times.items()}
    print(f"findings: {dict(Counter(d['code'] for d in fast))}; fast path identical to full analysis: {same}")
    print(
        f"ruff E,F {med['ruff']:.2f} s; pinlint --select PIN {med['fast']:.2f} s "
        f"({med['fast'] / med['ruff']:.2f}x ruff, target 1.5x); full analysis {slow_seconds:.2f} s"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
