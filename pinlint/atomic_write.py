"""The one way pinlint replaces a file: a temp file beside it, written and fsynced, given its
mode (and owner), renamed over the target, then the directory fsynced so that the rename
survives a crash too. A reader, a crash or SIGKILL sees the whole old file or the whole new
one; a failure (Ctrl-C included) leaves no temp file behind.

The rename replaces whatever the target path names, a symlink included. What a path should
mean is the caller's policy: ``fix.write.atomic_write`` (a source file: written through a link
that stays inside the project, mode and owner kept, guarded by the content digest) and
``safeio.write_replacing`` (an output file: a committed link is replaced, never followed).
Temp files are named ``.<name>.<random>.pinlint-tmp``: never ``*.py``, never linted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TEMP_SUFFIX = ".pinlint-tmp"


def replace_atomically(
    target: Path,
    data: bytes,
    *,
    mode: int,
    owner: tuple[int, int] | None = None,
    last_look: Callable[[], None] | None = None,
    durable: bool = True,
) -> None:
    """Replace ``target`` by a file holding ``data`` with permission bits ``mode``.

    ``owner`` (uid, gid) is given to the new file where the OS allows it. ``last_look`` runs
    just before the rename and raises to keep the old file (a concurrent edit). ``durable=False``
    skips the fsyncs, for files that are only a cache (a torn one is detected and ignored).
    """
    import tempfile  # imported here: most runs write nothing, and it costs start-up time

    directory = target.parent
    tmp: Path | None = None
    try:
        # Inside the try, so that Ctrl-C right after the temp file exists still removes it.
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=directory)
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp made it 0600
        if owner is not None:
            try:
                os.chown(tmp, *owner)
            except OSError:
                pass
        if last_look is not None:
            last_look()
        os.replace(tmp, target)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise
    if durable:
        _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    """Makes the rename itself durable (where a directory can be opened: not on Windows)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def default_mode() -> int:
    """The permission bits an ordinary ``open(path, "w")`` gives a new file (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
