"""The per-file result cache (``.pinlint_cache/`` or ``--cache-dir``).

One file per (pinlint's code, analysis settings), holding for each checked file its size,
mtime, content digest and result. A file whose size and mtime are unchanged is a hit without
being read (ruff's fast path); otherwise its bytes are hashed and compared.

The cache usually lives inside the checkout, so a pull request can commit one. It is therefore
treated as hostile input:

- it is plain JSON, decoded against the exact shape of the result dataclasses
  (:mod:`pinlint.datacodec`); nothing in it can make pinlint construct or run anything;
- it is authenticated with an HMAC whose key is created on first use in the *user's* cache
  folder (``$XDG_CACHE_HOME/pinlint/cache-key``, never inside a project), so a committed cache
  — even a well-formed one holding empty results — is never a hit and cannot hide findings;
- anything unexpected (wrong MAC, wrong shape, unknown keys, oversized, truncated, a symlink,
  another encoding) means "no cache", silently;
- writes never follow links: the folder, its ``.gitignore`` and the cache file are created
  with ``O_NOFOLLOW``/``O_EXCL`` or by renaming a temp file over the old one.

Concurrent runs each write a whole file; the last one wins.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pinlint import __version__, datacodec, source
from pinlint.atomic_write import replace_atomically
from pinlint.core.results import EMPTY, AnalysisSettings, FileResult
from pinlint.core.text import digest
from pinlint.safeio import MAX_SOURCE_BYTES, read_regular

#: Never reused: a number once written stands for that layout (2 to 5 were written before).
_MAGIC = b"PINLINT-CACHE-6\n"
_FORMAT = "pinlint-cache-6"
#: Far above any real cache (about 200 bytes per file checked), far below a memory problem.
MAX_CACHE_BYTES = 256 * 1024 * 1024
_KEY_BYTES = 32


def cache_file(directory: Path, settings: AnalysisSettings) -> Path:
    key = hashlib.blake2b(f"{code_identity()}|{settings.key()}".encode(), digest_size=8).hexdigest()
    return directory / __version__ / f"{key}.cache"


_IDENTITY: list[str] = []


def code_identity() -> str:
    """pinlint's version and a digest of the names, sizes and mtimes of its own files (code and
    rule tables): results cached by other code of the same version (an edited editable install,
    a reinstall of a newer build) are never read as this code's."""
    if not _IDENTITY:
        package = Path(__file__).resolve().parent
        parts = []
        for path in sorted(package.rglob("*")):
            if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
                try:
                    info = path.stat()
                    stamp = f"{info.st_size}:{info.st_mtime_ns}"
                except OSError:
                    stamp = "?"  # gone or unreadable since the listing: named, not fatal to the run
                parts.append(f"{path.relative_to(package).as_posix()}:{stamp}")
        digest_ = hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()
        _IDENTITY.append(f"{__version__}+{digest_}")
    return _IDENTITY[0]


def _key_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pinlint"


def _machine_key() -> bytes | None:
    """This user's cache key, created on first use; None when it cannot be had safely."""
    path = _key_dir() / "cache-key"
    try:
        data = read_regular(path, 4096, follow_symlinks=False)
        info = path.lstat()
        # Another user's (or a group/world-readable) key could be known to someone else.
        if info.st_uid == os.geteuid() and not info.st_mode & 0o077 and len(data) == _KEY_BYTES:
            return data
        return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _machine_key_existing(path)  # another run created it just now
    except OSError:
        return None
    key = os.urandom(_KEY_BYTES)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def _machine_key_existing(path: Path) -> bytes | None:
    try:
        data = read_regular(path, 4096, follow_symlinks=False)
    except OSError:
        return None
    return data if len(data) == _KEY_BYTES else None


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).hexdigest().encode()


def read_signed(path: Path, magic: bytes, limit: int = MAX_CACHE_BYTES) -> bytes | None:
    """The payload of a file this user wrote with ``write_signed``; None for anything else (a
    committed or forged file, a link, a truncated one): such files are never trusted."""
    key = _machine_key()
    if key is None or not _is_real_dir(path.parent):
        return None
    try:
        blob = read_regular(path, limit, follow_symlinks=False)
    except OSError:
        return None
    header = len(magic) + 64 + 1
    if not blob.startswith(magic) or len(blob) < header or blob[header - 1 : header] != b"\n":
        return None
    payload = blob[header:]
    if not hmac.compare_digest(blob[len(magic) : header - 1], _mac(key, payload)):
        return None
    return payload


