"""Baselines: record today's findings so that only new ones fail CI.

A finding is identified by a fingerprint that holds **no line numbers**: the rule code, the
file's path relative to the project root, the flagged source text with its whitespace
normalized, and the finding's occurrence index among findings that share those three in the
same file. Code moving up or down (an import added above it) therefore keeps its
fingerprint, reformatting whitespace keeps it too, and two identical statements in one file
still get distinct fingerprints, so a second copy of a known problem is reported as new.

The same fingerprints serve as SARIF ``partialFingerprints`` and GitLab ``fingerprint``s, so
code-scanning dashboards track a finding across the same edits that the baseline survives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from pinlint.core.diagnostics import Diagnostic
from pinlint.core.paths import relative_posix_path
from pinlint.safeio import (
    MAX_BASELINE_BYTES,
    json_text,
    project_root,
    read_regular,
    write_replacing,
)

BASELINE_VERSION = 1
#: Hex digits kept from the sha256: 64 bits, as wide as ruff's GitLab fingerprints, short enough
#: for readable diffs of the committed file and far from colliding at any realistic count.
FINGERPRINT_HEX_CHARS = 16

_WHITESPACE = re.compile(r"\s+")


class BaselineError(Exception):
    """The baseline file is missing, unreadable or not a pinlint baseline."""


def normalize_snippet(text: str) -> str:
    """Collapse every run of whitespace (newlines included) to one space, strip the ends."""
    return _WHITESPACE.sub(" ", text).strip()


def _identity(diag: Diagnostic, root: str | os.PathLike[str]) -> tuple[str, str, str]:
    # Without a snippet (a diagnostic built without source text), the message is the next
    # most specific line-free description of the finding.
    snippet = normalize_snippet(diag.source_snippet) or normalize_snippet(diag.message)
    return (diag.code, relative_posix_path(diag.filename, root), snippet)


def fingerprint(diag: Diagnostic, root: str | os.PathLike[str], occurrence: int = 0) -> str:
    """The line-free fingerprint of ``diag``.

    ``occurrence`` is the finding's index among findings of the same code, path and
    normalized snippet in its file, in source order; :func:`assign_fingerprints` computes it
    for a whole run, which is what every caller with more than one finding needs.
    """
    code, path, snippet = _identity(diag, root)
    # NUL separators: none of the parts can contain one, so distinct tuples never hash alike.
    key = "\0".join((code, path, snippet, str(occurrence)))
    # surrogateescape: a non-UTF-8 file name hashes as its bytes instead of crashing the run.
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:FINGERPRINT_HEX_CHARS]


def assign_fingerprints(diags: Sequence[Diagnostic], root: str | os.PathLike[str]) -> list[str]:
    """Fingerprints of ``diags``, in the input order, with occurrence indices assigned.

    Occurrences are numbered in source order (row, column), which a line shift does not
    change, rather than input order, which depends on how the caller sorted.
    """
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for index, diag in enumerate(diags):
        groups[_identity(diag, root)].append(index)
    result = [""] * len(diags)
    for indices in groups.values():
        ordered = sorted(indices, key=lambda i: (diags[i].location, diags[i].end_location, i))
        for occurrence, index in enumerate(ordered):
            result[index] = fingerprint(diags[index], root, occurrence)
    return result


def write_baseline(
    diags: Sequence[Diagnostic],
    path: str | os.PathLike[str],
    root: str | os.PathLike[str],
) -> None:
    """Write the baseline for ``diags`` to ``path`` atomically (``safeio.write_replacing``).

    Entries are sorted by path, code, snippet and fingerprint, so that the committed file
    diffs cleanly when findings come and go.
    """
    fingerprints = assign_fingerprints(diags, root)
    findings = sorted(
        (
            {
                "fingerprint": fp,
                "code": diag.code,
                "path": relative_posix_path(diag.filename, root),
                "snippet": _identity(diag, root)[2],
            }
            for diag, fp in zip(diags, fingerprints)
        ),
        key=lambda f: (f["path"], f["code"], f["snippet"], f["fingerprint"]),
    )
    document = {"version": BASELINE_VERSION, "tool": "pinlint", "findings": findings}
    text = json_text(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"

    target = Path(path)
    # A committed baseline keeps the mode an ordinary write would give it: the existing
    # file's, else 0644.
    try:
        info = os.lstat(target)
        mode = info.st_mode & 0o777 if stat.S_ISREG(info.st_mode) else 0o644
    except OSError:
        mode = 0o644
    # The rename replaces a committed symlink instead of following it; a relative path
    # through a committed symlinked folder that leads out of the project is refused.
    write_replacing(target, text.encode("utf-8", "backslashreplace"), project_root(Path(root)), mode=mode)


def load_baseline(path: str | os.PathLike[str]) -> set[str]:
    """The fingerprints recorded in the baseline at ``path``; BaselineError if it is not one."""
    try:
        # Bounded, regular files only: a committed link to /dev/zero or a FIFO is an error.
        raw = read_regular(path, MAX_BASELINE_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline file not found: {os.fspath(path)}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline file {os.fspath(path)}: {exc}") from None
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BaselineError(f"baseline file {os.fspath(path)} is nested too deeply") from None
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise BaselineError(f"baseline file {os.fspath(path)} is not valid JSON: {exc}") from None
        raise BaselineError(
            f"baseline file {os.fspath(path)} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict) or data.get("tool") != "pinlint" or "findings" not in data:
        raise BaselineError(f"{os.fspath(path)} is not a pinlint baseline file")
    if data.get("version") != BASELINE_VERSION:
        raise BaselineError(
            f"baseline file {os.fspath(path)} has unsupported version {data.get('version')!r} "
            f"(this pinlint reads version {BASELINE_VERSION})"
        )
    findings = data["findings"]
    if not isinstance(findings, list):
        raise BaselineError(f"baseline file {os.fspath(path)}: 'findings' must be a list")
    result: set[str] = set()
    for number, entry in enumerate(findings, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str) or not entry["fingerprint"]:
            raise BaselineError(f"baseline file {os.fspath(path)}: finding #{number} has no 'fingerprint' string")
        result.add(entry["fingerprint"])
    return result


def filter_new(diags: Iterable[Diagnostic], fingerprints: set[str], root: str | os.PathLike[str]) -> list[Diagnostic]:
    """The findings of ``diags`` whose fingerprints are not in the baseline, in input order.

    Pass the whole run's findings: occurrence indices are counted among them. Findings fixed
    since the baseline was written need no handling: they are simply no longer produced.
    """
    diag_list = list(diags)
    return [diag for diag, fp in zip(diag_list, assign_fingerprints(diag_list, root)) if fp not in fingerprints]
