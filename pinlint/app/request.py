"""What a user asked of a check (``CheckRequest``), resolved into a ``CheckPlan``: the
configuration, the selected rules and the ``CheckOptions`` (with a runtime profile, read now
so that a bad one fails before anything is checked)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pinlint.app.options import CheckOptions
from pinlint.config import Config, selected_codes
from pinlint.config_resolver import ConfigResolver


class RequestError(Exception):
    """A request that cannot run (a missing path, a bad profile or baseline...): each message
    is one error line for the user."""

    def __init__(self, *messages: str) -> None:
        super().__init__(*messages)
        self.messages = messages


@dataclass
class CheckRequest:
    """The options of ``pinlint check`` that decide what is checked and fixed (cli.py has their
    help); the ones that decide what is printed stay with the CLI."""

    paths: tuple[str, ...] = ()
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    fix_only: bool = False
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None
    config_arg: str | None = None
    stdin_filename: str | None = None
    no_cache: bool = False
    cache_dir: str | None = None
    ignore_noqa: bool = False
    jobs: int | None = None
    profile: str | None = None
    hot_only: bool | None = None
    min_runs: int | None = None

    @property
    def path_list(self) -> list[str]:
        return list(self.paths) or ["."]

    @property
    def reads_stdin(self) -> bool:
        return self.path_list == ["-"]

    @property
    def fixes(self) -> bool:
        """Fixes are applied (``--fix``, or ``--fix-only`` which implies it)."""
        return self.fix or self.fix_only


def split_values(values: tuple[str, ...] | list[str]) -> list[str]:
    """``--select A,B --select C`` → ``[A, B, C]``."""
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in str(value).split(",") if part.strip())
    return out


def selected_for(request: CheckRequest, config: Config) -> set[str]:
    """The rules a configuration selects, after the command line's --select/--extend-select/--ignore."""
    return selected_codes(
        config, split_values(request.select) or None, split_values(request.extend_select), split_values(request.ignore)
    )


def exclude_patterns(request: CheckRequest, config: Config) -> list[str]:
    """--exclude replaces the configuration's ``exclude``; both ``extend-exclude``s add to it."""
    return [
        *(split_values(request.exclude) if request.exclude else config.exclude),
        *config.extend_exclude,
        *split_values(request.extend_exclude),
    ]


def force_exclude(request: CheckRequest, config: Config) -> bool:
    return config.force_exclude if request.force_exclude is None else request.force_exclude


@dataclass
class CheckPlan:
    request: CheckRequest
    resolver: ConfigResolver
    #: The base configuration; for stdin, the one of the file it stands for (--stdin-filename).
    config: Config
    options: CheckOptions


def plan_check(request: CheckRequest) -> CheckPlan:
    """Raises ``ConfigError`` for a broken configuration, ``RequestError`` for other bad options."""
    resolver = ConfigResolver(request.config_arg)
    config = resolver.base
    if request.reads_stdin and request.stdin_filename:
        # stdin takes the configuration of the file it stands for.
        config = resolver.for_file(Path(request.stdin_filename).absolute())
    options = CheckOptions(
        selected=selected_for(request, config),
        fix=request.fixes and not request.diff,
        unsafe_fixes=request.unsafe_fixes,
        diff=request.diff,
        ignore_noqa=request.ignore_noqa,
        jobs=request.jobs,
        cache_dir=Path(request.cache_dir).resolve() if request.cache_dir else None,
        use_cache=not request.no_cache,
    )
    _load_profile(request, config, options)
    if not request.reads_stdin and "-" in request.path_list:
        raise RequestError("`-` (stdin) cannot be combined with other paths")
    return CheckPlan(request, resolver, config, options)


def _load_profile(request: CheckRequest, config: Config, options: CheckOptions) -> None:
    """``--profile``, ``--hot-only``, ``--min-runs`` (and ``hot-only``/``min-runs`` in the
    config) into the options."""
    asked = request.hot_only is True or request.min_runs is not None
    if request.profile is None:
        if asked:
            raise RequestError(
                "--hot-only and --min-runs need a runtime profile: add --profile FILE (write one with `pinlint trace --profile FILE -- python program.py`)"
            )
        return
    from pinlint import profile as profile_format
    from pinlint.profile_findings import ProfileIndex

    try:
        options.profile = ProfileIndex(profile_format.load(request.profile))
    except profile_format.ProfileError as exc:
        raise RequestError(str(exc)) from exc
    hot_only = request.min_runs is not None or (request.hot_only if request.hot_only is not None else config.hot_only)
    if hot_only:
        options.min_runs = request.min_runs or config.min_runs or 1
