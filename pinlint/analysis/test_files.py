"""Which files are tests. A test hands host tensors where the code hands device ones (a unit
test of a builder passes CPU inputs): its hand-offs into the project's functions say nothing of
how the project copies, so they are neither followed nor reported."""

from __future__ import annotations

import functools
import os

_TEST_DIRECTORIES = frozenset({"test", "tests", "testing"})


def is_test_file(path: str, root: str) -> bool:
    """pytest's and unittest's conventions: ``test_*.py``, ``*_test.py``, ``conftest.py``, or a
    file under a ``tests``/``test``/``testing`` directory of the project."""
    if is_test_name(os.path.basename(path)):
        return True
    # (Asked of every file of a project by a one-file run: each directory is worked out once.)
    return in_test_directory(os.path.dirname(path if os.path.isabs(path) else os.path.abspath(path)), root)


def is_test_name(name: str) -> bool:
    """A file name that pytest or unittest collects (whatever its directory)."""
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


@functools.lru_cache(maxsize=8192)
def in_test_directory(directory: str, root: str) -> bool:
    """``directory`` (absolute) is, or is below, a test directory of the project at ``root``."""
    base = os.path.abspath(root)
    inside = directory[len(base) :] if directory.startswith(base) else directory
    return any(part in _TEST_DIRECTORIES for part in inside.split(os.sep))
