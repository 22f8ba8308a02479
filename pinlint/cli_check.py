"""``pinlint check``: options → configuration → discovery → pipeline → output → exit code."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import click

from pinlint import __version__
from pinlint.app import CheckOptions, CheckRun, check_stdin, run_check
from pinlint.config import Config, ConfigError, ConfigResolver, selected_codes
from pinlint.core.diagnostics import Diagnostic
from pinlint.core.syntax import CODE as SYNTAX_CODE
from pinlint.report import ReportContext
from pinlint.report.human import display_path, render_concise, render_full, summary
from pinlint.safeio import printable

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
    # Messages quote file names and config keys from the repository: no control characters
    # (terminal escapes, or a line break that starts a forged CI workflow command).
    click.echo(f"pinlint: error: {printable(message)}", err=True)


@dataclass
class CheckArgs:
    """The options of `pinlint check`, as click parsed them (see cli.py for their help)."""

    paths: tuple[str, ...]
    fix: bool
    unsafe_fixes: bool
    show_fixes: bool
    diff: bool
    fix_only: bool
    select: tuple[str, ...]
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]
    exclude: tuple[str, ...]
    extend_exclude: tuple[str, ...]
    respect_gitignore: bool | None
    force_exclude: bool | None
    output_format: str | None
    output_file: str | None
    statistics: bool
    exit_zero: bool
    exit_non_zero_on_fix: bool
    config_arg: str | None
    stdin_filename: str | None
    no_cache: bool
    cache_dir: str | None
    ignore_noqa: bool
    add_noqa: bool
    baseline_file: str | None
    write_baseline_file: str | None
    jobs: int | None
    timings: bool
    quiet: bool
    silent: bool
    profile: str | None = None
    hot_only: bool | None = None
    min_runs: int | None = None
    color: str = "auto"
    show_settings: bool = False
    show_files: bool = False
    started: float = field(default_factory=time.perf_counter)


def run_check_command(**kw: object) -> int:
    try:
        return _run(CheckArgs(**kw))  # type: ignore[arg-type]
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


def _selected(a: CheckArgs, config: Config) -> set[str]:
    return selected_codes(config, _split(a.select) or None, _split(a.extend_select), _split(a.ignore))


def _run(a: CheckArgs) -> int:
    resolver = ConfigResolver(a.config_arg)
    config = resolver.base
    paths = list(a.paths) or ["."]
    if paths == ["-"] and a.stdin_filename:
        # stdin takes the configuration of the file it stands for.
        config = resolver.for_file(Path(a.stdin_filename).absolute())
    selected = _selected(a, config)
    a.output_format = a.output_format or config.output_format or "full"
    if a.fix_only:
        a.fix = True
    options = CheckOptions(
        selected=selected,
        fix=a.fix and not a.diff,
        unsafe_fixes=a.unsafe_fixes,
        diff=a.diff,
        ignore_noqa=a.ignore_noqa,
        jobs=a.jobs,
        cache_dir=Path(a.cache_dir).resolve() if a.cache_dir else None,
        use_cache=not a.no_cache,
    )
    if not _profile_options(a, config, options):
        return EXIT_ERROR
    if paths == ["-"]:
        if a.show_settings:
            return _show_settings(a, [(config, [Path(a.stdin_filename or "-").absolute()])])
        _verbose_configs(a, [(config, [])])
        return _run_stdin(a, config, options)
    if "-" in paths:
        _error("`-` (stdin) cannot be combined with other paths")
        return EXIT_ERROR

    from pinlint import runner

    # A directory usually means many files: start the workers now, so that their libcst
    # import overlaps discovery. (pre-commit passes files, and small runs stay in-process.)
    pool = None
    jobs = a.jobs or runner.default_jobs()
    if jobs > 1 and any(Path(p).is_dir() for p in paths) and not _warm_cache_likely(config, options):
        pool = runner.WorkerPool(jobs)
    try:
        return _run_paths(a, paths, resolver, options, pool)
    finally:
        if pool is not None:
            pool.close()


def _profile_options(a: CheckArgs, config: Config, options: CheckOptions) -> bool:
    """``--profile``, ``--hot-only``, ``--min-runs`` (and ``hot-only``/``min-runs`` in the
    config) into the options. The profile is read now, so that a bad one fails before the check."""
    asked = a.hot_only is True or a.min_runs is not None
    if a.profile is None:
        if asked:
            _error(
                "--hot-only and --min-runs need a runtime profile: add --profile FILE (write one with `pinlint trace --profile FILE -- python program.py`)"
            )
            return False
        return True
    from pinlint import profile as profile_format

    try:
        options.profile = profile_format.ProfileIndex(profile_format.load(a.profile))
    except profile_format.ProfileError as exc:
        _error(str(exc))
        return False
    hot_only = a.min_runs is not None or (a.hot_only if a.hot_only is not None else config.hot_only)
    if hot_only:
        options.min_runs = a.min_runs or config.min_runs or 1
    return True


def _profile_note(a: CheckArgs, run: CheckRun, options: CheckOptions) -> None:
    """On stderr (machine formats stay clean): how many findings --hot-only left out."""
    if run.profile_dropped and not (a.quiet or a.silent):
        n, least = run.profile_dropped, options.min_runs or 1
        times = "once" if least == 1 else f"{least:,} times"
        click.echo(
            f"pinlint: --hot-only: {n} finding{'s' if n != 1 else ''} not shown (their site{'s' if n != 1 else ''} ran less than {times} in the profile).",
            err=True,
        )


def _warm_cache_likely(config: Config, options: CheckOptions) -> bool:
    """A cache file for these settings exists: most files will be hits, workers would idle."""
    from pinlint.app import analysis_settings, cache_dir, uses_cache
    from pinlint.cache import cache_file

    return (
        uses_cache(options)
        and cache_file(cache_dir(config, options), analysis_settings(config, options.selected)).exists()
    )


def _run_stdin(a: CheckArgs, config: Config, options: CheckOptions) -> int:
    from pinlint import source

    try:
        text = source.decode(sys.stdin.buffer.read()).text
    except source.DecodeError as exc:
        _error(f"stdin: {exc}")
        return EXIT_ERROR
    filename = Path(a.stdin_filename or "-").absolute()
    run = check_stdin(text, filename, config, options)
    # The findings that remain after --fix are located in the fixed text: draw excerpts from it.
    shown = run.stdin_output if run.stdin_output is not None and options.fix else text
    return _report(a, run, options, stdin=True, sources={str(filename): shown})


def _run_paths(a: CheckArgs, paths: list[str], resolver: ConfigResolver, options: CheckOptions, pool: object) -> int:
    from pinlint.discovery import discover

    config = resolver.base
    discovery_started = time.perf_counter()
    found = discover(
        paths,
        root=config.root,
        exclude=[
            *(_split(a.exclude) if a.exclude else config.exclude),
            *config.extend_exclude,
            *_split(a.extend_exclude),
        ],
        respect_gitignore=config.respect_gitignore if a.respect_gitignore is None else a.respect_gitignore,
        force_exclude=config.force_exclude if a.force_exclude is None else a.force_exclude,
        project=config.project_root,
    )
    if found.missing:
        for missing in found.missing:
            _error(f"{missing}: no such file or directory")
        return EXIT_ERROR
    groups = resolver.group(found.files)
    groups = _nested_excludes(groups, config, set(_explicit_files(paths)), a)
    files = [file for _config, group in groups for file in group]
    discovery_seconds = time.perf_counter() - discovery_started
    if a.show_files:
        for file in sorted(files):
            click.echo(display_path(str(file), Path.cwd()))
        return EXIT_CLEAN
    if a.show_settings:
        return _show_settings(a, groups)
    _verbose_configs(a, groups)
    if not files and not found.problems and not a.silent:
        click.echo("warning: No Python files found under the given path(s)", err=True)

    progress = _progress(len(files), a.output_format or "full", a.silent or a.quiet)
    try:
        run = CheckRun()
        for group_config, group in groups:
            group_options = options if group_config is config else replace(options, selected=_selected(a, group_config))
            part = run_check(
                group, group_config, group_options, on_progress=progress.advance if progress else None, pool=pool
            )  # type: ignore[arg-type]
            _merge(run, part)
        # The order run_check gives each group: hottest first with a profile, else by place.
        if options.profile is not None:
            run.diagnostics.sort(key=lambda d: (-(d.profile.count if d.profile else 0), *d.sort_key()))
        else:
            run.diagnostics.sort(key=lambda d: d.sort_key())
        # Statistics and the report name every rule any configuration selected.
        options.selected = set().union(options.selected, *(_selected(a, c) for c, _files in groups if c is not config))
    finally:
        if progress:
            progress.stop()
    run.timings.add("discovery", discovery_seconds)
    run.errors[:0] = [(path, message) for path, message in found.problems]

    if a.add_noqa:
        from pinlint.noqa_insert import add_noqa_directives

        for path, message in run.errors:  # e.g. a symlink out of the project, left alone
            click.echo(printable(f"error: {display_path(path, Path.cwd())}: {message}"), err=True)
        added, problems = add_noqa_directives(run.diagnostics)
        for path, message in problems:
            _error(f"{display_path(path, Path.cwd())}: {message}")
        if not a.silent:
            click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
        return EXIT_ERROR if problems else EXIT_CLEAN

    if a.write_baseline_file:
        from pinlint.baseline import write_baseline

        # A syntax error is never "known": it is not recorded, so it cannot be baselined away.
        recorded = [d for d in run.diagnostics if d.code != SYNTAX_CODE]
        try:
            write_baseline(recorded, Path(a.write_baseline_file), config.root)
        except OSError as exc:
            _error(f"cannot write the baseline {a.write_baseline_file}: {exc.strerror or exc}")
            return EXIT_ERROR
        if not a.silent:
            click.echo(f"Wrote {len(recorded)} finding(s) to the baseline {a.write_baseline_file}.", err=True)
            if len(recorded) < len(run.diagnostics):
                click.echo(
                    f"warning: {len(run.diagnostics) - len(recorded)} syntax error(s) not recorded: fix them", err=True
                )
        return EXIT_CLEAN
    if a.baseline_file:
        from pinlint.baseline import BaselineError, filter_new, load_baseline

        try:
            known = load_baseline(Path(a.baseline_file))
        except BaselineError as exc:
            _error(str(exc))
            return EXIT_ERROR
        syntax_errors = [d for d in run.diagnostics if d.code == SYNTAX_CODE]
        new = filter_new([d for d in run.diagnostics if d.code != SYNTAX_CODE], known, config.root)
        run.diagnostics = sorted([*new, *syntax_errors], key=lambda d: d.sort_key())
    return _report(a, run, options, stdin=False)


def _explicit_files(paths: list[str]) -> list[Path]:
    return [Path(p).absolute() for p in paths if Path(p).is_file()]


def _nested_excludes(
    groups: list[tuple[Config, list[Path]]], base: Config, explicit: set[Path], a: CheckArgs
) -> list[tuple[Config, list[Path]]]:
    """A nested configuration's `exclude` / `extend-exclude` apply below its directory (the walk
    used the base configuration's). Files named on the command line stay, as in discovery."""
    from pinlint.discovery import Excluder

    out = []
    for config, files in groups:
        if config is base:
            out.append((config, files))
            continue
        patterns = [
            *(_split(a.exclude) if a.exclude else config.exclude),
            *config.extend_exclude,
            *_split(a.extend_exclude),
        ]
        excluder = Excluder(patterns, config.root)
        root = config.root.resolve()
        kept = []
        for file in files:
            if file in explicit and not (config.force_exclude if a.force_exclude is None else a.force_exclude):
                kept.append(file)
                continue
            parts = [file, *file.parents]
            if not any(
                excluder.excluded(part) for part in parts if part.resolve() != root and root in part.resolve().parents
            ):
                kept.append(file)
        out.append((config, kept))
    return out


