"""What ``pinlint check`` prints once a run is done (problems, the report or the diffs, the
summary, the fixes, timings), and the exit code that follows from it."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pinlint.app.options import CheckOptions
from pinlint.app.run_result import CheckRun
from pinlint.report import render
from pinlint.report.human import display_path, summary
from pinlint.safeio import printable

if TYPE_CHECKING:
    from pinlint.app.request import CheckRequest

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
MACHINE_FORMATS = ("json", "json-lines", "github", "sarif", "gitlab", "junit")


@dataclass
class OutputArgs:
    """The options of `pinlint check` that decide what is printed, and the flows that replace
    the report (--add-noqa, --write-baseline); the others make the ``CheckRequest``."""

    output_format: str | None = None
    output_file: str | None = None
    statistics: bool = False
    show_fixes: bool = False
    exit_zero: bool = False
    exit_non_zero_on_fix: bool = False
    add_noqa: bool = False
    baseline_file: str | None = None
    write_baseline_file: str | None = None
    timings: bool = False
    quiet: bool = False
    silent: bool = False
    color: str = "auto"
    show_settings: bool = False
    show_files: bool = False
    started: float = field(default_factory=time.perf_counter)


def error(message: str) -> None:
    # Messages quote file names and config keys from the repository: no control characters
    # (terminal escapes, or a line break that starts a forged CI workflow command).
    click.echo(f"pinlint: error: {printable(message)}", err=True)


def _problems(run: CheckRun, root: Path, verbose: bool) -> None:
    """On stderr: files not checked or not written, skipped, over budget (-v), fixes dropped."""
    for path, message in run.errors:
        click.echo(printable(f"error: {display_path(path, root)}: {message}"), err=True)
    for path, message in run.skipped:
        click.echo(printable(f"warning: {display_path(path, root)}: {message}"), err=True)
    if verbose:
        for path, message in run.over_budget:
            click.echo(printable(f"note: {display_path(path, root)}: {message}"), err=True)
    for diagnostic, reason in run.dropped:
        click.echo(
            printable(
                f"warning: {display_path(diagnostic.filename, root)}:{diagnostic.location.row}: {diagnostic.code} {reason}"
            ),
            err=True,
        )


def report(
    request: CheckRequest,
    out: OutputArgs,
    run: CheckRun,
    options: CheckOptions,
    *,
    stdin: bool,
    sources: dict[str, str] | None = None,
) -> int:
    fmt = out.output_format or "full"
    root = Path.cwd()
    fix, diff, fix_only = request.fixes, request.diff, request.fix_only
    human = fmt in ("full", "concise")
    out_stream = sys.stdout
    # With stdin --fix the fixed source owns stdout; everything else goes to stderr.
    report_to_stderr = stdin and (fix or diff)
    _problems(run, root, out.timings)

    if diff:
        if not out.silent:
            for path in sorted(run.diffs):
                out_stream.write(run.diffs[path])
            click.echo(
                summary(
                    run.diagnostics,
                    fixed=len(run.fixed),
                    unsafe_fixes=options.unsafe_fixes,
                    fix_mode=True,
                    diff_mode=True,
                ),
                err=True,
                nl=False,
            )
        _print_timings(run, out.timings, out.started)
        if run.errors:
            return EXIT_FINDINGS
        return EXIT_FINDINGS if run.diffs else EXIT_CLEAN

    if stdin and fix:
        out_stream.write(run.stdin_output or "")
        out_stream.flush()

    color = _color(out.color, out_stream.isatty() and not out.output_file)
    if out.statistics:
        from pinlint.report.statistics import render_statistics

        text = render_statistics(
            run.diagnostics, "json" if fmt == "json" else "text", unsafe_fixes=options.unsafe_fixes
        )
    elif fix_only:
        text = ""
    else:
        text = render(fmt, run.diagnostics, root, options.selected, options.unsafe_fixes, color, sources)
    if not out.silent:
        if out.output_file:
            from pinlint.safeio import project_root, write_replacing

            try:
                # `-o reports/x.json` in a fresh checkout
                Path(out.output_file).parent.mkdir(parents=True, exist_ok=True)
                # Replaces a committed symlink instead of writing through it; non-UTF-8 file
                # names (surrogate escapes) are written as escapes instead of crashing.
                write_replacing(out.output_file, text.encode("utf-8", "backslashreplace"), project_root(Path.cwd()))
            except OSError as exc:
                error(f"cannot write the report to {out.output_file}: {exc.strerror or exc}")
                return EXIT_ERROR
        elif report_to_stderr:
            sys.stderr.write(text)
        else:
            out_stream.write(text)
        if out.show_fixes and run.fixed:
            click.echo(_show_fixes(run, root), err=report_to_stderr or bool(out.output_file), nl=False)
        if (human or out.statistics) and not out.quiet:
            text_summary = summary(
                run.diagnostics, fixed=len(run.fixed), unsafe_fixes=options.unsafe_fixes, fix_mode=fix
            )
            if fix_only:
                text_summary = f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.\n"
            click.echo(text_summary, err=report_to_stderr or bool(out.output_file and not human), nl=False)
        elif fix and not out.quiet and run.fixed:
            click.echo(f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.", err=True)
    _profile_note(out, run, options)
    _print_timings(run, out.timings, out.started)
    return _exit_code(out, run, fix_only)


def _exit_code(out: OutputArgs, run: CheckRun, fix_only: bool) -> int:
    if out.exit_non_zero_on_fix and run.fixed:
        return EXIT_FINDINGS
    if run.errors:
        return EXIT_CLEAN if out.exit_zero else EXIT_FINDINGS
    if run.diagnostics and not out.exit_zero and not fix_only:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _profile_note(out: OutputArgs, run: CheckRun, options: CheckOptions) -> None:
    """On stderr (machine formats stay clean): how many findings --hot-only left out."""
    if run.profile_dropped and not (out.quiet or out.silent):
        n, least = run.profile_dropped, options.min_runs or 1
        times = "once" if least == 1 else f"{least:,} times"
        click.echo(
            f"pinlint: --hot-only: {n} finding{'s' if n != 1 else ''} not shown (their site{'s' if n != 1 else ''} ran less than {times} in the profile).",
            err=True,
        )


def _color(choice: str, terminal: bool) -> bool:
    """--color: always / never; auto colours a terminal unless NO_COLOR is set, and FORCE_COLOR
    colours even a pipe (the conventions of no-color.org and force-color.org, as ruff follows)."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal


def _show_fixes(run: CheckRun, root: Path) -> str:
    from collections import Counter

    by_file: dict[str, Counter[str]] = {}
    names: dict[str, str] = {}
    for d in run.fixed:
        by_file.setdefault(display_path(d.filename, root), Counter())[d.code] += 1
        names[d.code] = d.name
    lines = [f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}:"]
    for path in sorted(by_file):
        lines.append(f"- {path}:")
        for code, count in sorted(by_file[path].items()):
            lines.append(f"    {count} × {code} ({names[code]})")
    return "\n".join(printable(line) for line in lines) + "\n"


def _print_timings(run: CheckRun, enabled: bool, started: float) -> None:
    if not enabled:
        return
    t = run.timings
    click.echo(
        f"pinlint: {t.files} files, {t.cache_hits} cache hits, {t.triaged} past triage, {t.parsed_lines} lines parsed",
        err=True,
    )
    for phase, seconds in t.phases.items():
        click.echo(f"  {phase:<22} {seconds * 1000:8.1f} ms", err=True)
    click.echo(f"  {'total':<22} {(time.perf_counter() - started) * 1000:8.1f} ms", err=True)