def read_signed_json(path: Path, magic: bytes, limit: int = MAX_CACHE_BYTES) -> dict[str, Any] | None:
    """``read_signed``'s payload as a JSON object; None for anything else."""
    payload = read_signed(path, magic, limit)
    if payload is None:
        return None
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data if type(data) is dict else None


def write_signed(directory: Path, path: Path, magic: bytes, payload: bytes) -> None:
    """Write ``payload`` signed with this user's key, inside ``directory`` (a real folder, no
    link followed); silently nothing when that cannot be done safely."""
    key = _machine_key()
    if key is None or not _prepare(directory, path.parent):
        return
    try:
        _write_signed_file(path, key, magic, payload)
    except OSError:
        pass  # read-only: nothing is remembered


def _write_signed_file(path: Path, key: bytes, magic: bytes, payload: bytes) -> None:
    # The rename replaces a planted link rather than following it. No fsync: a cache file torn
    # by a crash fails its MAC and is ignored.
    replace_atomically(path, magic + _mac(key, payload) + b"\n" + payload, mode=0o600, durable=False)


def _prepare(root: Path, directory: Path) -> bool:
    """Create the cache folder and its ``.gitignore``, following no link; False: refuse."""
    for folder in (root, directory):
        try:
            folder.mkdir(parents=folder is root, exist_ok=True)
        except (FileExistsError, OSError):
            return False
        if not _is_real_dir(folder):
            return False  # a (committed) symlink: never write through it
    gitignore = root / ".gitignore"
    if not os.path.lexists(gitignore):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(gitignore, flags, 0o644)
        except OSError:
            return True  # someone else made one meanwhile; the cache file is still fine
        with os.fdopen(fd, "w") as fh:
            fh.write("# Automatically created by pinlint.\n*\n")
    return True


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


