"""The application layer: runs a check for the CLI and the tests, and prints nothing.

- ``options.py``: what a check is asked to do (``CheckOptions``);
- ``run_result.py``: what it found, fixed and could not do (``CheckRun``);
- ``engine.py``: files or stdin → runner → diagnostics with completed fixes → fix loop → writes.
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
