"""The command line, with ruff's conventions: ``pinlint check [PATHS]`` (or just ``pinlint [PATHS]``),
``pinlint rule CODE``, ``pinlint clean``, plus the runtime companion's ``trace`` and ``probe``.

Exit codes: 0 clean (or everything fixed), 1 findings remain (or a file could not be checked),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pinlint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


#: Commands of the runtime companion, imported only when used (they need torch to run).
LAZY_COMMANDS = {"trace": ("pinlint.runtime.cli", "trace_command"), "probe": ("pinlint.runtime.cli", "probe_command")}


class DefaultToCheck(click.Group):
    """``pinlint PATHS`` means ``pinlint check PATHS`` (ruff's short form)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = set(self.commands) | set(LAZY_COMMANDS) | {"--help", "-h", "--version", "-V"}
        if args and args[0] not in known and _looks_like_command(args[0]):
            # `pinlint chek` is a typo, not a path: say so rather than "no such file".
            import difflib

            close = difflib.get_close_matches(args[0], sorted(set(self.commands) | set(LAZY_COMMANDS)), n=1, cutoff=0.6)
            if close:
                hint = f" Did you mean `{close[0]}`?"
                raise click.UsageError(f"no such command or path `{args[0]}`.{hint}", ctx)
        if not args or args[0] not in known:
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            import importlib

            module_name, attribute = LAZY_COMMANDS[cmd_name]
            try:
                return getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError) as exc:
                raise click.ClickException(f"`pinlint {cmd_name}` is unavailable: {exc}") from exc
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's whole first sentence (click cuts it at 45 characters by default)."""
        rows = []
        for name in self.list_commands(ctx):
            try:
                command = self.get_command(ctx, name)
            except click.ClickException:
                continue  # a lazy command that cannot load here is left out of the list
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _looks_like_command(arg: str) -> bool:
    """A bare word that is no existing path (a path, a glob or an option is never a typo)."""
    return not arg.startswith("-") and arg.isidentifier() and not Path(arg).exists()


#: `check --help` in sections, as ruff groups its options. Options not named here (added later)
#: are listed under "Miscellaneous", so none is ever hidden.
CHECK_OPTION_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Fixing", ("fix", "unsafe_fixes", "show_fixes", "diff", "fix_only")),
    ("Rule selection", ("select", "extend_select", "ignore")),
    ("File selection", ("exclude", "extend_exclude", "respect_gitignore", "force_exclude", "stdin_filename")),
    ("Configuration", ("config_arg", "show_settings", "show_files")),
    ("Output", ("output_format", "output_file", "statistics", "color", "quiet", "silent", "timings")),
    ("Exit status", ("exit_zero", "exit_non_zero_on_fix")),
    ("Suppressions and baselines", ("ignore_noqa", "add_noqa", "baseline_file", "write_baseline_file")),
    ("Cache and workers", ("no_cache", "cache_dir", "jobs")),
)


