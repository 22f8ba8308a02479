"""The application layer: runs a check for the CLI and the tests, and prints nothing.

In the order a check goes:

- ``request.py``: what the user asked (``CheckRequest``) → configuration, selection and
  ``CheckOptions`` (``plan_check``);
- ``files.py``: discovery, and the files grouped under the configuration that applies to each;
- ``check.py``: the groups (on one worker pool), or stdin, through the engine;
- ``engine.py``: files or text → runner → diagnostics with completed fixes → fix loop → writes;
- ``noqa_flow.py``, ``baseline_flow.py``: what replaces or filters the report (--add-noqa,
  --write-baseline, --baseline);
- ``options.py``, ``run_result.py``: ``CheckOptions`` and ``CheckRun``, what the engine is given
  and what it returns.
"""

from __future__ import annotations

from pinlint.app.engine import DiagnosticBuilder, check_stdin, run_check
from pinlint.app.options import CheckOptions, analysis_settings, cache_dir, uses_cache
from pinlint.app.run_result import CheckRun

__all__ = [
    "CheckOptions",
    "CheckRun",
    "DiagnosticBuilder",
    "analysis_settings",
    "cache_dir",
    "check_stdin",
    "run_check",
    "uses_cache",
]
