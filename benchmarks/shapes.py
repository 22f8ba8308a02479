"""Time and peak memory of pinlint (and ruff, side by side) on generated worst-case shapes.

    python benchmarks/shapes.py [--ruff PATH] [--write [FILE]] [--only SHAPE]

Shapes: a host tensor rebuilt inside N nested loops, N chained pageable copies in one function,
an if/elif chain of N branches, N functions with a copy each, N attributes filled and copied in
one method, N functions handing a tensor to one that copies its parameter, a ring of N
functions calling each other. Each file is checked (``check``) and fixed without
writing (``check --fix --unsafe-fixes --diff``, a pin-memory helper configured so every finding
has a fix), each in a fresh process. The analysis must grow about linearly
(tests/analysis/test_cost.py asserts it in steps and executed lines; this script shows it in seconds
and megabytes) and no file may go past a budget silently: the last column says what was found and
fixed, and what was reported as not analysed.

``--write`` puts the table into the "Shapes" section of docs/performance.md (or FILE), keeping
the file's other sections.
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from report_sections import with_section  # noqa: E402

from tests.analysis.test_cost import (  # noqa: E402
    attribute_copies,
    branches,
    chained_copies,
    many_callers,
    many_functions,
    nested_loops,
    recursion_ring,
)

SHAPES: list[tuple[str, Callable[[int], str], tuple[int, ...]]] = [
    ("nested loops", nested_loops, (6, 12, 18)),
    ("chained copies", chained_copies, (300, 600, 1_000, 10_000)),
    ("if/elif branches", branches, (300, 1_000, 3_000)),
    ("many functions", many_functions, (1_000, 10_000)),
    ("attribute copies", attribute_copies, (1_000, 10_000)),
    ("many callers", many_callers, (100, 1_000)),
    ("recursion ring", recursion_ring, (100, 1_000)),
]

HELPER = 'pin-memory-helper = "mypkg.utils:is_pin_memory_available(device)"'
DEFAULT_REPORT = HERE.parent / "docs" / "performance.md"

_PINLINT = (
    "import resource, sys\n"
    "from pinlint.cli import main\n"
    "sys.argv = ['pinlint', 'check', *sys.argv[1:], '--no-cache', '-v']\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    # A file the parser might crash on is analysed in a child process: its memory counts too.
    "peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
    "sys.stderr.write('\\nMAXRSS %d' % peak)\n"
)


@dataclass
class Run:
    seconds: float
    megabytes: float
    stdout: str
    stderr: str

    def notes(self) -> list[str]:
        """What the run reported as not analysed (warnings and -v notes)."""
        return [
            line.split(": ", 2)[-1]
            for line in self.stderr.splitlines()
            if line.startswith(("warning:", "note:")) and "not analysed" in line
        ]


def _pinlint(path: Path, *args: str) -> Run:
    """One pinlint run in a fresh process: seconds, peak resident megabytes, output."""
    started = time.perf_counter()
    ran = subprocess.run(
        [sys.executable, "-c", _PINLINT, str(path), *args], capture_output=True, text=True, check=False, cwd=path.parent
    )
    seconds = time.perf_counter() - started
    peak = int(ran.stderr.rsplit("MAXRSS ", 1)[-1]) if "MAXRSS " in ran.stderr else 0
    return Run(seconds, peak / 1024, ran.stdout, ran.stderr)


def _ruff(ruff: str, path: Path) -> float | None:
    if not Path(ruff).exists():
        return None
    started = time.perf_counter()
    subprocess.run([ruff, "check", "--select", "E,F", "--no-cache", "-q", str(path)], capture_output=True, check=False)
    return time.perf_counter() - started


def _result(check: Run, fix: Run) -> str:
    """Findings, fixes (and why not, when some have none), and what was reported as not analysed."""
    found = re.search(r"Found (\d+) error", check.stdout)
    fixed = re.search(r"Would fix (\d+) error", fix.stderr + fix.stdout)
    findings, count = int(found.group(1)) if found else 0, int(fixed.group(1)) if fixed else 0
    parts = [f"{findings} findings", f"{count} fixed"]
    if count < findings:
        why = re.search(r"^help: (no automatic fix.*)$", check.stdout, re.M)
        if why:
            parts[-1] += f" ({why.group(1)})"
    notes = check.notes()
    if notes:
        parts.append(f"reported: {notes[0]}" + (f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""))
    return "; ".join(parts)


def measure(ruff: str, only: str | None = None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(f"[tool.pinlint]\n{HELPER}\n")
        for name, generator, sizes in SHAPES:
            if only is not None and only not in name:
                continue
            for size in sizes:
                path = root / f"shape_{size}.py"
                source = generator(size)
                path.write_text(source)
                check = _pinlint(path)
                fix = _pinlint(path, "--fix", "--unsafe-fixes", "--diff")
                row = {
                    "shape": name,
                    "size": size,
                    "lines": source.count("\n"),
                    "check_s": check.seconds,
                    "check_mb": check.megabytes,
                    "fix_s": fix.seconds,
                    "fix_mb": fix.megabytes,
                    "ruff_s": _ruff(ruff, path),
                    "result": _result(check, fix),
                }
                rows.append(row)
                print(_line(row), flush=True)
    return rows


def _line(row: dict[str, object]) -> str:
    ruff = f"{row['ruff_s']:.2f}" if row["ruff_s"] is not None else "-"
    return (
        f"| {row['shape']} | {row['size']:,} | {row['lines']:,} | {row['check_s']:.2f} | {row['check_mb']:.0f} "
        f"| {row['fix_s']:.2f} | {row['fix_mb']:.0f} | {ruff} | {row['result']} |"
    )


def render(rows: list[dict[str, object]]) -> str:
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    lines = [
        "## Shapes",
        "",
        "Generated by `python benchmarks/shapes.py --write` (see its docstring); do not edit by hand. Generated "
        "worst cases (`tests/analysis/test_cost.py` builds them and asserts that the analysis steps, and the lines "
        "of pinlint run by a fix, grow linearly): each file checked (`check`, the full report) and fixed without "
        "writing (`check --fix --unsafe-fixes --diff`, a pin-memory helper configured), each in a fresh process; "
        "ruff `check --select E,F` on the same file for scale. Memory is the peak resident set of the run (of its "
        "largest process: a file the parser might crash on is analysed in a child). The result column says what "
        "was found and fixed, and what the run reported as not analysed (`-v`).",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.python_implementation()} "
        f"{platform.python_version()}, 1-minute load average {load} at the end.",
        "",
        "| shape | size | lines | check s | check MB | fix s | fix MB | ruff s | result |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *(_line(row) for row in rows),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ruff", default=str(HERE / ".tools" / "bin" / "ruff"))
    parser.add_argument("--write", nargs="?", const=DEFAULT_REPORT, type=Path, metavar="FILE")
    parser.add_argument("--only", metavar="SHAPE", help="only the shapes whose name contains SHAPE")
    args = parser.parse_args()
    print("| shape | size | lines | check s | check MB | fix s | fix MB | ruff s | result |")
    rows = measure(args.ruff, args.only)
    if args.write is not None:
        old = args.write.read_text(encoding="utf-8") if args.write.exists() else "# Performance\n"
        args.write.write_text(with_section(old, "## Shapes", render(rows)), encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
