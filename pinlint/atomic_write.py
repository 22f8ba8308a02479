"""The one way pinlint replaces a file: a temp file beside it, written and fsynced, given its
mode (and owner), renamed over the target, then the directory fsynced so that the rename
survives a crash too. A reader, a crash or SIGKILL sees the whole old file or the whole new
one; a failure leaves no temp file behind, and Ctrl-C or SIGTERM during the write is held until
the write is over (a signal handled in the middle could land between the temp file's creation and
its cleanup).

The rename replaces whatever the target path names, a symlink included. What a path should
mean is the caller's policy: ``fix.write.atomic_write`` (a source file: written through a link
that stays inside the project, mode and owner kept, guarded by the content digest) and
``safeio.write_replacing`` (an output file: a committed link is replaced, never followed).
Temp files are named ``.<name>.<random>.pinlint-tmp``: never ``*.py``, never linted.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

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
    with _signals_held():
        _replace(target, data, mode=mode, owner=owner, last_look=last_look, durable=durable)


#: Signals whose handling waits for the end of a write: Ctrl-C, and the polite kill.
_HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Record SIGINT and SIGTERM while the body runs, then deliver them to the handlers that
    were there before. Python runs handlers in the main thread only, so elsewhere nothing is held
    (and nothing needs to be: no KeyboardInterrupt is raised in another thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        arrived.append(signum)

    previous: dict[int, Callable[[int, FrameType | None], object] | int] = {}
    try:
        for signum in _HELD:
            handler = signal.getsignal(signum)
            if handler is None:  # installed outside Python: it could not be put back
                continue
            previous[signum] = handler
            signal.signal(signum, hold)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(arrived):
            # The OS delivers it again, now to the previous handler (KeyboardInterrupt, or death).
            signal.raise_signal(signum)


def _replace(
    target: Path,
    data: bytes,
    *,
    mode: int,
    owner: tuple[int, int] | None,
    last_look: Callable[[], None] | None,
    durable: bool,
) -> None:
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
