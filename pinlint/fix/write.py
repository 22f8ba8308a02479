"""Atomic, careful writes: temp file in the same directory + fsync + rename.

A reader (or a crash, or SIGKILL) sees either the whole old file or the whole new one. The
file's permissions are kept. A file that changed on disk since pinlint read it is not written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pinlint.core.text import digest


class ChangedOnDisk(Exception):
    """The file was modified after pinlint read it; writing would lose that change."""


class OutsideProject(PermissionError):
    """The file is a symlink (or lies under one) that leads out of its project: not written."""


def _write_target(path: Path) -> Path:
    """Where a write to ``path`` must go: through a symlink to its target (so the link stays a
    link) when that target lies inside the project ``path`` belongs to; refused otherwise."""
    from pinlint.safeio import project_root, within

    real = Path(os.path.realpath(path))
    if real == Path(os.path.abspath(path)):
        return path
    root = project_root(Path(os.path.abspath(path)).parent)
    if not within(real, root):
        raise OutsideProject(f"symbolic link to {real}, outside the project; left alone")
    return real


def atomic_write(path: Path, data: bytes, expected_digest: str) -> None:
    """Replace ``path`` by ``data`` if its current content still has ``expected_digest``."""
    path = _write_target(path)
    try:
        current = path.read_bytes()
    except OSError as exc:
        raise ChangedOnDisk(f"cannot re-read before writing: {exc.strerror or exc}") from exc
    if digest(current) != expected_digest:
        raise ChangedOnDisk("modified since pinlint read it; not overwritten (run pinlint again)")
    info = path.stat()
    if not os.access(path, os.W_OK):
        raise PermissionError(f"{path}: permission denied (file is read-only)")
    import tempfile  # imported here: most runs write nothing, and it costs start-up time

    directory = path.parent
    tmp: Path | None = None
    try:
        # Inside the try, so that Ctrl-C right after the temp file exists still removes it.
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pinlint-tmp", dir=directory)
        tmp = Path(tmp_name)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # Never setuid/setgid on a file now owned by whoever runs pinlint (root over another
        # user's checkout); as root, give the file back to its owner.
        os.chmod(tmp, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
        if hasattr(os, "geteuid") and os.geteuid() == 0 and (info.st_uid, info.st_gid) != (0, 0):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except OSError:
                pass
        # Last look: a write that raced us between the check above and now is not clobbered.
        if digest(path.read_bytes()) != expected_digest:
            raise ChangedOnDisk("modified while pinlint was writing; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)  # make the rename itself durable
    except OSError:
        pass
    finally:
        os.close(dir_fd)
