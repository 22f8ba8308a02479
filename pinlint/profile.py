"""The runtime profile: how many times each host construction and host-to-device copy ran.

``pinlint trace --profile FILE`` (and ``watch(profile=FILE)``, ``pytest --pinlint-profile=FILE``)
writes it; ``pinlint check --profile FILE`` reads it to rank findings by what really runs. This
module is the file format, shared by both sides: load (validated), merge, save; matching it to
findings is ``profile_findings.py``. It imports neither torch nor libcst.

The file is plain JSON (format ``pinlint-profile``, version 1, see docs/runtime.md)::

    {"format": "pinlint-profile", "version": 1, "runs": 2,
     "sites": [{"file": "pkg/step.py", "row": 12, "column": 11, "end_row": 12,
                "end_column": 40, "kind": "host-construction", "api": "torch.tensor",
                "function": "step", "count": 64, "bytes": 2048}, ...]}

``file`` is relative to the project root (POSIX separators) or absolute when the file is outside
it; ``row``/``column`` are 1-based, columns counted in characters, exactly as ``pinlint check``
reports the finding's start. A profile is data read from the user's folder, so reading it never
evaluates anything: ``json.loads`` only, every value's type and range checked, and the file's size
bounded before it is parsed.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

FORMAT = "pinlint-profile"
VERSION = 1

#: What a site's count counts.
HOST_CONSTRUCTION = "host-construction"  #: a factory made a host (CPU) tensor here
DEVICE_CONSTRUCTION = "device-construction"  #: torch.tensor(data, device=cuda): blocking copy
BLOCKING_COPY = "blocking-copy"  #: .to(dev) / .copy_(...) with non_blocking=False
NON_BLOCKING_COPY = "non-blocking-copy"  #: .to(dev, non_blocking=True), pinned or not
KINDS = (HOST_CONSTRUCTION, DEVICE_CONSTRUCTION, BLOCKING_COPY, NON_BLOCKING_COPY)

#: Bounds on what a profile may hold: a profile bigger than this is not one pinlint wrote for a
#: real program (one entry is ~250 bytes; a million sites is far beyond any code base).
MAX_BYTES = 64 * 1024 * 1024
MAX_SITES = 1_000_000
MAX_STRING = 4096
MAX_INT = 2**63 - 1

_SITE_KEYS = (
    "file",
    "row",
    "column",
    "end_row",
    "end_column",
    "kind",
    "api",
    "function",
    "count",
    "bytes",
)
_TOP_KEYS = ("format", "version", "runs", "sites")


class ProfileError(Exception):
    """A profile file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class SiteEntry:
    """One source position and what ran there, summed over the profile's runs."""

    file: str
    row: int
    column: int
    end_row: int
    end_column: int
    kind: str
    api: str
    function: str
    count: int
    bytes: int

    @property
    def key(self) -> tuple[str, int, int, str, str]:
        """Entries with the same key are the same site: merging adds their counts."""
        return (self.file, self.row, self.column, self.kind, self.api)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _SITE_KEYS}


@dataclass
class Profile:
    """A whole profile file: how many runs it sums, and its sites."""

    runs: int = 0
    sites: dict[tuple[str, int, int, str, str], SiteEntry] | None = None

    def __post_init__(self) -> None:
        if self.sites is None:
            self.sites = {}

    def entries(self) -> list[SiteEntry]:
        assert self.sites is not None
        return sorted(self.sites.values(), key=lambda e: e.key)

    def add(self, entry: SiteEntry) -> None:
        """Add one site's counts (to an existing entry of the same key, if any)."""
        assert self.sites is not None
        previous = self.sites.get(entry.key)
        if previous is None:
            self.sites[entry.key] = entry
        else:
            self.sites[entry.key] = replace(
                previous,
                count=min(previous.count + entry.count, MAX_INT),
                bytes=min(previous.bytes + entry.bytes, MAX_INT),
            )

    def merge(self, other: Profile) -> Profile:
        """A new profile with both profiles' runs and counts added up."""
        merged = Profile(runs=min(self.runs + other.runs, MAX_INT))
        for entry in (*self.entries(), *other.entries()):
            merged.add(entry)
        return merged

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "runs": self.runs,
            "sites": [e.to_dict() for e in self.entries()],
        }


# -- reading -----------------------------------------------------------------------------------


