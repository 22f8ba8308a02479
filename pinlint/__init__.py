"""pinlint: keep PyTorch host-to-device copies truly asynchronous.

Importing this package is cheap on purpose (no libcst, rich or torch): ``pinlint --version``
and pre-commit runs start fast.
"""

__version__ = "0.1.0"