class GroupedOptionsCommand(click.Command):
    """A command whose ``--help`` lists its options in the sections of ``CHECK_OPTION_GROUPS``."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records: dict[str, tuple[str, str]] = {}
        order: list[str] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and param.name is not None and not isinstance(param, click.Argument):
                records[param.name] = record
                order.append(param.name)
        for title, names in CHECK_OPTION_GROUPS:
            rows = [records.pop(name) for name in names if name in records]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [records[name] for name in order if name in records]
        if rest:
            with formatter.section("Miscellaneous"):
                formatter.write_dl(rest)


def _fail(message: str) -> None:
    from pinlint.safeio import printable

    click.echo(f"pinlint: error: {printable(message)}", err=True)
    sys.exit(EXIT_ERROR)


@click.group("pinlint", cls=DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="pinlint", message="%(prog)s %(version)s")
def main() -> None:
    """pinlint: find and fix PyTorch host-to-device copies that are non_blocking in name only.

    A `.to(device, non_blocking=True)` copy is only asynchronous when its source is pinned host
    memory. pinlint finds pageable sources (PIN001, PIN002), blocking device constructions
    (PIN003, opt-in), and rewrites them to allocate pinned memory.
    """


@main.command(cls=GroupedOptionsCommand)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=False, help="Also apply (with --fix) or show unsafe fixes.")
@click.option("--show-fixes", is_flag=True, help="List the fixes that were applied.")
@click.option("--diff", is_flag=True, help="Write nothing; print the fixes as unified diffs (exit 1 if there are any).")
@click.option("--fix-only", is_flag=True, help="Apply fixes, but do not report findings that remain.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Rules to enable: codes, prefixes (PIN) or ALL; replaces the configured selection.",
)
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to enable in addition (e.g. PIN003).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to disable.")
@click.option("--exclude", multiple=True, metavar="GLOBS", help="Patterns to exclude, replacing the defaults.")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS", help="Patterns to exclude in addition.")
@click.option(
    "--respect-gitignore/--no-respect-gitignore", default=None, help="Honour .gitignore files (default: yes)."
)
@click.option(
    "--force-exclude/--no-force-exclude", default=None, help="Exclude even paths given explicitly (for pre-commit)."
)
@click.option(
    "--output-format",
    type=click.Choice(["full", "concise", "json", "json-lines", "github", "sarif", "gitlab", "junit"]),
    default=None,
    envvar="PINLINT_OUTPUT_FORMAT",
    help="Output format (default: full).",
)
@click.option(
    "-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the report to this file."
)
@click.option("--statistics", is_flag=True, help="Show counts per rule instead of each finding.")
@click.option("-e", "--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 if anything was fixed, even if nothing remains.")
@click.option(
    "--config",
    "config_arg",
    default=None,
    metavar="PATH|KEY=VALUE",
    help="A config file, or a `key = value` TOML override.",
)
@click.option("--stdin-filename", default=None, help="The name of the file read from stdin (`-`).")
@click.option("-n", "--no-cache", is_flag=True, envvar="PINLINT_NO_CACHE", help="Do not read or write the cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    default=None,
    envvar="PINLINT_CACHE_DIR",
    help="Cache directory (default: .pinlint_cache).",
)
@click.option("--ignore-noqa", is_flag=True, help="Report findings even where `# noqa` suppresses them.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to the lines of every finding (idempotent).")
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Report only findings that are not in this baseline file.",
)
@click.option(
    "--write-baseline",
    "write_baseline_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Record the current findings in this baseline file and exit 0.",
)
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: all cores).")
@click.option("--timings", "-v", "--verbose", "timings", is_flag=True, help="Print per-phase timings to stderr.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-s", "--silent", is_flag=True, help="Print nothing (the exit code still tells).")
@click.option(
    "--profile",
    "profile",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE",
    help="A runtime profile (`pinlint trace --profile FILE`): show how many times each finding's site ran, hottest first.",
)
@click.option(
    "--hot-only/--no-hot-only",
    "hot_only",
    default=None,
    help="With --profile: report only findings whose site ran at least --min-runs times.",
)
@click.option(
    "--min-runs",
    "min_runs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="The least run count for --hot-only (default: 1); implies --hot-only.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    help="Colour the full output: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never.",
)
@click.option("--show-settings", is_flag=True, help="Print the configuration that applies to each file, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be checked, and exit.")
def check(**kw: object) -> None:
    """Check PATHS (default: the current directory) for pageable non_blocking copies."""
    from pinlint.cli_check import run_check_command

    sys.exit(run_check_command(**kw))  # type: ignore[arg-type]


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule(code: str | None, show_all: bool, output_format: str) -> None:
    """Explain a rule: `pinlint rule PIN001` (code or name)."""
    import json

    from pinlint import catalog

    if show_all:
        rules = list(catalog.all_rules())
    elif code:
        found = catalog.get_rule(code)
        if found is None:
            _fail(f"unknown rule `{code}` (known: {', '.join(catalog.all_codes())})")
        rules = [found]  # type: ignore[list-item]
    else:
        _fail("give a rule code (e.g. `pinlint rule PIN001`) or --all")
        return
    if output_format == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "default": r.default_enabled,
                "fix_availability": r.fix_availability,
                "explanation": r.to_markdown(),
                "url": r.url,
            }
            for r in rules
        ]
        click.echo(json.dumps(data if show_all else data[0], indent=2))
    else:
        click.echo("\n".join(r.to_markdown() for r in rules), nl=False)


@main.command()
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None)
def clean(cache_dir: str | None) -> None:
    """Remove pinlint's cache (.pinlint_cache) here and below."""
    import shutil

    targets = [Path(cache_dir)] if cache_dir else [p for p in Path(".").rglob(".pinlint_cache") if p.is_dir()]
    for target in targets:
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
            from pinlint.safeio import printable

            click.echo(f"Removing cache at: {printable(str(target))}", err=True)


@main.command("help")
@click.argument("command", required=False)
@click.pass_context
def help_command(ctx: click.Context, command: str | None) -> None:
    """Show the help of pinlint, or of COMMAND: `pinlint help check`."""
    group = ctx.parent.command if ctx.parent is not None else main
    parent = ctx.parent or ctx
    if command is None:
        click.echo(group.get_help(parent))
        return
    assert isinstance(group, click.Group)
    sub = group.get_command(parent, command)
    if sub is None:
        import difflib

        close = difflib.get_close_matches(command, group.list_commands(parent), n=1)
        _fail(f"no such command `{command}`" + (f". Did you mean `{close[0]}`?" if close else ""))
        return
    with click.Context(sub, info_name=command, parent=parent) as sub_ctx:
        click.echo(sub.get_help(sub_ctx))


@main.command("version")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def version_command(output_format: str) -> None:
    """Print pinlint's version (also `pinlint --version`)."""
    if output_format == "json":
        import json

        click.echo(json.dumps({"version": __version__}))
    else:
        click.echo(f"pinlint {__version__}")


def entry() -> None:  # pragma: no cover - console entry through __main__
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
