"""``--output-format json-lines``: the ``json`` objects, one compact object per line."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pinlint.core.diagnostics import Diagnostic
from pinlint.report import ReportContext
from pinlint.report.json_format import diagnostic_to_dict, sorted_diagnostics
from pinlint.safeio import json_text


def render(diagnostics: Sequence[Diagnostic], ctx: ReportContext) -> str:
    # Compact separators, as serde_json::to_string writes them in ruff's json-lines; a
    # newline inside a message is escaped by JSON, so each record stays on one line.
    return "".join(
        json_text(json.dumps(diagnostic_to_dict(d), ensure_ascii=False, separators=(",", ":"))) + "\n"
        for d in sorted_diagnostics(diagnostics)
    )
