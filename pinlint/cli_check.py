"""``pinlint check``: options → configuration → discovery → pipeline → output → exit code."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from . import __version__
from .config import ConfigError, load, selected_codes
from .diagnostics import Diagnostic
from .pipeline import CheckOptions, CheckRun, check_stdin, run_check
from .report import ReportContext
from .report.human import display_path, render_concise, render_full, summary

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
MACHINE_FORMATS = ("json", "json-lines", "github", "sarif", "gitlab", "junit")


def _split(values: tuple[str, ...] | list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in str(value).split(",") if part.strip())
    return out


def _interrupted(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__context__ or current.__cause__
    return False


def _error(message: str) -> None:
    click.echo(f"pinlint: error: {message}", err=True)


def run_check_command(**kw: object) -> int:
    try:
        return _run(**kw)
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        click.echo("pinlint: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`pinlint ... | head`): stop quietly, as other CLIs do.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except Exception as exc:  # an internal error: say so plainly, exit 2, keep the traceback on request
        if _interrupted(exc):
            # Ctrl-C that a library turned into another error while unwinding (libcst does).
            click.echo("pinlint: interrupted", err=True)
            return EXIT_INTERRUPTED
        import os
        import traceback

        _error(f"internal error: {type(exc).__name__}: {exc} (please report it; set PINLINT_DEBUG=1 for the traceback)")
        if os.environ.get("PINLINT_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR


def _run(
    paths: tuple[str, ...],
    fix: bool,
    unsafe_fixes: bool,
    show_fixes: bool,
    diff: bool,
    fix_only: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    respect_gitignore: bool | None,
    force_exclude: bool | None,
    output_format: str | None,
    output_file: str | None,
    statistics: bool,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    config_arg: str | None,
    stdin_filename: str | None,
    no_cache: bool,
    cache_dir: str | None,
    ignore_noqa: bool,
    add_noqa: bool,
    baseline_file: str | None,
    write_baseline_file: str | None,
    jobs: int | None,
    timings: bool,
    quiet: bool,
    silent: bool,
) -> int:
    started = time.perf_counter()
    config = load(config_arg)
    selected = selected_codes(config, _split(select) or None, _split(extend_select), _split(ignore))
    fmt = output_format or config.output_format or "full"
    if fix_only:
        fix = True
    options = CheckOptions(
        selected=selected,
        fix=fix and not diff,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        ignore_noqa=ignore_noqa,
        jobs=jobs,
        cache_dir=Path(cache_dir).resolve() if cache_dir else None,
        use_cache=not no_cache,
    )
    root = Path.cwd()
    paths_list = list(paths) or ["."]
    if paths_list == ["-"]:
        text = sys.stdin.buffer.read()
        from . import source

        try:
            decoded_text = source.decode(text).text
        except source.DecodeError as exc:
            _error(f"stdin: {exc}")
            return EXIT_ERROR
        filename = Path(stdin_filename or "-").absolute()
        run = check_stdin(decoded_text, filename, config, options)
        sources = {str(filename): decoded_text}
        return _report(run, fmt, root, options, fix, diff, fix_only, show_fixes, statistics, exit_zero,
                       exit_non_zero_on_fix, output_file, quiet, silent, timings, started, stdin=True, sources=sources)
    if "-" in paths_list:
        _error("`-` (stdin) cannot be combined with other paths")
        return EXIT_ERROR

    from .discovery import discover

    discovery_started = time.perf_counter()
    found = discover(
        paths_list,
        root=config.root,
        exclude=[*(_split(exclude) if exclude else config.exclude), *config.extend_exclude, *_split(extend_exclude)],
        respect_gitignore=config.respect_gitignore if respect_gitignore is None else respect_gitignore,
        force_exclude=config.force_exclude if force_exclude is None else force_exclude,
    )
    if found.missing:
        for missing in found.missing:
            _error(f"{missing}: no such file or directory")
        return EXIT_ERROR
    discovery_seconds = time.perf_counter() - discovery_started

    progress = _progress(len(found.files), fmt, silent or quiet)
    try:
        run = run_check(found.files, config, options, on_progress=progress.advance if progress else None)
    finally:
        if progress:
            progress.stop()
    run.timings.add("discovery", discovery_seconds)
    run.errors[:0] = [(path, message) for path, message in found.problems]

    if add_noqa:
        from .noqa_insert import add_noqa_directives

        added, problems = add_noqa_directives(run.diagnostics)
        for path, message in problems:
            _error(f"{display_path(path, root)}: {message}")
        if not silent:
            click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
        return EXIT_ERROR if problems else EXIT_CLEAN

    if write_baseline_file:
        from .baseline import write_baseline

        write_baseline(run.diagnostics, Path(write_baseline_file), config.root)
        if not silent:
            click.echo(f"Wrote {len(run.diagnostics)} finding(s) to the baseline {write_baseline_file}.", err=True)
        return EXIT_CLEAN
    if baseline_file:
        from .baseline import BaselineError, filter_new, load_baseline

        try:
            known = load_baseline(Path(baseline_file))
        except BaselineError as exc:
            _error(str(exc))
            return EXIT_ERROR
        run.diagnostics = filter_new(run.diagnostics, known, config.root)

    return _report(run, fmt, root, options, fix, diff, fix_only, show_fixes, statistics, exit_zero,
                   exit_non_zero_on_fix, output_file, quiet, silent, timings, started, stdin=False)


class _Progress:
    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=True,
        )
        self.task = self.progress.add_task("Checking", total=total)
        self.progress.start()

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def stop(self) -> None:
        self.progress.stop()


def _progress(total: int, fmt: str, quiet: bool) -> _Progress | None:
    # Only for people watching a long run: never in machine formats, never when piped.
    if quiet or fmt in MACHINE_FORMATS or total < 2000 or not sys.stdout.isatty() or not sys.stderr.isatty():
        return None
    return _Progress(total)


def _render(fmt: str, diagnostics: list[Diagnostic], root: Path, selected: set[str], unsafe_fixes: bool, color: bool, sources: dict[str, str] | None) -> str:
    ctx = ReportContext(root=root, version=__version__, selected_codes=tuple(sorted(selected)))
    if fmt == "full":
        return render_full(diagnostics, root, color=color, unsafe_fixes=unsafe_fixes, sources=sources)
    if fmt == "concise":
        return render_concise(diagnostics, root, unsafe_fixes)
    import importlib

    module = importlib.import_module(f".report.{fmt.replace('-', '_') if fmt != 'json' else 'json_format'}", __package__)
    return module.render(diagnostics, ctx)


def _report(
    run: CheckRun,
    fmt: str,
    root: Path,
    options: CheckOptions,
    fix: bool,
    diff: bool,
    fix_only: bool,
    show_fixes: bool,
    statistics: bool,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    output_file: str | None,
    quiet: bool,
    silent: bool,
    timings: bool,
    started: float,
    *,
    stdin: bool,
    sources: dict[str, str] | None = None,
) -> int:
    human = fmt in ("full", "concise")
    out_stream = sys.stdout
    # With stdin --fix the fixed source owns stdout; everything else goes to stderr.
    report_to_stderr = stdin and (fix or diff)
    for path, message in run.errors:
        click.echo(f"error: {display_path(path, root)}: {message}", err=True)
    for diagnostic, reason in run.dropped:
        click.echo(f"warning: {display_path(diagnostic.filename, root)}:{diagnostic.location.row}: {diagnostic.code} {reason}", err=True)

    if diff:
        if not silent:
            for path in sorted(run.diffs):
                out_stream.write(run.diffs[path])
            click.echo(summary(run.diagnostics, fixed=len(run.fixed), unsafe_fixes=options.unsafe_fixes, fix_mode=True, diff_mode=True), err=True, nl=False)
        _print_timings(run, timings, started)
        if run.errors:
            return EXIT_FINDINGS
        return EXIT_FINDINGS if run.diffs else EXIT_CLEAN

    if stdin and fix:
        out_stream.write(run.stdin_output or "")
        out_stream.flush()

    color = out_stream.isatty() and not output_file
    if statistics:
        from .report.statistics import render_statistics

        text = render_statistics(run.diagnostics, "json" if fmt == "json" else "text", unsafe_fixes=options.unsafe_fixes)
    elif fix_only:
        text = ""
    else:
        text = _render(fmt, run.diagnostics, root, options.selected, options.unsafe_fixes, color, sources)
    if not silent:
        if output_file:
            Path(output_file).write_text(text, encoding="utf-8")
        elif report_to_stderr:
            sys.stderr.write(text)
        else:
            out_stream.write(text)
        if show_fixes and run.fixed:
            click.echo(_show_fixes(run, root), err=report_to_stderr or bool(output_file), nl=False)
        if (human or statistics) and not quiet:
            text_summary = summary(run.diagnostics, fixed=len(run.fixed), unsafe_fixes=options.unsafe_fixes, fix_mode=fix)
            if fix_only:
                text_summary = f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.\n"
            click.echo(text_summary, err=report_to_stderr or bool(output_file and not human), nl=False)
        elif fix and not quiet and run.fixed:
            click.echo(f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.", err=True)
    _print_timings(run, timings, started)
    if exit_non_zero_on_fix and run.fixed:
        return EXIT_FINDINGS
    if run.errors:
        return EXIT_CLEAN if exit_zero else EXIT_FINDINGS
    if run.diagnostics and not exit_zero and not fix_only:
        return EXIT_FINDINGS
    return EXIT_CLEAN


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
    return "\n".join(lines) + "\n"


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
