"""The robustness suite's markers: ``corpus`` is declared in pyproject; ``slow`` is declared here.

Tests marked ``slow`` (long hypothesis runs) are skipped unless ``PINLINT_SLOW=1`` or they are
selected explicitly with ``-m slow``; ``corpus`` tests run when selected with ``-m corpus`` or with
``PINLINT_CORPUS=1`` (``.ci/run`` does the former).
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long property-based runs (PINLINT_SLOW=1 or -m slow to run)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    markexpr = config.getoption("markexpr", "") or ""
    for item in items:
        if item.get_closest_marker("slow") and "slow" not in markexpr and not os.environ.get("PINLINT_SLOW"):
            item.add_marker(pytest.mark.skip(reason="slow property run: set PINLINT_SLOW=1 or select with -m slow"))
        if item.get_closest_marker("corpus") and "corpus" not in markexpr and not os.environ.get("PINLINT_CORPUS"):
            item.add_marker(
                pytest.mark.skip(
                    reason="corpus run (minutes, downloads wheels): select with -m corpus or set PINLINT_CORPUS=1"
                )
            )