class Cache:
    def __init__(self, directory: Path, settings: AnalysisSettings) -> None:
        self.directory = directory
        self.settings_key = settings.key()
        self.file = cache_file(directory, settings)
        self.key = _machine_key()
        #: Analyses read but not decoded yet (by path): most runs look at few of them.
        self._raw: dict[str, Any] = {}
        #: The file's table of (path, digest) reads that entries and their analyses index.
        self._reads: list[tuple[str, str]] = []
        self.entries: dict[str, FileResult] = self._load()
        self.dirty = False
        #: Current digests of other files the cached analyses depend on, asked once per run.
        self._current: dict[str, str] = {}
        #: Whether a directory exists now (most recorded paths are absent, below missing ones).
        self._directories: dict[str, bool] = {}
        self._by_abs: dict[str, FileResult] | None = None

    def _load(self) -> dict[str, FileResult]:
        if self.key is None or not _is_real_dir(self.file.parent):
            return {}
        try:
            blob = read_regular(self.file, MAX_CACHE_BYTES, follow_symlinks=False)
        except OSError:
            return {}
        header = len(_MAGIC) + 64 + 1
        if not blob.startswith(_MAGIC) or len(blob) < header or blob[header - 1 : header] != b"\n":
            return {}
        payload = blob[header:]
        if not hmac.compare_digest(blob[len(_MAGIC) : header - 1], _mac(self.key, payload)):
            return {}  # not written by this user on this machine, or corrupt: ignore it
        try:
            return _decode_entries(json.loads(payload), self.settings_key, self._raw, self._reads)
        except (ValueError, TypeError, KeyError, RecursionError, datacodec.ShapeError):
            self._raw.clear()
            self._reads.clear()
            return {}  # any shape we did not write means "no cache"

    def lookup(self, path: Path) -> FileResult | None:
        entry = self._current_entry(path)
        if entry is None or not self._holds(entry.triage_reads) or not self._decode(entry):
            return None
        return entry if self._dependencies_hold(entry) else None

    def reports_elsewhere(self, path: Path | str) -> bool | None:
        """For a project file outside the run: None when its cached result does not hold (it
        must be read), else whether that result has findings for other files. Its analysis is
        not decoded to answer: a one-file run asks this of every file of the project."""
        entry = self._current_entry(path)
        if entry is None or not self._holds(entry.triage_reads):
            return None  # (kept out by the second triage, which may now keep it in)
        raw = self._raw.get(entry.path)
        if raw is None:
            if entry.analysis is None or not self._dependencies_hold(entry):
                return None
            return bool(entry.analysis.foreign)
        depends_on = _indexed_reads(raw, self._reads)
        if depends_on is None:
            return None  # not a shape this version writes: read the file
        if not self._holds(depends_on):
            return None
        return bool(raw.get("foreign"))

    def _decode(self, entry: FileResult) -> bool:
        """Decode ``entry``'s analysis if still raw; False (and the entry dropped) if it has
        a shape this version does not write."""
        raw = self._raw.pop(entry.path, None)
        if raw is None:
            return entry.analysis is not None
        depends_on = _indexed_reads(raw, self._reads)
        try:
            if depends_on is None:
                raise datacodec.ShapeError("depends_on")
            # The reads were checked with the table: not decoded again, pair by pair.
            decoded = datacodec.decode(_ANALYSIS_TYPE, {**raw, "depends_on": []})
            if decoded is not None:
                decoded.depends_on = depends_on
        except (datacodec.ShapeError, RecursionError):
            decoded = None
        if decoded is None:
            self.entries.pop(entry.path, None)
            self._by_abs = None
            self.dirty = True
            return False
        entry.analysis = decoded
        return True

    def _current_entry(self, path: Path | str) -> FileResult | None:
        """The entry for ``path`` if the file is unchanged (same size and time, else same
        digest); its analysis may still be undecoded."""
        entry = self.entries.get(str(path))
        if entry is None and os.path.isabs(path):
            # Another run named it relative to its directory (the project's other files are
            # looked up by absolute path).
            if self._by_abs is None:
                self._by_abs = {os.path.abspath(k): v for k, v in self.entries.items()}
            entry = self._by_abs.get(str(path))
        if entry is None or entry.error is not None:
            return None
        try:
            info = os.stat(path)
        except OSError:
            return None
        if info.st_size == entry.size and info.st_mtime_ns == entry.mtime_ns:
            return entry
        if info.st_size != entry.size:
            return None
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        if digest(data) == entry.digest:
            entry.mtime_ns = info.st_mtime_ns
            self.dirty = True
            return entry
        return None

    def _dependencies_hold(self, entry: FileResult) -> bool:
        """The other project files the analysis read are as they were (a helper imported from
        one of them may have changed what the file's copies receive)."""
        return self._holds(entry.analysis.depends_on if entry.analysis is not None else [])

    def _holds(self, depends_on: Iterable[Sequence[str]]) -> bool:
        for path, expected in depends_on:
            if path not in self._current:
                self._current[path] = self._digest_now(path)
            if self._current[path] != expected:
                return False
        return True

    def _digest_now(self, path: str) -> str:
        """What the analysis recorded for ``path`` (``ModuleFiles.consulted``), as it is now."""
        if not self._directory_present(os.path.dirname(path)):
            return ""  # below a missing directory (`src/` in a flat layout): one stat for them all
        try:
            info = os.stat(path)
        except OSError:
            return ""  # absent (most recorded paths: the places an import would look first)
        # The run names its files relative to where it runs; dependencies are absolute.
        entry = self.entries.get(path) or self.entries.get(os.path.relpath(path))
        if entry is not None and entry.digest:
            if info.st_size == entry.size and info.st_mtime_ns == entry.mtime_ns:
                return entry.digest  # the result cache knows it unchanged: no second read
        try:
            data = read_regular(path, MAX_SOURCE_BYTES)
        except OSError:
            return ""  # absent or unreadable, as the analysis records it
        try:
            source.decode(data)
        except source.DecodeError:
            return ""
        return digest(data)

    def _directory_present(self, directory: str) -> bool:
        """Whether ``directory`` and every directory above it exist now (asked once each)."""
        if not directory:
            return True  # a relative path's directory: where the run is
        known = self._directories.get(directory)
        if known is None:
            parent = os.path.dirname(directory)
            known = (parent == directory or self._directory_present(parent)) and os.path.isdir(directory)
            self._directories[directory] = known
        return known

    def store(self, result: FileResult) -> None:
        if result.error is None and result.analysis is not None:
            self._raw.pop(result.path, None)
            self.entries[result.path] = result
            self.dirty = True

    def save(self) -> None:
        if not self.dirty or self.key is None:
            return
        try:
            payload = json.dumps(
                _encode_entries(self.entries, self.settings_key, self._raw, self._reads), separators=(",", ":")
            ).encode()
        except (ValueError, TypeError, datacodec.ShapeError):
            return
        try:
            if not self._prepare_directory():
                return
            _write_signed_file(self.file, self.key, _MAGIC, payload)
        except OSError:
            pass  # a read-only checkout still lints; it just does not cache

    def _prepare_directory(self) -> bool:
        return _prepare(self.directory, self.file.parent)


