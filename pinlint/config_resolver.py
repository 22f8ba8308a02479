"""Which configuration applies to each file of a run: the nearest one above it (ruff's
hierarchical model), found with one look per directory and loaded once."""

from __future__ import annotations

import os
from pathlib import Path

from pinlint.config import Config, config_here, load, load_path, parse_override
from pinlint.safeio import project_root


def _within(path: Path, root: Path) -> bool:
    """Lexically: ``path`` is ``root`` or below it (text, not ``Path.parents``: asked per directory)."""
    text, base = str(path), str(root)
    return text == base or text.startswith(base if base.endswith(os.sep) else base + os.sep)


class ConfigResolver:
    """Which configuration applies to a file: the nearest ``pinlint.toml`` / ``pyproject.toml``
    with ``[tool.pinlint]`` above it (ruff's hierarchical model), with the command line's
    ``--config KEY=VALUE`` overrides applied to every one of them. ``--config PATH`` makes that
    file apply to every file, as in ruff. A file with no configuration above it gets the one
    found from the current directory (``base``)."""

    def __init__(self, config_arg: str | None, cwd: Path | None = None) -> None:
        self.cwd = cwd or Path.cwd()
        self.base = load(config_arg, self.cwd)
        self.explicit = bool(config_arg) and Path(str(config_arg)).is_file()
        self.overrides = parse_override(config_arg) if config_arg and not self.explicit else {}
        self.override_where = f"--config {config_arg!r}" if self.overrides else ""
        # Keyed by resolved path, so that the base file reached through a symlinked directory is
        # still the base configuration (one group, one cache), not a second copy of it.
        self._by_path: dict[Path | None, Config] = {self.base.path.resolve() if self.base.path else None: self.base}
        self._by_directory: dict[Path, Path | None] = {}
        self._roots: list[Path] = []
        self._resolved: dict[Path, Path] = {}
        self._by_directory_text: dict[str, Config] = {}

    def for_file(self, file: Path) -> Config:
        if self.explicit:
            return self.base
        # Discovery's paths are absolute: their directory's text is the memo key (no Path work
        # for the thousands of files of a directory already seen).
        text = str(file)
        directory_text = os.path.dirname(text) if file.is_absolute() else None
        if directory_text is not None and directory_text in self._by_directory_text:
            return self._by_directory_text[directory_text]
        config = self._for_directory(file.absolute().parent)
        if directory_text is not None:
            self._by_directory_text[directory_text] = config
        return config

    def _for_directory(self, directory: Path) -> Config:
        found = self._nearest(directory)
        if found is None:
            return self.base
        if found not in self._resolved:
            self._resolved[found] = found.resolve()
        found = self._resolved[found]
        if found not in self._by_path:
            self._by_path[found] = load_path(found, self.cwd, self.overrides, self.override_where)
        return self._by_path[found]

    def _nearest(self, directory: Path) -> Path | None:
        """``find_config`` for a directory, reusing what its parent found: one look per
        directory of the run instead of one walk to the root per file."""
        memo = self._by_directory
        if directory in memo:
            return memo[directory]
        chain: list[Path] = []
        found: Path | None = None
        current = directory
        root = next((r for r in self._roots if _within(directory, r)), None)
        if root is None:
            root = project_root(directory)
            self._roots.append(root)
        while True:
            if current in memo:
                found = memo[current]
                break
            chain.append(current)
            here = config_here(current)
            if here is not None:
                found = here
                break
            if current == root or current.parent == current or not _within(current, root):
                found = None  # never above the project root
                break
            current = current.parent
        for visited in chain:
            memo[visited] = found
        return found

    def group(self, files: list[Path]) -> list[tuple[Config, list[Path]]]:
        """The files by the configuration that applies to them, in first-seen order."""
        groups: dict[int, tuple[Config, list[Path]]] = {}
        for file in files:
            config = self.for_file(file)
            groups.setdefault(id(config), (config, []))[1].append(file)
        return list(groups.values())
