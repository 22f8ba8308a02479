"""``--output-format json``: ruff's JSON shape, so tools that read ruff's JSON read ours.

A pretty-printed array, one object per finding, with exactly the keys ``code, name, message,
filename (absolute), location, end_location, fix, noqa_row, url``. Every fix is included
whatever its applicability (as ruff does); ``applicability`` says whether it is safe.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pinlint.core.diagnostics import Diagnostic, Location, ProfileCount, Related
from pinlint.report import ReportContext
from pinlint.safeio import json_text


def _location(loc: Location) -> dict[str, int]:
    return {"row": loc.row, "column": loc.column}


def diagnostic_to_dict(diag: Diagnostic) -> dict[str, Any]:
    """The ruff-compatible object for one finding (shared with ``json-lines``)."""
    fix: dict[str, Any] | None = None
    if diag.fix is not None:
        fix = {
            "applicability": diag.fix.applicability,
            "message": diag.fix.explained_message,
            "edits": [
                {
                    "content": edit.content,
                    "location": _location(edit.location),
                    "end_location": _location(edit.end_location),
                }
                for edit in diag.fix.edits
            ],
        }
    out: dict[str, Any] = {
        "code": diag.code,
        "name": diag.name,
        "message": diag.message,
        "filename": diag.filename,
        "location": _location(diag.location),
        "end_location": _location(diag.end_location),
        "fix": fix,
        "noqa_row": diag.noqa_row,
        "url": diag.url,
        # Not in ruff's schema: the copy a flagged tensor reaches (tools reading ruff's fields
        # ignore it).
        "related": [_related(diag, r) for r in diag.related],
    }
    if diag.profile is not None:
        # Only with `check --profile`: the runtime count of the finding's site.
        out["profile"] = profile_to_dict(diag.profile)
    return out


def profile_to_dict(count: ProfileCount) -> dict[str, Any]:
    """``{"count", "bytes", "kind", "measured"}``: what the profile says about a finding."""
    return {"count": count.count, "bytes": count.nbytes, "kind": count.kind, "measured": count.measured}


def sorted_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Filename, row, column, code: the order every machine format is written in."""
    return sorted(diagnostics, key=Diagnostic.sort_key)


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str:
    objects = [diagnostic_to_dict(d) for d in sorted_diagnostics(diagnostics)]
    # ensure_ascii=False: ruff (serde_json) writes non-ASCII text as UTF-8, not \u escapes.
    return json_text(json.dumps(objects, indent=2, ensure_ascii=False)) + "\n"


def _related(diag: Diagnostic, related: Related) -> dict[str, Any]:
    """A related place, with its ``filename`` (the finding's own unless it is in another file)."""
    return {
        "message": related.message,
        "filename": related.path if related.path is not None else diag.filename,
        "location": _location(related.location),
        "end_location": _location(related.end_location),
    }