def _encode_entries(
    entries: dict[str, FileResult],
    settings_key: str,
    raw: dict[str, Any] | None = None,
    read_table: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    out: dict[str, list[Any]] = {}
    raw = raw or {}
    #: The files second triages and analyses read, each once: thousands of entries name the
    #: same modules (and the same places an import looks first, absent).
    reads: dict[tuple[str, str], int] = {}
    for path, r in entries.items():
        # Most files hold nothing: `null` stands for the shared empty analysis. An analysis
        # never decoded is written back as it was read (its reads indexed in the new table).
        if path in raw:
            found = _indexed_reads(raw[path], read_table)
            if found is None:
                continue  # not a shape this version writes: the file is analysed again
            analysis, old = dict(raw[path]), found
        else:
            analysis = None if r.analysis is EMPTY else datacodec.encode(r.analysis)
            old = [tuple(d) for d in analysis["depends_on"]] if analysis is not None else []
        if analysis is not None:
            analysis["depends_on"] = [reads.setdefault(read, len(reads)) for read in old]  # type: ignore[call-overload]
        indexes = [reads.setdefault(tuple(read), len(reads)) for read in r.triage_reads]  # type: ignore[arg-type]
        out[path] = [r.size, r.mtime_ns, r.digest, r.triaged_in, analysis, indexes]
    return {
        "format": _FORMAT,
        "pinlint": code_identity(),
        "settings": settings_key,
        "reads": [list(read) for read in reads],
        "entries": out,
    }


def _indexed_reads(raw: Any, reads: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
    """A raw analysis's reads of other files (indexes into the cache file's table), or None
    when it is not a shape this version writes."""
    indexes = raw.get("depends_on") if type(raw) is dict else None
    if type(indexes) is not list or not all(type(i) is int and 0 <= i < len(reads) for i in indexes):
        return None
    return [reads[i] for i in indexes]


_ANALYSIS_TYPE = datacodec.typing.get_type_hints(FileResult)["analysis"]


def _decode_entries(
    data: Any, settings_key: str, raw: dict[str, Any], reads: list[tuple[str, str]]
) -> dict[str, FileResult]:
    """The entries; their analyses go to ``raw`` undecoded (``Cache._decode`` checks and
    builds one when it is asked for), the table of reads they index to ``reads``."""
    if type(data) is not dict or set(data) != {"format", "pinlint", "settings", "reads", "entries"}:
        raise datacodec.ShapeError("not a pinlint cache")
    if data["format"] != _FORMAT or data["pinlint"] != code_identity() or data["settings"] != settings_key:
        raise datacodec.ShapeError("another version or settings")
    entries, table = data["entries"], data["reads"]
    if type(entries) is not dict or type(table) is not list:
        raise datacodec.ShapeError("entries")
    for read in table:
        if type(read) is not list or len(read) != 2 or type(read[0]) is not str or type(read[1]) is not str:
            raise datacodec.ShapeError("reads")
        reads.append((read[0], read[1]))
    out: dict[str, FileResult] = {}
    for path, item in entries.items():
        if type(item) is not list or len(item) != 6:
            raise datacodec.ShapeError("entry")
        size, mtime_ns, file_digest, triaged_in, analysis, indexes = item
        if (
            type(size) is not int
            or type(mtime_ns) is not int
            or type(file_digest) is not str
            or type(triaged_in) is not bool
            or type(indexes) is not list
            or not all(type(i) is int and 0 <= i < len(reads) for i in indexes)
        ):
            raise datacodec.ShapeError("entry")
        if analysis is not None:
            raw[path] = analysis
        out[path] = FileResult(
            path=path,
            analysis=EMPTY if analysis is None else None,
            size=size,
            mtime_ns=mtime_ns,
            digest=file_digest,
            triaged_in=triaged_in,
            triage_reads=[reads[i] for i in indexes],
        )
    return out
