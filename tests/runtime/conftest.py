"""Fixtures for the runtime tests.

pytester is needed by test_pytest_plugin.py. ``pytest_plugins = ["pytester"]`` is not allowed here:
pytest refuses it in a conftest below the rootdir when collection reaches it after configuration
(a plain ``pytest`` run from the repository root), so the plugin is registered when this conftest
is, which also makes its ``pytester`` fixture global.
"""

from __future__ import annotations

from typing import Any


def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
    if not manager.has_plugin("pytester"):
        manager.import_plugin("pytester")
