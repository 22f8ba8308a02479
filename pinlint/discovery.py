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
from pathlib import Path


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    #: (path, message) for paths that could not be walked or read.
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: Paths given on the command line that do not exist.
    missing: list[str] = field(default_factory=list)


class GitIgnore:
    """The patterns of one ``.gitignore`` file, matched against paths below its directory."""

    def __init__(self, base: Path, lines: list[str]) -> None:
        self.base = base
        self.rules: list[tuple[re.Pattern[str], bool, bool]] = []  # (regex, negated, dir_only)
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#"):
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
            self.rules.append((_glob_to_regex(line, anchored), negated, dir_only))

    @classmethod
    def load(cls, directory: Path) -> "GitIgnore | None":
        path = directory / ".gitignore"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        ignore = cls(directory, text.splitlines())
        return ignore if ignore.rules else None

    def match(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` pattern; None: no pattern matched."""
        verdict: bool | None = None
        for regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.fullmatch(relative):
                verdict = not negated
        return verdict


def _glob_to_regex(glob: str, anchored: bool) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    pattern = "".join(out)
    if not anchored:
        pattern = "(?:.*/)?" + pattern
    return re.compile(pattern)


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
        name = path.name
        if name in self.literal_names:
            return True
        for pattern in self.glob_names:
            if fnmatch.fnmatchcase(name, pattern):
                return True
        if self.path_patterns:
            text = str(path if path.is_absolute() else path.absolute())
            relative = text[len(self.root_text):] if text.startswith(self.root_text) else None
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
) -> Discovery:
    result = Discovery()
    excluder = Excluder(exclude, root)
    seen: set[Path] = set()
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
        if path.is_dir():
            _walk(path, excluder, respect_gitignore, result, seen)
        else:
            resolved = path.absolute()
            if resolved not in seen:
                seen.add(resolved)
                result.files.append(resolved)
    return result


def _excluded_by_parents(path: Path, excluder: Excluder) -> bool:
    absolute = path.absolute()
    for part in [absolute, *absolute.parents]:
        if part == excluder.root or part == part.parent:
            break
        if excluder.excluded(part):
            return True
    return False


def _walk(top: Path, excluder: Excluder, respect_gitignore: bool, result: Discovery, seen: set[Path]) -> None:
    ignores: list[GitIgnore] = []
    if respect_gitignore:
        # .gitignore files above the starting directory (up to the repository root) apply too.
        for parent in reversed(list(top.absolute().parents)):
            ignore = GitIgnore.load(parent)
            if ignore:
                ignores.append(ignore)
    stack: list[tuple[Path, list[GitIgnore]]] = [(top.absolute(), ignores)]
    while stack:
        directory, inherited = stack.pop()
        local = list(inherited)
        if respect_gitignore:
            ignore = GitIgnore.load(directory)
            if ignore:
                local.append(ignore)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.problems.append((str(directory), f"cannot list directory: {exc.strerror or exc}"))
            continue
        subdirs = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_symlink = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError as exc:
                result.problems.append((entry.path, str(exc)))
                continue
            if excluder.excluded(path):
                continue
            if respect_gitignore and _ignored(path, is_dir, local):
                continue
            if is_dir:
                subdirs.append(path)
            elif entry.name.endswith(".py"):
                if is_symlink and not path.exists():
                    result.problems.append((entry.path, "broken symbolic link"))
                    continue
                if not is_file:
                    continue  # a symlink to a directory named *.py, a socket...
                if path not in seen:
                    seen.add(path)
                    result.files.append(path)
        for sub in reversed(subdirs):
            stack.append((sub, local))


def _ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = False
    for ignore in ignores:
        try:
            relative = path.relative_to(ignore.base).as_posix()
        except ValueError:
            continue
        match = ignore.match(relative, is_dir)
        if match is not None:
            verdict = match
    return verdict
