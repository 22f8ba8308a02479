"""Rewriting a source file (--fix, --add-noqa): atomically (``atomic_write.replace_atomically``),
through a symlink whose target stays in the project, keeping the file's permissions. A file
that changed on disk since pinlint read it is not written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pinlint.atomic_write import replace_atomically
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

    def last_look() -> None:
        # A write that raced us between the check above and the rename is not clobbered.
        if digest(path.read_bytes()) != expected_digest:
            raise ChangedOnDisk("modified while pinlint was writing; not overwritten")

    # Never setuid/setgid on a file now owned by whoever runs pinlint (root over another
    # user's checkout); as root, give the file back to its owner.
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0 and (info.st_uid, info.st_gid) != (0, 0)
    replace_atomically(
        path,
        data,
        mode=stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID),
        owner=(info.st_uid, info.st_gid) if as_root else None,
        last_look=last_look,
    )
