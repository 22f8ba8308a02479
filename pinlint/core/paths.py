"""How a file's path is shown: relative to a root (the current directory for people, the project
root for baselines and CI formats), with ``/`` separators.

The plain (absolute, normalised) paths are tried first, so that a symlinked file keeps the name
the user sees and a dangling link is shown by its own name; the resolved ones second, for a root
reached through a symlink. Outside the root, people get the name as it was given and machine
formats an absolute path.
"""

from __future__ import annotations

import os
from pathlib import PurePath

PathLike = str | os.PathLike[str]


def relative_path(filename: PathLike, root: PathLike) -> str | None:
    """``filename`` relative to ``root`` with ``/`` separators; None when it lies outside."""
    path = os.path.abspath(os.fspath(filename))
    base = os.path.abspath(os.fspath(root))
    for cand_path, cand_base in ((path, base), (os.path.realpath(path), os.path.realpath(base))):
        try:
            if os.path.commonpath([cand_path, cand_base]) == cand_base:
                return PurePath(os.path.relpath(cand_path, cand_base)).as_posix()
        except ValueError:  # different drives on Windows
            continue
    return None


def display_path(filename: PathLike, root: PathLike) -> str:
    """For people: relative to ``root``, else the name as given."""
    relative = relative_path(filename, root)
    return os.fspath(filename) if relative is None else relative


def relative_posix_path(filename: PathLike, root: PathLike) -> str:
    """For machine formats and baselines: relative to ``root``, else absolute (``/`` separators)."""
    relative = relative_path(filename, root)
    return PurePath(os.path.abspath(os.fspath(filename))).as_posix() if relative is None else relative
