"""``python -m tests.fixsafety.run [--filter KIND] [--verbose]``: print the harness's table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.fixsafety import harness


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fixsafety.run", description=__doc__)
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KIND_OR_ID",
        help="Only programs of this kind, or whose id contains this (repeatable).",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="Show every diff and detail.")
    parser.add_argument("--failing", action="store_true", help="Only list failing programs.")
    parser.add_argument(
        "--subprocess",
        action="store_true",
        help="Run `python -m pinlint` in a subprocess instead of click's runner.",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="Keep the before/after project copies in this (new) directory.",
    )
    parser.add_argument("-j", "--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    programs = [
        p for p in harness.all_programs() if not args.filter or any(f == p.kind or f in p.id for f in args.filter)
    ]
    outcomes, seconds = harness.timed_run(
        programs=programs, workers=args.jobs, use_subprocess=args.subprocess, keep=args.keep
    )
    shown = [o for o in outcomes if o.failed] if args.failing else outcomes
    print(harness.table(shown, verbose=args.verbose))
    print()
    print(harness.summary(outcomes, seconds))
    return 1 if any(o.failed for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