def load(path: str | os.PathLike[str]) -> Profile:
    """Read and validate a profile file; any problem is a :class:`ProfileError`."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ProfileError(f"{name}: not a regular file")
            if info.st_size > MAX_BYTES:
                raise ProfileError(
                    f"{name}: too large for a profile ({info.st_size:,} bytes; the limit is {MAX_BYTES:,})"
                )
            # Read at most one byte past the limit: a file that grows while read is still bounded.
            data = handle.read(MAX_BYTES + 1)
    except ProfileError:
        raise
    except FileNotFoundError:
        raise ProfileError(f"{name}: no such profile file") from None
    except OSError as exc:
        raise ProfileError(f"{name}: cannot read the profile: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ProfileError(f"{name}: too large for a profile (over {MAX_BYTES:,} bytes)")
    return parse(data, name)


def _reject_constant(value: str) -> Any:
    raise ValueError(f"{value} is not a valid JSON number")


def parse(data: bytes, name: str = "<profile>") -> Profile:
    """Validate the bytes of a profile file (see the module docstring for the shape)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{name}: not a profile: not UTF-8 text ({exc.reason})") from None
    if not text.strip():
        raise ProfileError(f"{name}: not a profile: the file is empty")
    try:
        raw = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        # The text ended where more was expected: a run killed while writing, a partial copy.
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = " (the file looks truncated)" if cut else ""
        raise ProfileError(
            f"{name}: not a profile: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ProfileError(f"{name}: not a profile: invalid JSON: {exc}") from None
    return from_json(raw, name)


def from_json(raw: Any, name: str = "<profile>") -> Profile:
    """Check a decoded profile's shape and build it. Unknown keys are errors, not ignored: a
    version that adds keys must bump ``version``."""
    if not isinstance(raw, dict):
        raise ProfileError(f"{name}: not a profile: expected a JSON object, got {_json_type(raw)}")
    if raw.get("format") != FORMAT:
        raise ProfileError(
            f"{name}: not a profile: `format` must be {FORMAT!r} (write one with "
            "`pinlint trace --profile FILE -- python program.py`)"
        )
    version = raw.get("version")
    if not _is_int(version):
        raise ProfileError(f"{name}: `version` must be an integer, got {version!r}")
    if version != VERSION:
        newer = " (written by a newer pinlint)" if version > VERSION else ""
        raise ProfileError(
            f"{name}: unsupported profile version {version}{newer}; this pinlint reads version {VERSION}"
        )
    unknown = sorted(set(raw) - set(_TOP_KEYS))
    missing = [k for k in _TOP_KEYS if k not in raw]
    if unknown or missing:
        raise ProfileError(f"{name}: {_keys_problem(missing, unknown)} at the top level")
    runs = _count(raw["runs"], name, "`runs`")
    sites = raw["sites"]
    if not isinstance(sites, list):
        raise ProfileError(f"{name}: `sites` must be a list, got {_json_type(sites)}")
    if len(sites) > MAX_SITES:
        raise ProfileError(f"{name}: too many sites ({len(sites):,}; the limit is {MAX_SITES:,})")
    profile = Profile(runs=runs)
    for i, item in enumerate(sites):
        profile.add(_site(item, name, i))
    return profile


def _site(item: Any, name: str, i: int) -> SiteEntry:
    where = f"sites[{i}]"
    if not isinstance(item, dict):
        raise ProfileError(f"{name}: {where} must be an object, got {_json_type(item)}")
    unknown = sorted(set(item) - set(_SITE_KEYS))
    missing = [k for k in _SITE_KEYS if k not in item]
    if unknown or missing:
        raise ProfileError(f"{name}: {where}: {_keys_problem(missing, unknown)}")
    values: dict[str, Any] = {}
    for key in ("file", "api", "function", "kind"):
        value = item[key]
        if not isinstance(value, str) or len(value) > MAX_STRING:
            raise ProfileError(f"{name}: {where}.{key} must be a string of at most {MAX_STRING} characters")
        values[key] = value
    if not values["file"]:
        raise ProfileError(f"{name}: {where}.file must not be empty")
    if values["kind"] not in KINDS:
        raise ProfileError(f"{name}: {where}.kind must be one of {', '.join(KINDS)}, got {values['kind']!r}")
    for key in ("row", "column", "end_row", "end_column"):
        values[key] = _count(item[key], name, f"{where}.{key}", minimum=1)
    for key in ("count", "bytes"):
        values[key] = _count(item[key], name, f"{where}.{key}")
    return SiteEntry(**values)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any, name: str, where: str, minimum: int = 0) -> int:
    if not _is_int(value) or not minimum <= value <= MAX_INT:
        raise ProfileError(f"{name}: {where} must be an integer from {minimum} to {MAX_INT}, got {value!r}")
    return int(value)


def _keys_problem(missing: list[str], unknown: list[str]) -> str:
    parts = []
    if missing:
        parts.append("missing key(s) " + ", ".join(f"`{k}`" for k in missing))
    if unknown:
        parts.append("unknown key(s) " + ", ".join(f"`{k}`" for k in unknown[:5]))
    return "; ".join(parts)


def _json_type(value: Any) -> str:
    for kind, label in (
        (bool, "a boolean"),
        (dict, "an object"),
        (list, "a list"),
        (str, "a string"),
        (int, "a number"),
        (float, "a number"),
    ):
        if isinstance(value, kind):
            return label
    return "null"


# -- writing -----------------------------------------------------------------------------------


def save(profile: Profile, path: str | os.PathLike[str]) -> None:
    """Write atomically (``safeio.write_replacing``: a reader or a crash never sees half a
    profile, and a link at ``path`` is replaced rather than followed)."""
    from pinlint.safeio import write_replacing

    text = json.dumps(profile.to_dict(), indent=1, ensure_ascii=False) + "\n"
    write_replacing(path, text.encode("utf-8"), None)


def merge_into(path: str | os.PathLike[str], new: Profile) -> Profile:
    """Add ``new`` to the profile at ``path`` (created when missing) and write it back.

    Two programs writing the same profile at the same moment may lose one run: each reads, adds
    and replaces. Give concurrent runs their own files and merge them afterwards.
    """
    existing = load(path) if os.path.exists(path) else Profile()
    merged = existing.merge(new)
    save(merged, path)
    return merged


# -- keys: where a site's file is, as both sides spell it --------------------------------------


def file_key(filename: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """``filename`` relative to ``root`` with ``/`` separators, or absolute when outside it: the
    spelling the profile stores and ``check`` looks up (the same function on both sides)."""
    from pinlint.core.paths import relative_posix_path

    return relative_posix_path(filename, root)


def project_root(cwd: Path | None = None) -> Path:
    """The root ``pinlint check`` uses when run here without ``--config``: the folder of the
    nearest pinlint configuration, else the current directory."""
    from pinlint.config import find_config

    here = (cwd or Path.cwd()).absolute()
    found = find_config(here)
    return found.parent.absolute() if found is not None else here