def _merge(run: CheckRun, part: CheckRun) -> None:
    run.diagnostics.extend(part.diagnostics)
    run.fixed.extend(part.fixed)
    run.dropped.extend(part.dropped)
    run.errors.extend(part.errors)
    run.diffs.update(part.diffs)
    run.skipped.extend(part.skipped)
    run.over_budget.extend(part.over_budget)
    run.profile_dropped += part.profile_dropped
    for phase, seconds in part.timings.phases.items():
        run.timings.add(phase, seconds)
    run.timings.files += part.timings.files
    run.timings.triaged += part.timings.triaged
    run.timings.cache_hits += part.timings.cache_hits
    run.timings.parsed_lines += part.timings.parsed_lines


def _config_name(config: Config) -> str:
    return display_path(str(config.path), Path.cwd()) if config.path else "none (the defaults)"


def _verbose_configs(a: CheckArgs, groups: list[tuple[Config, list[Path]]]) -> None:
    """`-v`: which configuration applied, to how many files."""
    if not a.timings:
        return
    for config, files in groups:
        count = f" ({len(files)} file{'s' if len(files) != 1 else ''})" if files else ""
        click.echo(f"pinlint: configuration: {_config_name(config)}{count}", err=True)


def _show_settings(a: CheckArgs, groups: list[tuple[Config, list[Path]]]) -> int:
    """The resolved settings of each configuration, and the files it applies to (ruff prints
    one file's; a run over several projects has several)."""
    from dataclasses import fields

    out = []
    for config, files in groups:
        out.append(f"Configuration: {_config_name(config)}")
        out.append(f"Project root: {display_path(str(config.root), Path.cwd()) or '.'}")
        shown = ", ".join(display_path(str(f), Path.cwd()) for f in sorted(files)[:5])
        more = f", ... ({len(files)} in all)" if len(files) > 5 else ""
        out.append(f"Files: {shown}{more}")
        out.append(f"selected = {sorted(_selected(a, config))}")
        for f in fields(config):
            if f.name in ("path", "root"):
                continue
            value = getattr(config, f.name)
            out.append(f"{f.name.replace('_', '-')} = {str(value) if isinstance(value, Path) else value!r}")
        out.append("")
    click.echo("\n".join(out), nl=False)
    return EXIT_CLEAN


