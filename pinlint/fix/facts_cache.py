"""The per-file cache of module facts: signed JSON in the cache folder, each entry validated
when it is first asked for."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from pinlint import __version__
from pinlint.fix.module_facts import (
    _FACTS_VERSION,
    ModuleFacts,
)


class FactsCache:
    """``<cache dir>/project-facts.json``: path -> (size, mtime_ns, digest, facts)."""

    def __init__(self, directory: Path | None) -> None:
        self.file = directory / "project-facts.json" if directory is not None else None
        self.entries: dict[str, dict[str, object]] = {}
        self._unchecked: set[str] = set()
        self.dirty = False
        if self.file is not None:
            self._load()

    def _load(self) -> None:
        assert self.file is not None
        from pinlint.cache import read_signed_json

        # Signed by this user: a committed facts file could name the helper to import (code
        # that runs once the fixed file does), so only our own is trusted.
        data = read_signed_json(self.file, _FACTS_MAGIC, _MAX_FACTS_BYTES)
        if data is None or data.get("version") != _FACTS_VERSION or data.get("pinlint") != __version__:
            return
        files = data.get("files")
        if not isinstance(files, dict):
            return
        # Each entry is checked when it is asked for: a warm run asks for few of them.
        self.entries = files
        self._unchecked = set(files)

    def get(self, path: str, size: int, mtime_ns: int) -> ModuleFacts | None | bool:
        """Facts (or None: a file with nothing to say) on a hit; False on a miss."""
        entry = self.entries.get(path)
        if entry is not None and path in self._unchecked:
            self._unchecked.discard(path)
            if not _valid_entry(entry):
                del self.entries[path]
                self.dirty = True
                return False
        if entry is None or entry["size"] != size or entry["mtime_ns"] != mtime_ns:
            return False
        facts = entry["facts"]
        return ModuleFacts(**facts) if isinstance(facts, dict) else None

    def holds(self, path: str, size: int, mtime_ns: int) -> bool:
        """An entry for the file as it is (its facts unread: the caller has them already)."""
        entry = self.entries.get(path)
        return type(entry) is dict and entry.get("size") == size and entry.get("mtime_ns") == mtime_ns

    def put(self, path: str, size: int, mtime_ns: int, data_digest: str, facts: ModuleFacts | None) -> None:
        self._unchecked.discard(path)
        self.entries[path] = {
            "size": size,
            "mtime_ns": mtime_ns,
            "digest": data_digest,
            "facts": asdict(facts) if facts is not None else None,
        }
        self.dirty = True

    def save(self) -> None:
        if self.file is None or not self.dirty:
            return
        from pinlint.cache import write_signed

        # Entries never asked for are dropped if they are not a shape this version writes.
        files = {p: e for p, e in self.entries.items() if p not in self._unchecked or _valid_entry(e)}
        payload = json.dumps({"version": _FACTS_VERSION, "pinlint": __version__, "files": files}, separators=(",", ":"))
        # A read-only checkout still fixes; it just re-reads next time.
        write_signed(self.file.parent, self.file, _FACTS_MAGIC, payload.encode())


_FACTS_MAGIC = b"PINLINT-FACTS-1\n"
_MAX_FACTS_BYTES = 64 * 1024 * 1024

_FIELDS = {
    "definition": (dict, type(None)),
    "methods": list,
    "imports": list,
    "calls": list,
    "pin_values": dict,
    "constants": list,
    "module_imports": list,
}


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get("size"), int) or not isinstance(entry.get("mtime_ns"), int):
        return False
    if not isinstance(entry.get("digest"), str):
        return False
    facts = entry.get("facts")
    if facts is None:
        return True
    if not isinstance(facts, dict) or set(facts) != set(_FIELDS):
        return False
    if not all(isinstance(facts[k], t) for k, t in _FIELDS.items()):
        return False
    strings = facts["imports"] + facts["constants"] + facts["module_imports"]
    if not all(isinstance(s, str) for s in strings):
        return False
    if not all(isinstance(c, list) and len(c) == 2 and all(isinstance(x, str) for x in c) for c in facts["calls"]):
        return False
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in facts["pin_values"].items()):
        return False
    sig_keys = {"style", "keyword", "reason"}
    sigs = facts["methods"] + ([facts["definition"]] if facts["definition"] else [])
    return all(isinstance(s, dict) and set(s) == sig_keys and all(isinstance(v, str) for v in s.values()) for s in sigs)
