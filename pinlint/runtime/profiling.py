"""Counting what ran where, for ``--profile`` (the file format is ``pinlint/profile.py``).

No torch import: the pytest plugin and the CLI hold a recorder in processes that may never load
torch. The engine calls :meth:`ProfileRecorder.count` once per host construction and per
host-to-device copy; columns are resolved from the code objects only when the profile is built,
so a count costs one dict update under a lock.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import CodeType

from pinlint import profile as fmt
from pinlint.runtime.sites import Site

_Key = tuple[str, str, str, int, "CodeType | None", int]


class ProfileRecorder:
    """Counts per (kind, api, call site). Shared by every watch that records into it, on any
    thread (the lock makes each update whole), and independent of ``max_records``: a long run
    keeps counting after the report stops keeping transfers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: key -> [count, bytes, a Site of that key (for its span), function name]
        self._counts: dict[_Key, list[object]] = {}

    def count(self, kind: str, api: str, site: Site | None, nbytes: int) -> None:
        if site is None or site.filename.startswith("<"):
            return  # no file to point at ("<string>", "<stdin>")
        key: _Key = (kind, api, site.filename, site.row, site.code, site.lasti)
        with self._lock:
            entry = self._counts.get(key)
            if entry is None:
                self._counts[key] = [1, nbytes, site]
            else:
                entry[0] += 1  # type: ignore[operator]
                entry[1] += nbytes  # type: ignore[operator]

    def __len__(self) -> int:
        return len(self._counts)

    def profile(self, root: Path, runs: int = 1) -> fmt.Profile:
        """The counts as a profile: one entry per position (row and column of the call, as the
        static checker reports it), file names relative to ``root``."""
        with self._lock:
            items = list(self._counts.items())
        out = fmt.Profile(runs=runs)
        for (kind, api, filename, _row, _code, _lasti), (count, nbytes, site) in items:
            assert isinstance(site, Site)
            row, column, end_row, end_column = site.span
            out.add(
                fmt.SiteEntry(
                    file=fmt.file_key(filename, root),
                    row=row,
                    column=column,
                    end_row=max(end_row, row),
                    end_column=max(end_column, 1),
                    kind=kind,
                    api=api,
                    function=site.function[: fmt.MAX_STRING],
                    count=int(count),  # type: ignore[call-overload]
                    bytes=int(nbytes),  # type: ignore[call-overload]
                )
            )
        return out


class ProfileTarget:
    """A profile file a run appends to. The existing file is validated when the target is
    made, before the program runs, so a bad file fails fast instead of after a long benchmark."""

    def __init__(self, path: str | Path, root: Path | None = None) -> None:
        import os

        self.path = Path(path)
        self.root = (root or fmt.project_root()).absolute()
        if os.path.exists(self.path):
            fmt.load(self.path)  # raises ProfileError on a bad one
        self.recorder = ProfileRecorder()
        #: How many sites the last write added (positions, not counts).
        self.written = 0

    def write(self) -> fmt.Profile:
        """Merge this run's counts into the file; returns the merged profile."""
        new = self.recorder.profile(self.root)
        self.written = len(new.entries())
        return fmt.merge_into(self.path, new)
