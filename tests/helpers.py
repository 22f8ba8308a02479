"""Shared test helpers: run pinlint's pipeline on source text, in memory."""

from __future__ import annotations

import ast
from pathlib import Path

from pinlint import catalog
from pinlint.app import CheckOptions, CheckRun, check_stdin
from pinlint.config import Config
from pinlint.core.diagnostics import Diagnostic

ALL_CODES = set(catalog.all_codes())


def lint(
    text: str,
    *,
    select: set[str] | None = None,
    fix: bool = False,
    unsafe: bool = False,
    helper: str | None = None,
    filename: str = "/tmp/pinlint_example.py",
) -> CheckRun:
    config = Config(root=Path("/tmp"), pin_memory_helper=helper)
    options = CheckOptions(selected=select or ALL_CODES, fix=fix, unsafe_fixes=unsafe, use_cache=False)
    return check_stdin(text, Path(filename), config, options)


def codes(diagnostics: list[Diagnostic]) -> list[str]:
    return [d.code for d in diagnostics]


def assert_parses(text: str) -> None:
    ast.parse(text)
