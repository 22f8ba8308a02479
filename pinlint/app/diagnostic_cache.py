"""The diagnostics of the files with findings, kept for the next run.

A warm run re-analyses nothing (the result cache), but turning findings into diagnostics still
parses each such file with ``ast`` and builds its scope model to complete the fixes. So the
finished diagnostics are kept too, keyed by the file's content digest, under a fingerprint of
everything else they are made from: pinlint's version, the analysis settings, the configuration
and options of the run, the project's pin-memory idiom (every file's facts) and line length. A
change to any of them gives another fingerprint, and the kept diagnostics are not used.

Signed like the result cache (``cache.read_signed``): only this user's own file is trusted.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinlint import __version__, datacodec
from pinlint.app.options import CheckOptions, cache_dir
from pinlint.cache import code_identity
from pinlint.config import Config
from pinlint.core.diagnostics import Diagnostic
from pinlint.core.results import AnalysisSettings, FileResult

if TYPE_CHECKING:
    from pinlint.app.engine import DiagnosticBuilder

_MAGIC = b"PINLINT-DIAGNOSTICS-1"
_MAX_BYTES = 64 * 1024 * 1024


def fingerprint(*parts: object) -> str:
    """A digest of plain data and dataclasses (sets sorted, paths as text): the same inputs give
    the same fingerprint in every process, whatever the hash seed."""
    text = json.dumps([_plain(p) for p in parts], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(f"{code_identity()}|{text}".encode(), digest_size=16).hexdigest()


def _plain(value: object) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # a Path


class DiagnosticCache:
    """``<cache dir>/<version>/diagnostics.cache``: path -> (content digest, diagnostics), for one
    fingerprint (another fingerprint starts it afresh)."""

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.directory = directory
        self.file = directory / __version__ / "diagnostics.cache"
        self.fingerprint = fingerprint
        self.entries: dict[str, list[Any]] = {}
        self.dirty = False
        self._load()

    def _load(self) -> None:
        from pinlint.cache import read_signed_json

        data = read_signed_json(self.file, _MAGIC, _MAX_BYTES)
        if data is None or data.get("fingerprint") != self.fingerprint:
            return  # another configuration, project idiom or version: nothing here applies
        entries = data.get("entries")
        if type(entries) is dict:
            self.entries = entries

    def get(self, path: str, digest: str) -> list[Diagnostic] | None:
        entry = self.entries.get(path)
        if not digest or type(entry) is not list or len(entry) != 2 or entry[0] != digest:
            return None
        try:
            return datacodec.decode(list[Diagnostic], entry[1])  # type: ignore[no-any-return]
        except (datacodec.ShapeError, TypeError, ValueError, KeyError, RecursionError):
            return None  # a shape we did not write: build them again

    def holds(self, path: str, digest: str) -> bool:
        entry = self.entries.get(path)
        return bool(digest) and type(entry) is list and len(entry) == 2 and entry[0] == digest

    def put(self, path: str, digest: str, diagnostics: list[Diagnostic]) -> None:
        if digest:
            self.entries[path] = [digest, datacodec.encode(diagnostics)]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        from pinlint.cache import write_signed

        payload = json.dumps({"fingerprint": self.fingerprint, "entries": self.entries}, separators=(",", ":"))
        write_signed(self.directory, self.file, _MAGIC, payload.encode())


class KeptDiagnostics:
    """The diagnostics of the last run's files with findings (a run without --fix or --diff,
    with the cache on): reused for a file whose content and fingerprint are the same."""

    def __init__(
        self, config: Config, options: CheckOptions, settings: AnalysisSettings, builder: DiagnosticBuilder
    ) -> None:
        self.config, self.options, self.settings, self.builder = config, options, settings, builder
        self._cache: DiagnosticCache | None = None

    def _opened(self) -> DiagnosticCache:
        if self._cache is None:
            # The profile is applied after (and jobs or the cache folder change nothing made here).
            options = replace(self.options, profile=None, min_runs=None, jobs=None, cache_dir=None)
            builder = self.builder
            key = fingerprint(self.settings.key(), self.config, options, builder.project, builder.line_length)
            self._cache = DiagnosticCache(cache_dir(self.config, self.options), key)
        return self._cache

    def has(self, result: FileResult) -> bool:
        return self._opened().holds(result.path, _key(result))

    def diagnostics(self, result: FileResult, build: Callable[[FileResult], list[Diagnostic]]) -> list[Diagnostic]:
        """The kept diagnostics of ``result``, else ``build``'s (kept for the next run)."""
        cache = self._opened()
        key = _key(result)
        found = cache.get(result.path, key)
        if found is None:
            found = build(result)
            cache.put(result.path, key, found)
        return found

    def save(self) -> None:
        if self._cache is not None:
            self._cache.save()


def _key(result: FileResult) -> str:
    """The file's digest, and what of other files its findings depend on: the other files its
    analysis read (a callee's copies), and the findings their analyses gave it (they change when
    those files do, while this file's content does not)."""
    analysis = result.analysis
    if not result.digest or analysis is None or not (analysis.received or analysis.depends_on):
        return result.digest
    received = analysis.findings[len(analysis.findings) - analysis.received :] if analysis.received else []
    return f"{result.digest}+{fingerprint(analysis.depends_on, received)}"
