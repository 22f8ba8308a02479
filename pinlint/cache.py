"""The per-file result cache (``.pinlint_cache/`` or ``--cache-dir``).

One file per (pinlint version, analysis settings), holding for each checked file its size,
mtime, content digest and result. A file whose size and mtime are unchanged is a hit without
being read (ruff's fast path); otherwise its bytes are hashed and compared. The cache file is
written atomically and carries a checksum: a corrupt, truncated or foreign file is ignored,
never trusted. Concurrent runs each write a whole file; the last one wins.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import __version__
from .core.results import AnalysisSettings, FileResult
from .core.text import digest

_MAGIC = b"PINLINT-CACHE-1\n"


def cache_file(directory: Path, settings: AnalysisSettings) -> Path:
    key = hashlib.blake2b(f"{__version__}|{settings.key()}".encode(), digest_size=8).hexdigest()
    return directory / __version__ / f"{key}.cache"


class Cache:
    def __init__(self, directory: Path, settings: AnalysisSettings) -> None:
        self.directory = directory
        self.file = cache_file(directory, settings)
        self.entries: dict[str, FileResult] = self._load()
        self.dirty = False

    def _load(self) -> dict[str, FileResult]:
        try:
            blob = self.file.read_bytes()
        except OSError:
            return {}
        if not blob.startswith(_MAGIC) or len(blob) < len(_MAGIC) + 32:
            return {}
        checksum = blob[len(_MAGIC) : len(_MAGIC) + 32].decode("ascii", "replace")
        payload = blob[len(_MAGIC) + 32 :]
        if hashlib.blake2b(payload, digest_size=16).hexdigest() != checksum:
            return {}  # corrupt or half-written: ignore it
        try:
            entries = pickle.loads(payload)
        except Exception:  # noqa: BLE001 - any unpickling failure means "no cache"
            return {}
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, FileResult)}

    def lookup(self, path: Path) -> FileResult | None:
        entry = self.entries.get(str(path))
        if entry is None or entry.error is not None:
            return None
        try:
            info = path.stat()
        except OSError:
            return None
        if info.st_size == entry.size and info.st_mtime_ns == entry.mtime_ns:
            return entry
        if info.st_size != entry.size:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if digest(data) == entry.digest:
            entry.mtime_ns = info.st_mtime_ns
            self.dirty = True
            return entry
        return None

    def store(self, result: FileResult) -> None:
        if result.error is None and result.analysis is not None:
            self.entries[result.path] = result
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        payload = pickle.dumps(self.entries, protocol=pickle.HIGHEST_PROTOCOL)
        checksum = hashlib.blake2b(payload, digest_size=16).hexdigest().encode()
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by pinlint.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + checksum + payload)
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only checkout still lints; it just does not cache
