"""pinlint over the full source trees of several large PyTorch projects (PyPI releases).

Marked ``corpus`` (declared in pyproject): ``pytest -m corpus tests/robustness/test_corpus.py``
(or ``PINLINT_CORPUS=1``). The sources are fetched by ``benchmarks/corpus.py fetch --set review``
(cached under ``benchmarks/.corpus``); the test skips only when PyPI cannot be reached and the
corpus is not cached. ``tests/robustness/corpus_report.py`` runs the same and writes
``docs/corpus-results.md``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.corpus

_spec = importlib.util.spec_from_file_location("pinlint_corpus_report", Path(__file__).with_name("corpus_report.py"))
corpus_report = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = corpus_report
_spec.loader.exec_module(corpus_report)


@pytest.fixture(scope="module")
def trees() -> list[Path]:
    try:
        return corpus_report.fetch()
    except corpus_report.FetchError as exc:
        if not corpus_report.pypi_reachable():
            pytest.skip(f"PyPI is unreachable and the corpus is not cached: {str(exc)[-300:]}")
        raise


def test_corpus_check_and_fix(trees: list[Path], tmp_path: Path) -> None:
    assert len(trees) >= 3, trees
    summary = corpus_report.run_corpus(tmp_path, trees)
    print(
        f"\n[pinlint robustness] corpus: {summary['files']} files, {summary['lines']} lines, findings "
        f"{summary['findings']}, {summary['files_fixed']} files fixed, {summary['seconds']} s"
    )
    for project in summary["projects"]:
        assert project["check_exit"] == 0, project
    assert summary["files"] > 1000
    assert not summary["problems"], "\n".join(summary["problems"])