class _Progress:
    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
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


def _render(
    fmt: str,
    diagnostics: list[Diagnostic],
    root: Path,
    selected: set[str],
    unsafe_fixes: bool,
    color: bool,
    sources: dict[str, str] | None,
) -> str:
    ctx = ReportContext(root=root, version=__version__, selected_codes=tuple(sorted(selected)))
    if fmt == "full":
        return render_full(diagnostics, root, color=color, unsafe_fixes=unsafe_fixes, sources=sources)
    if fmt == "concise":
        return render_concise(diagnostics, root, unsafe_fixes)
    import importlib

    module = importlib.import_module(
        f".report.{fmt.replace('-', '_') if fmt != 'json' else 'json_format'}", __package__
    )
    return module.render(diagnostics, ctx)


def _report(
    a: CheckArgs, run: CheckRun, options: CheckOptions, *, stdin: bool, sources: dict[str, str] | None = None
) -> int:
    fmt = a.output_format or "full"
    root = Path.cwd()
    fix, diff, fix_only, show_fixes, statistics = a.fix, a.diff, a.fix_only, a.show_fixes, a.statistics
    exit_zero, exit_non_zero_on_fix, output_file = a.exit_zero, a.exit_non_zero_on_fix, a.output_file
    quiet, silent, timings, started = a.quiet, a.silent, a.timings, a.started
    human = fmt in ("full", "concise")
    out_stream = sys.stdout
    # With stdin --fix the fixed source owns stdout; everything else goes to stderr.
    report_to_stderr = stdin and (fix or diff)
    for path, message in run.errors:
        click.echo(printable(f"error: {display_path(path, root)}: {message}"), err=True)
    for path, message in run.skipped:
        click.echo(printable(f"warning: {display_path(path, root)}: {message}"), err=True)
    if timings:
        for path, message in run.over_budget:
            click.echo(printable(f"note: {display_path(path, root)}: {message}"), err=True)
    for diagnostic, reason in run.dropped:
        click.echo(
            printable(
                f"warning: {display_path(diagnostic.filename, root)}:{diagnostic.location.row}: {diagnostic.code} {reason}"
            ),
            err=True,
        )

    if diff:
        if not silent:
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
        _print_timings(run, timings, started)
        if run.errors:
            return EXIT_FINDINGS
        return EXIT_FINDINGS if run.diffs else EXIT_CLEAN

    if stdin and fix:
        out_stream.write(run.stdin_output or "")
        out_stream.flush()

    color = _color(a.color, out_stream.isatty() and not output_file)
    if statistics:
        from pinlint.report.statistics import render_statistics

        text = render_statistics(
            run.diagnostics, "json" if fmt == "json" else "text", unsafe_fixes=options.unsafe_fixes
        )
    elif fix_only:
        text = ""
    else:
        text = _render(fmt, run.diagnostics, root, options.selected, options.unsafe_fixes, color, sources)
    if not silent:
        if output_file:
            from pinlint.safeio import project_root, write_replacing

            try:
                Path(output_file).parent.mkdir(parents=True, exist_ok=True)  # `-o reports/x.json` in a fresh checkout
                # Replaces a committed symlink instead of writing through it; non-UTF-8 file
                # names (surrogate escapes) are written as escapes instead of crashing.
                write_replacing(output_file, text.encode("utf-8", "backslashreplace"), project_root(Path.cwd()))
            except OSError as exc:
                _error(f"cannot write the report to {output_file}: {exc.strerror or exc}")
                return EXIT_ERROR
        elif report_to_stderr:
            sys.stderr.write(text)
        else:
            out_stream.write(text)
        if show_fixes and run.fixed:
            click.echo(_show_fixes(run, root), err=report_to_stderr or bool(output_file), nl=False)
        if (human or statistics) and not quiet:
            text_summary = summary(
                run.diagnostics, fixed=len(run.fixed), unsafe_fixes=options.unsafe_fixes, fix_mode=fix
            )
            if fix_only:
                text_summary = f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.\n"
            click.echo(text_summary, err=report_to_stderr or bool(output_file and not human), nl=False)
        elif fix and not quiet and run.fixed:
            click.echo(f"Fixed {len(run.fixed)} error{'s' if len(run.fixed) != 1 else ''}.", err=True)
    _profile_note(a, run, options)
    _print_timings(run, timings, started)
    if exit_non_zero_on_fix and run.fixed:
        return EXIT_FINDINGS
    if run.errors:
        return EXIT_CLEAN if exit_zero else EXIT_FINDINGS
    if run.diagnostics and not exit_zero and not fix_only:
        return EXIT_FINDINGS
    return EXIT_CLEAN


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
