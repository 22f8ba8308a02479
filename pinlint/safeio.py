"""Careful file access for content that comes from a repository pinlint does not trust.

pinlint runs in CI on pull requests: file names, symlinks, ``.gitignore``s, configuration and
caches are all attacker-controlled. Everything here exists so that the rest of pinlint can say
"read this file" or "write that file" and get the safe behaviour by default:

- reads are bounded in size and only ever of regular files (a link to ``/dev/zero``, a FIFO or
  ``/dev/tty`` is refused instead of exhausting memory or blocking);
- the *project root* is found without looking above the repository (or above a world-writable
  directory such as ``/tmp``), so files planted in a shared parent never apply;
- writes replace files instead of following a link to outside the project (``atomic_write``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: Source files larger than this are not analysed (ruff skips huge files too): a file of
#: newlines that git packs into a few kilobytes would otherwise cost gigabytes of memory.
MAX_SOURCE_BYTES = 10 * 1024 * 1024
#: Configuration, ``.gitignore`` and baseline files: generous for real ones, tiny for memory.
MAX_CONFIG_BYTES = 1024 * 1024
MAX_BASELINE_BYTES = 64 * 1024 * 1024

_ROOT_MARKERS = (".git", ".hg")
_CONFIG_MARKERS = ("pyproject.toml", "pinlint.toml", ".pinlint.toml")


class UnsafeFile(OSError):
    """A file pinlint refuses to read or write (not regular, too large, or outside the project)."""


def nonblocking_opener(path: str, flags: int) -> int:
    """An ``open(..., opener=)`` that cannot block on a FIFO (or a tty) named as a file."""
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))


def read_fd(fd: int, name: str, limit: int) -> bytes:
    """The bytes of the open descriptor ``fd`` if it is a regular file of at most ``limit`` bytes.

    The checks are made on the descriptor, so a file swapped between check and read cannot slip
    through; one byte more than allowed is read to notice a file that grew meanwhile.
    """
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(f"{name}: not a regular file")
    if info.st_size > limit:
        raise UnsafeFile(f"{name}: larger than {limit // (1024 * 1024)} MiB")
    chunks = []
    remaining = limit + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UnsafeFile(f"{name}: larger than {limit // (1024 * 1024)} MiB")
    return data


def read_regular(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (see
    :func:`read_fd`); a FIFO or device is refused without blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        return read_fd(fd, os.fspath(path), limit)
    finally:
        os.close(fd)


def _world_writable(directory: Path) -> bool:
    try:
        return bool(directory.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True


def project_root(start: Path) -> Path:
    """The root of the project ``start`` belongs to, never above the repository.

    The nearest ancestor holding ``.git``/``.hg``; without one, the nearest holding a
    ``pyproject.toml``/``pinlint.toml``; without either, ``start`` itself. The search stops below
    any world-writable directory (``/tmp``): anyone can plant a marker or a config file there.
    """
    start = Path(os.path.abspath(start))
    chain: list[Path] = []
    for directory in [start, *start.parents]:
        if directory != start and _world_writable(directory):
            break
        chain.append(directory)
    for directory in chain:
        if any(os.path.lexists(directory / marker) for marker in _ROOT_MARKERS):
            return directory
    for directory in chain:
        if any(os.path.isfile(directory / marker) for marker in _CONFIG_MARKERS):
            return directory
    return start


def within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """``path``, with every symlink resolved, lies inside ``root`` (also resolved)."""
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def lexically_within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """``path`` names something inside ``root`` without resolving symlinks (``..`` collapsed)."""
    real = os.path.abspath(path)
    base = os.path.abspath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def write_replacing(
    path: str | os.PathLike[str],
    data: bytes,
    root: str | os.PathLike[str] | None,
    *,
    mode: int | None = None,
) -> None:
    """Write ``data`` to ``path`` by renaming a temp file over it (``atomic_write``).

    A rename replaces a symlink at ``path`` instead of writing through it. A relative ``path``
    whose directory resolves outside ``root`` (a committed symlinked folder) is refused; an
    absolute one is the user's explicit choice (and so is any path when ``root`` is None). The
    file gets ``mode``, by default what an ordinary ``open(path, "w")`` would give it.
    """
    from pinlint.atomic_write import default_mode, replace_atomically

    target = Path(path)
    if root is not None and not target.is_absolute() and not within(target.parent, root):
        raise UnsafeFile(f"{target}: its folder resolves outside the project; not written")
    replace_atomically(target, data, mode=default_mode() if mode is None else mode)


_C0_C1 = {c: f"\\x{c:02x}" for c in [*range(0x09), *range(0x0A, 0x20), 0x7F, *range(0x80, 0xA0)]}
_C0_C1.update({0x2028: "\\u2028", 0x2029: "\\u2029"})
# Bytes of a non-UTF-8 file name arrive as lone surrogates (surrogateescape): show the byte.
_C0_C1.update({0xDC80 + b: f"\\x{0x80 + b:02x}" for b in range(0x80)})


def printable(text: str) -> str:
    """``text`` with control characters (except tab) shown as escapes: repository text (file
    names, source lines) must not move the cursor, retitle the terminal or end a CI log line."""
    return text.translate(_C0_C1)


def printable_line(text: str) -> str:
    """Like :func:`printable`, keeping newlines (for multi-line excerpts of source)."""
    return "\n".join(printable(part) for part in text.split("\n"))


# Inside JSON strings (the only place they can occur): a lone surrogate (a non-UTF-8 file name)
# cannot be encoded to UTF-8, and U+2028/U+2029/U+0085 end a line for str.splitlines() readers.
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in [0x85, 0x2028, 0x2029, *range(0xD800, 0xE000)]}


def json_text(text: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` that is always valid UTF-8 and
    one line per record for line-splitting readers (the same JSON value, escaped)."""
    return text.translate(_JSON_ESCAPES)
