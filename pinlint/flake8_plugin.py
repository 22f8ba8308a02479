"""pinlint as a flake8 plugin (lint only: flake8 has no fixes; use ``pinlint check --fix`` for those).

Declared in pyproject.toml as ``[project.entry-points."flake8.extension"] PIN = ...``, so flake8
selects the ``PIN`` prefix by default. PIN003 is opt-in in pinlint, and stays opt-in here: it is
added to flake8's *default* ignore list, which ``--select PIN``, ``--extend-select PIN003`` or a
``select`` in flake8's config override (flake8's longest-prefix rule, the same outcome as
``pinlint check --select PIN``).

What the plugin reads: flake8's already-decoded ``lines`` (so a file is read once, in flake8's
encoding), and, once per process, ``pinned-functions``/``host-functions`` from ``[tool.pinlint]``
because they change what is found. Selection, per-file ignores and excludes are flake8's job;
pinlint's ``select``/``ignore``/``exclude`` keys are not consulted.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from pinlint import __version__, lint, noqa, source
from pinlint.core.results import AnalysisSettings, FileAnalysis


def _opt_in_codes() -> list[str]:
    """Rules off by default (PIN003); computed rather than listed so a new opt-in rule in the
    catalog is off under flake8 too. Read lazily: the catalog parses TOML files."""
    from pinlint import catalog

    return [rule.code for rule in catalog.all_rules() if not rule.default_enabled]


@lru_cache(maxsize=1)
def _project_functions() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``pinned-functions`` and ``host-functions`` from the nearest pinlint config (cwd upward).

    A broken configuration raises, rather than silently linting with other settings than
    ``pinlint check`` would; flake8 reports the plugin's exception with this message.
    """
    from pinlint.config import ConfigError, load

    try:
        config = load(None)
    except ConfigError as exc:
        raise ConfigError(f"pinlint (flake8 plugin): {exc}") from exc
    return tuple(sorted(config.pinned_functions)), tuple(sorted(config.host_functions))


class PinlintChecker:
    """flake8 tree checker yielding ``(row, col0, "PINxxx message", type)`` for each finding."""

    name = "pinlint"
    version = __version__

    #: The rules to compute: opt-in ones (PIN003) only when flake8 will report them, because
    #: the PIN003 triage lets many more files through to the (slower) libcst parse.
    rules: tuple[str, ...] = ()
    #: flake8's --disable-noqa also turns off pinlint's own reading of noqa comments.
    disable_noqa: bool = False

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        # `tree` is unused (pinlint parses with libcst), but asking for it makes this a
        # once-per-file "tree" plugin rather than a per-line one.
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.extend_default_ignore(_opt_in_codes())

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))
        from pinlint import catalog

        opt_in = set(_opt_in_codes())
        cls.rules = tuple(
            rule.code for rule in catalog.all_rules() if rule.code not in opt_in or _flake8_reports(options, rule.code)
        )

    def run(self) -> Iterator[tuple[int, int, str, type[PinlintChecker]]]:
        text = "".join(self.lines)
        pinned, host = _project_functions()
        settings = AnalysisSettings(rules=self.rules, pinned_functions=pinned, host_functions=host)
        data = text.encode("utf-8", "surrogatepass")
        # The same byte-level triage `pinlint check` applies: most files stop here, unparsed.
        if not lint.file_triggered(data, lint.rule_set(settings)):
            return
        newline = source.detect_newline(text)
        from pinlint import runner

        if runner.may_crash_parser(data):
            # A long operator chain can segfault libcst's native parser, taking flake8 (and
            # `flake8 --jobs`) down with it: analyze such files in a child process.
            try:
                analysis = runner.call_isolated(FileAnalysis, lint.analyze_text, text, settings, newline=newline)
            except runner.ChildCrashed:
                return
        else:
            analysis = lint.analyze_text(text, settings, newline=newline)
        # A file libcst cannot parse: flake8 reports syntax errors itself (E999).
        if analysis.syntax_error is not None:
            return
        for finding in analysis.findings:
            # flake8 honours a noqa comment on the reported line (and its logical line); pinlint also
            # accepts it on the copy's line, which may be far below the construction.
            if not self.disable_noqa and noqa.suppresses(finding.noqa_codes, finding.code):
                continue
            # pinlint's columns are 1-based; flake8 wants a 0-based offset (it prints col + 1).
            yield finding.location.row, finding.location.column - 1, f"{finding.code} {finding.message}", type(self)


def _flake8_reports(options: argparse.Namespace, code: str) -> bool:
    try:
        from flake8.style_guide import Decision, DecisionEngine

        return DecisionEngine(options).decision_for(code) is Decision.Selected
    except Exception:  # flake8 internals moved: compute everything and let flake8 filter
        return True
