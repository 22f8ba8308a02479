"""What a check is asked to do (``CheckOptions``), and what the cache and the analysis derive from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pinlint.config import Config
from pinlint.core.results import AnalysisSettings
from pinlint.profile_findings import ProfileIndex


@dataclass
class CheckOptions:
    selected: set[str]
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    ignore_noqa: bool = False
    jobs: int | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    #: A runtime profile (``--profile``): counts go on the findings, hottest first.
    profile: ProfileIndex | None = None
    #: With a profile: drop findings whose site ran fewer times (``--hot-only``/``--min-runs``).
    min_runs: int | None = None


def uses_cache(options: CheckOptions) -> bool:
    return options.use_cache and not (options.fix or options.diff)


def cache_dir(config: Config, options: CheckOptions) -> Path:
    return options.cache_dir or config.cache_dir or (config.root / ".pinlint_cache")


def analysis_settings(config: Config, selected: set[str]) -> AnalysisSettings:
    return AnalysisSettings(
        rules=tuple(sorted(selected)),
        pinned_functions=tuple(sorted(config.pinned_functions)),
        host_functions=tuple(sorted(config.host_functions)),
    )
