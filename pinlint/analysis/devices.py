"""Where a device expression points: the host, an accelerator, something else, or unknown."""

from __future__ import annotations

import enum
from collections.abc import Callable

import libcst as cst

from pinlint import torch_api
from pinlint.analysis.callargs import keyword_args, positional


class DeviceClass(enum.Enum):
    HOST = "host"
    ACCELERATOR = "accelerator"
    #: A literal that is neither (``"meta"``): not a host-to-device copy.
    OTHER = "other"
    UNKNOWN = "unknown"
    #: No ``device=`` given: the factory's default device.
    DEFAULT = "default"


#: Device classes that a run-time value may take (``device=dev``).
RUNTIME_OR_ACCELERATOR = frozenset({DeviceClass.ACCELERATOR, DeviceClass.UNKNOWN})


def string_value(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd literals (bytes, escapes): treat as unknown
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        # f"cuda:{rank}": the static prefix is enough to tell host from accelerator.
        first = node.parts[0] if node.parts else None
        if isinstance(first, cst.FormattedStringText):
            return first.value
    return None


def classify_device(
    node: cst.BaseExpression, torch_function: Callable[[cst.BaseExpression], str | None]
) -> DeviceClass:
    """Classify a device expression; ``torch_function`` recognises ``torch.device``."""
    text = string_value(node)
    if text is not None:
        lowered = text.strip().lower()
        if lowered.startswith(torch_api.HOST_DEVICE_PREFIXES):
            return DeviceClass.HOST
        if lowered.startswith(torch_api.ACCELERATOR_DEVICE_PREFIXES):
            return DeviceClass.ACCELERATOR
        # A plain literal naming something else ("meta") is no copy; an f-string's prefix
        # may still be completed into anything.
        return DeviceClass.OTHER if isinstance(node, cst.SimpleString) else DeviceClass.UNKNOWN
    if isinstance(node, cst.Integer):
        return DeviceClass.ACCELERATOR  # a bare index names an accelerator device
    if isinstance(node, cst.Call) and torch_function(node.func) == "device":
        args = positional(node)
        if args:
            return classify_device(args[0], torch_function)
        kw = keyword_args(node).get("type")
        # `torch.device(*spec)`: the device is not visible.
        return classify_device(kw.value, torch_function) if kw else DeviceClass.UNKNOWN
    return DeviceClass.UNKNOWN  # a run-time value: could be anything
