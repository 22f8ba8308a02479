"""``--output-format gitlab``: a GitLab code quality report (a ``codequality`` artifact).

GitLab matches findings between the merge-request base and head by ``fingerprint``, so it
must stay the same while the code around a finding moves and must be unique in a report.
It is pinlint's baseline fingerprint (code, relative path, normalized source snippet,
occurrence index; no line numbers), the line-free scheme ruff moved to after ruff#7159.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pinlint.baseline import assign_fingerprints
from pinlint.core.diagnostics import Diagnostic
from pinlint.core.paths import relative_posix_path
from pinlint.report import ReportContext, profile_suffix
from pinlint.report.json_format import sorted_diagnostics
from pinlint.safeio import json_text


def build(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> list[dict[str, Any]]:
    ordered = sorted_diagnostics(diagnostics)
    report = []
    for diag, fp in zip(ordered, assign_fingerprints(ordered, ctx.root)):
        report.append(
            {
                "description": f"{diag.code}: {diag.message}{profile_suffix(diag)}",
                "check_name": diag.code,
                "fingerprint": fp,
                "severity": "major",
                "location": {
                    "path": relative_posix_path(diag.filename, ctx.root),
                    "positions": {
                        "begin": {
                            "line": diag.location.row,
                            "column": diag.location.column,
                        },
                        "end": {
                            "line": diag.end_location.row,
                            "column": diag.end_location.column,
                        },
                    },
                },
            }
        )
    return report


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str:
    return json_text(json.dumps(build(diagnostics, ctx), indent=2, ensure_ascii=False)) + "\n"
