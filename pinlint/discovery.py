"""Step 1 of the pipeline: find the Python files to check.

ruff's conventions: directories are walked, skipping excluded names and what ``.gitignore`` files
ignore; a file named explicitly is always checked unless ``--force-exclude``. Directory symlinks
are not followed while walking (no loops); problems are reported, never raised.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pinlint.safeio import MAX_CONFIG_BYTES, lexically_within, project_root, read_regular, within


@dataclass
class Discovery:
    #: The files found, absolute, as text (a project-wide lookup needs no `Path` objects).
    texts: list[str] = field(default_factory=list)
    #: (path, message) for paths that could not be walked or read.
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: Paths given on the command line that do not exist.
    missing: list[str] = field(default_factory=list)

    @cached_property
    def files(self) -> list[Path]:
        return [Path(text) for text in self.texts]


class _GlobRule:
    """One ``.gitignore`` pattern, matched segment by segment.

    Each path segment is matched with ``fnmatch``'s translation (no catastrophic backtracking,
    unlike one big regex with an unbounded ``.*`` per ``**``); ``**`` as a whole segment matches
    any number of segments through a memoized walk, so matching is polynomial in the number of
    segments whatever the pattern. ``**`` inside a segment is an ordinary ``*`` (git's rule).
    """

    def __init__(self, glob: str, anchored: bool) -> None:
        parts = [p for p in glob.split("/") if p]
        self.trailing_all = len(parts) > 1 and parts[-1] == "**"
        self.parts: list[re.Pattern[str] | None] = [
            None if part == "**" else re.compile(fnmatch.translate(_collapse_stars(part))) for part in parts
        ]
        if not anchored:
            self.parts.insert(0, None)  # `name` matches at any depth: `**/name`
        #: `**/name` (most patterns: `*.pyc`, `build`): only the last segment decides.
        self.last_only = self.parts[1] if len(self.parts) == 2 and self.parts[0] is None else None

    def match(self, relative: str) -> bool:
        if self.last_only is not None:
            return self.last_only.fullmatch(relative.rsplit("/", 1)[-1]) is not None
        segments = relative.split("/")
        parts = self.parts
        memo: dict[tuple[int, int], bool] = {}

        def at(i: int, j: int) -> bool:
            key = (i, j)
            if key in memo:
                return memo[key]
            if i == len(parts):
                result = j == len(segments)
            elif parts[i] is None:
                # `a/**` needs something inside `a`; elsewhere `**` may match no segment.
                least = 1 if (self.trailing_all and i == len(parts) - 1) else 0
                result = any(at(i + 1, k) for k in range(j + least, len(segments) + 1))
            else:
                result = j < len(segments) and parts[i].fullmatch(segments[j]) is not None and at(i + 1, j + 1)  # type: ignore[union-attr]
            memo[key] = result
            return result

        return at(0, 0)


def _collapse_stars(part: str) -> str:
    while "**" in part:
        part = part.replace("**", "*")
    return part


class GitIgnore:
    """The patterns of one ``.gitignore`` file, matched against paths below its directory."""

    #: Real .gitignore files are a few KB; a bigger one (or a link to /dev/zero) is ignored.
    MAX_PATTERNS = 10_000
    MAX_PATTERN_LENGTH = 4096

    def __init__(self, base: Path, lines: list[str]) -> None:
        self.base = base
        self.base_text = str(base).rstrip(os.sep) + os.sep
        self.rules: list[tuple[_GlobRule, bool, bool]] = []  # (matcher, negated, dir_only)
        for raw in lines[: self.MAX_PATTERNS]:
            line = raw.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#") or len(line) > self.MAX_PATTERN_LENGTH:
                continue
            line = line.rstrip(" ") if not line.endswith("\\ ") else line
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            try:
                rule = _GlobRule(line, anchored)
            except re.error:
                continue  # a pattern git accepts but we cannot translate: skip it, not the run
            self.rules.append((rule, negated, dir_only))

    @classmethod
    def load(cls, directory: Path) -> "GitIgnore | None":
        path = directory / ".gitignore"
        try:
            # Bounded, regular files only: a committed link to /dev/zero or /dev/stdin is
            # ignored instead of exhausting memory or blocking.
            text = read_regular(path, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None
        ignore = cls(directory, text.splitlines())
        return ignore if ignore.rules else None

    def match(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` pattern; None: no pattern matched."""
        verdict: bool | None = None
        for rule, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if rule.match(relative):
                verdict = not negated
        return verdict


class Excluder:
    """ruff-style exclusion: a pattern without ``/`` matches any path component's name; one with
    ``/`` matches the path relative to the project root."""

    def __init__(self, patterns: list[str], root: Path) -> None:
        cleaned = [p.rstrip("/") for p in patterns if p.strip()]
        self.name_patterns = [p for p in cleaned if "/" not in p]
        self.path_patterns = [p.lstrip("./") if p.startswith("./") else p for p in cleaned if "/" in p]
        self.literal_names = {p for p in self.name_patterns if not any(c in p for c in "*?[")}
        self.glob_names = [p for p in self.name_patterns if p not in self.literal_names]
        self.root = root.resolve()
        self.root_text = str(self.root) + os.sep

    def excluded(self, path: Path) -> bool:
        return self.excluded_text(path.name, str(path if path.is_absolute() else path.absolute()))

    def excluded_text(self, name: str, text: str) -> bool:
        """``excluded`` for a path given as its name and its absolute text."""
        if name in self.literal_names:
            return True
        for pattern in self.glob_names:
            if fnmatch.fnmatchcase(name, pattern):
                return True
        if self.path_patterns:
            relative = text[len(self.root_text) :] if text.startswith(self.root_text) else None
            if relative is not None:
                for pattern in self.path_patterns:
                    if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*"):
                        return True
        return False


def discover(
    paths: list[str],
    *,
    root: Path,
    exclude: list[str],
    respect_gitignore: bool,
    force_exclude: bool,
    project: Path | None = None,
) -> Discovery:
    """``project``: the project root (default: the one ``root`` belongs to). Nothing above it
    is read (``.gitignore``s), and nothing a symlink leads to outside it is checked or fixed."""
    result = Discovery()
    excluder = Excluder(exclude, root)
    project = project or project_root(root)
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            result.missing.append(raw)
            continue
        if force_exclude and _excluded_by_parents(path, excluder):
            continue
        if path.is_symlink() and not path.exists():
            result.problems.append((raw, "broken symbolic link"))
            continue
        # A path inside the project that a (committed) symlink leads out of it: never walked,
        # read or fixed. A path the user names outside the project is their explicit choice.
        if lexically_within(path, project) and not within(path, project):
            result.problems.append((raw, "symbolic link to outside the project; skipped"))
            continue
        if path.is_dir():
            _walk(path, excluder, respect_gitignore, result, seen, project)
        else:
            resolved = path.absolute()
            if str(resolved) not in seen:
                seen.add(str(resolved))
                result.texts.append(str(resolved))
    return result


def _excluded_by_parents(path: Path, excluder: Excluder) -> bool:
    absolute = path.absolute()
    for part in [absolute, *absolute.parents]:
        if part == excluder.root or part == part.parent:
            break
        if excluder.excluded(part):
            return True
    return False


def _walk(
    top: Path, excluder: Excluder, respect_gitignore: bool, result: Discovery, seen: set[str], project: Path
) -> None:
    # Paths are strings while walking and in the result (a project has thousands of files:
    # `Path` objects cost more than the walk); `Discovery.files` makes them when asked.
    ignores: list[GitIgnore] = []
    inside = lexically_within(top, project)
    if respect_gitignore:
        # .gitignore files above the starting directory apply too, up to the project root
        # and never above it (a .gitignore planted in a shared parent must not un-lint us).
        for parent in reversed(list(top.absolute().parents)):
            if not inside or not lexically_within(parent, project):
                continue
            ignore = GitIgnore.load(parent)
            if ignore:
                ignores.append(ignore)
    stack: list[tuple[str, list[GitIgnore]]] = [(str(top.absolute()), ignores)]
    while stack:
        directory, inherited = stack.pop()
        local = list(inherited)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.problems.append((directory, f"cannot list directory: {exc.strerror or exc}"))
            continue
        # Only a directory that lists one has a .gitignore (most do not: no failed open each).
        if respect_gitignore and any(entry.name == ".gitignore" for entry in entries):
            ignore = GitIgnore.load(Path(directory))
            if ignore:
                local.append(ignore)
        subdirs = []
        for entry in entries:
            try:
                is_symlink = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError as exc:
                result.problems.append((entry.path, str(exc)))
                continue
            if not is_dir and not entry.name.endswith(".py"):
                continue  # neither walked nor checked: no need to ask whether it is excluded
            text = entry.path
            if excluder.excluded_text(entry.name, text):
                continue
            if respect_gitignore and _ignored(text, is_dir, local):
                continue
            if is_dir:
                subdirs.append(text)
            else:
                if is_symlink and not os.path.exists(text):
                    result.problems.append((entry.path, "broken symbolic link"))
                    continue
                if not is_file:
                    continue  # a symlink to a directory named *.py, a socket...
                if is_symlink and inside and not within(Path(text), project):
                    # Reading it would quote an outside file back (and --fix would copy it in).
                    result.problems.append((entry.path, "symbolic link to outside the project; skipped"))
                    continue
                if text not in seen:
                    seen.add(text)
                    result.texts.append(text)
        for sub in reversed(subdirs):
            stack.append((sub, local))


def _ignored(path: str, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = False
    text = path
    for ignore in ignores:
        # A string prefix, not `Path.relative_to` (the walk's paths extend the bases as given).
        base = ignore.base_text
        if not text.startswith(base):
            continue
        relative = text[len(base) :]
        if os.sep != "/":
            relative = relative.replace(os.sep, "/")
        match = ignore.match(relative, is_dir)
        if match is not None:
            verdict = match
    return verdict
