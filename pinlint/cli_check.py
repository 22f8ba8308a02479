"""``pinlint check``: click's options → the app (plan → discovery → check → baseline/add-noqa)
→ what is printed → exit code. Everything but the printing is in ``pinlint.app``."""

from __future__ import annotations

import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pinlint.app.check import check_files, check_stdin_data, worker_pool
from pinlint.app.files import discover_files
from pinlint.app.request import CheckPlan, CheckRequest, RequestError, plan_check, selected_for
from pinlint.cli_report import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, MACHINE_FORMATS, OutputArgs, error, report
from pinlint.config import Config, ConfigError
from pinlint.report.human import display_path
from pinlint.safeio import printable

if TYPE_CHECKING:
    from pinlint.runner import WorkerPool

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def _interrupted(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__context__ or current.__cause__
    return False


def run_check_command(**kw: object) -> int:
    started = time.perf_counter()
    names = {f.name for f in fields(CheckRequest)}
    try:
        request = CheckRequest(**{k: v for k, v in kw.items() if k in names})  # type: ignore[arg-type]
        out = OutputArgs(**{k: v for k, v in kw.items() if k not in names}, started=started)  # type: ignore[arg-type]
        return _run(request, out)
    except (ConfigError, RequestError) as exc:
        for message in exc.messages if isinstance(exc, RequestError) else (str(exc),):
            error(message)
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

        error(f"internal error: {type(exc).__name__}: {exc} (please report it; set PINLINT_DEBUG=1 for the traceback)")
        if os.environ.get("PINLINT_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR


def _run(request: CheckRequest, out: OutputArgs) -> int:
    plan = plan_check(request)
    out.output_format = out.output_format or plan.config.output_format or "full"
    if request.reads_stdin:
        if out.show_settings:
            return _show_settings(plan, [(plan.config, [Path(request.stdin_filename or "-").absolute()])])
        _verbose_configs(out, [(plan.config, [])])
        checked = check_stdin_data(plan, sys.stdin.buffer.read())
        return report(
            request, out, checked.run, plan.options, stdin=True, sources={str(checked.filename): checked.shown}
        )
    with worker_pool(plan) as pool:
        return _run_paths(plan, out, pool)


def _run_paths(plan: CheckPlan, out: OutputArgs, pool: WorkerPool | None) -> int:
    found = discover_files(plan)
    if out.show_files:
        for file in sorted(found.files):
            click.echo(display_path(str(file), Path.cwd()))
        return EXIT_CLEAN
    if out.show_settings:
        return _show_settings(plan, found.groups)
    _verbose_configs(out, found.groups)
    if not found.files and not found.problems and not out.silent:
        click.echo("warning: No Python files found under the given path(s)", err=True)

    progress = _progress(len(found.files), out.output_format or "full", out.silent or out.quiet)
    try:
        run = check_files(plan, found, pool, on_progress=progress.advance if progress else None)
    finally:
        if progress:
            progress.stop()

    root = plan.config.root
    if out.add_noqa:
        from pinlint.app.noqa_flow import add_noqa

        for path, message in run.errors:  # e.g. a symlink out of the project, left alone
            click.echo(printable(f"error: {display_path(path, Path.cwd())}: {message}"), err=True)
        noqa = add_noqa(run)
        for path, message in noqa.problems:
            error(f"{display_path(path, Path.cwd())}: {message}")
        if not out.silent:
            click.echo(f"Added {noqa.added} noqa directive{'s' if noqa.added != 1 else ''}.", err=True)
        return EXIT_ERROR if noqa.problems else EXIT_CLEAN
    if out.write_baseline_file:
        from pinlint.app.baseline_flow import write_baseline_of

        written = write_baseline_of(run, out.write_baseline_file, root)
        if not out.silent:
            click.echo(f"Wrote {written.recorded} finding(s) to the baseline {out.write_baseline_file}.", err=True)
            if written.not_recorded:
                click.echo(f"warning: {written.not_recorded} syntax error(s) not recorded: fix them", err=True)
        return EXIT_CLEAN
    if out.baseline_file:
        from pinlint.app.baseline_flow import drop_known

        drop_known(run, out.baseline_file, root)
    return report(plan.request, out, run, plan.options, stdin=False)


def _config_name(config: Config) -> str:
    return display_path(str(config.path), Path.cwd()) if config.path else "none (the defaults)"


def _verbose_configs(out: OutputArgs, groups: list[tuple[Config, list[Path]]]) -> None:
    """`-v`: which configuration applied, to how many files."""
    if not out.timings:
        return
    for config, files in groups:
        count = f" ({len(files)} file{'s' if len(files) != 1 else ''})" if files else ""
        click.echo(f"pinlint: configuration: {_config_name(config)}{count}", err=True)


def _show_settings(plan: CheckPlan, groups: list[tuple[Config, list[Path]]]) -> int:
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
        out.append(f"selected = {sorted(selected_for(plan.request, config))}")
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
