"""pinlint's runtime companion: prove at run time that non_blocking H2D copies read pinned memory.

    from pinlint.runtime import watch
    with watch(simulate="auto") as report:
        step()
    report.assert_clean()

Importing this package does not import torch; entering a watch does, and raises
``MissingTorchError`` ("pip install 'torch-pinlint[runtime]'") without it. See docs/runtime.md.
"""

from __future__ import annotations

from pinlint.runtime._deps import INSTALL_HINT, MissingTorchError
from pinlint.runtime.model import (
    ASYNC,
    BLOCKING,
    PAGEABLE,
    STAGED,
    Birth,
    PageableNonBlockingCopy,
    PinlintRuntimeWarning,
    Transfer,
    Violation,
)
from pinlint.runtime.report import Report
from pinlint.runtime.sites import Site
from pinlint.runtime.watch import simulated_cuda, watch

__all__ = [
    "ASYNC",
    "BLOCKING",
    "INSTALL_HINT",
    "PAGEABLE",
    "STAGED",
    "Birth",
    "MissingTorchError",
    "PageableNonBlockingCopy",
    "PinlintRuntimeWarning",
    "Report",
    "Site",
    "Transfer",
    "Violation",
    "simulated_cuda",
    "watch",
]
