"""Time and peak memory of pinlint (and ruff, side by side) on generated worst-case shapes.

    python benchmarks/shapes.py [--ruff PATH]

Shapes: a host tensor rebuilt inside N nested loops, N chained pageable copies in one function,
an if/elif chain of N branches. The analysis must grow about linearly (tests/analysis/test_cost.py
asserts it in steps; this script shows it in seconds and megabytes).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.analysis.test_cost import branches, chained_copies, nested_loops  # noqa: E402

SHAPES = [
    ("nested loops", nested_loops, (6, 12, 18)),
    ("chained copies", chained_copies, (1_000, 5_000, 10_000)),
    ("if/elif branches", branches, (1_000, 3_000)),
]


_PINLINT = (
    "import resource, sys\n"
    "from pinlint.cli import main\n"
    "sys.argv = ['pinlint', 'check', sys.argv[1], '--no-cache', '-q']\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('\\nMAXRSS %d' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def _pinlint(path: Path) -> tuple[float, float]:
    """Seconds and peak resident megabytes of one pinlint run (a fresh process)."""
    started = time.perf_counter()
    ran = subprocess.run([sys.executable, "-c", _PINLINT, str(path)], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    peak = int(ran.stderr.rsplit("MAXRSS ", 1)[-1]) if "MAXRSS " in ran.stderr else 0
    return seconds, peak / 1024


def _ruff(ruff: str, path: Path) -> float:
    started = time.perf_counter()
    subprocess.run([ruff, "check", "--select", "E,F", "--no-cache", "-q", str(path)], capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ruff", default=str(Path(__file__).parent / ".tools" / "bin" / "ruff"))
    args = parser.parse_args()
    print(f"{'shape':<18} {'size':>7} {'pinlint s':>10} {'pinlint MB':>11} {'ruff s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text("[tool.pinlint]\n")
        for name, generator, sizes in SHAPES:
            for size in sizes:
                path = root / f"shape_{size}.py"
                path.write_text(generator(size))
                seconds, megabytes = _pinlint(path)
                ruff = _ruff(args.ruff, path)
                print(f"{name:<18} {size:>7} {seconds:>10.2f} {megabytes:>11.0f} {ruff:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
