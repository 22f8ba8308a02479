"""Which files a check reads, grouped by the configuration that applies to each."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pinlint.app.request import CheckPlan, CheckRequest, RequestError, exclude_patterns, force_exclude
from pinlint.config import Config
from pinlint.discovery import Excluder

#: (configuration, its files), the base configuration's group first.
Groups = list[tuple[Config, list[Path]]]


@dataclass
class FileGroups:
    groups: Groups
    #: (path, message): what discovery could not follow (e.g. a symlink out of the project).
    problems: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def files(self) -> list[Path]:
        return [file for _config, group in self.groups for file in group]


def discover_files(plan: CheckPlan) -> FileGroups:
    """Raises ``RequestError`` (one message per path) when a path given does not exist."""
    from pinlint.discovery import discover

    request, config = plan.request, plan.resolver.base
    started = time.perf_counter()
    found = discover(
        request.path_list,
        root=config.root,
        exclude=exclude_patterns(request, config),
        respect_gitignore=config.respect_gitignore if request.respect_gitignore is None else request.respect_gitignore,
        force_exclude=force_exclude(request, config),
        project=config.project_root,
    )
    if found.missing:
        raise RequestError(*(f"{missing}: no such file or directory" for missing in found.missing))
    groups = plan.resolver.group(found.files)
    groups = _nested_excludes(groups, config, set(_explicit_files(request.path_list)), request)
    return FileGroups(groups, list(found.problems), time.perf_counter() - started)


def _explicit_files(paths: list[str]) -> list[Path]:
    return [Path(p).absolute() for p in paths if Path(p).is_file()]


def _nested_excludes(groups: Groups, base: Config, explicit: set[Path], request: CheckRequest) -> Groups:
    """A nested configuration's `exclude` / `extend-exclude` apply below its directory (the walk
    used the base configuration's). Files named on the command line stay, as in discovery."""
    out = []
    for config, files in groups:
        if config is base:
            out.append((config, files))
            continue
        excluded = _ExcludedBelow(Excluder(exclude_patterns(request, config), config.root), config.root.resolve())
        kept = [
            file
            for file in files
            if (file in explicit and not force_exclude(request, config)) or not excluded.file(file)
        ]
        out.append((config, kept))
    return out


class _ExcludedBelow:
    """Whether a file or one of its directories strictly below ``root`` (once resolved) matches
    the exclusions. Each directory is resolved and matched once, since a group's files share
    their directories and resolving costs a system call per path component."""

    def __init__(self, excluder: Excluder, root: Path) -> None:
        self._excluder = excluder
        self._prefix = os.path.join(str(root), "")
        self._directories: dict[Path, bool] = {}
        self._resolved: dict[Path, str] = {}

    def file(self, path: Path) -> bool:
        return self._matches(path) or self._directory(path.parent)

    def _directory(self, path: Path) -> bool:
        out = self._directories.get(path)
        if out is None:
            out = self._matches(path) or (path.parent != path and self._directory(path.parent))
            self._directories[path] = out
        return out

    def _matches(self, path: Path) -> bool:
        return self._resolve(path).startswith(self._prefix) and self._excluder.excluded(path)

    def _resolve(self, path: Path) -> str:
        resolved = self._resolved.get(path)
        if resolved is None:
            if path.parent == path or path.name in (".", "..") or path.is_symlink():
                resolved = str(path.resolve())
            else:
                # Not a link: its name in its resolved directory (one lstat, not one per component).
                resolved = os.path.join(self._resolve(path.parent), path.name)
            self._resolved[path] = resolved
        return resolved
