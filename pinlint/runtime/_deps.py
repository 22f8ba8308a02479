"""The one place that imports torch for the runtime companion, with the error users see without it."""

from __future__ import annotations

from types import ModuleType

INSTALL_HINT = "pinlint.runtime needs PyTorch: pip install 'torch-pinlint[runtime]'"


class MissingTorchError(ImportError):
    """Raised when a runtime feature is used and torch cannot be imported."""


def require_torch() -> ModuleType:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - the test env has torch; see test_import_without_torch
        raise MissingTorchError(f"{INSTALL_HINT} ({exc})") from exc
    return torch
