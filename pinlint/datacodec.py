"""Plain-data encoding of pinlint's result dataclasses, checked against their type hints.

The cache stores analysis results as JSON. Decoding never constructs anything but the classes
named in the type hints, and checks every value against the exact expected shape: a wrong type,
a missing or unknown key, or an unexpected value raises :class:`ShapeError`. The shape is taken
from the dataclasses themselves, so a field added to ``FileAnalysis`` needs no codec change.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any, Union


class ShapeError(ValueError):
    """The data does not have the shape of the expected type."""


_HINTS: dict[type, list[tuple[str, Any]]] = {}


def _fields(cls: type) -> list[tuple[str, Any]]:
    cached = _HINTS.get(cls)
    if cached is None:
        hints = typing.get_type_hints(cls)
        cached = [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]
        _HINTS[cls] = cached
    return cached


def encode(value: Any) -> Any:
    """``value`` as JSON-compatible data (dataclasses become objects, sets sorted lists)."""
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: encode(getattr(value, name)) for name, _hint in _fields(type(value))}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(encode(v) for v in value)
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    raise ShapeError(f"cannot encode {type(value).__name__}")


def decode(hint: Any, data: Any) -> Any:
    """Rebuild a value of type ``hint`` from ``data``, or raise :class:`ShapeError`."""
    if hint is Any:
        raise ShapeError("untyped field")
    if hint is type(None) or hint is None:
        if data is not None:
            raise ShapeError("expected null")
        return None
    if hint is bool:
        if type(data) is not bool:
            raise ShapeError("expected a boolean")
        return data
    if hint is int:
        if type(data) is not int:
            raise ShapeError("expected an integer")
        return data
    if hint is float:
        if type(data) not in (int, float):
            raise ShapeError("expected a number")
        return float(data)
    if hint is str:
        if type(data) is not str:
            raise ShapeError("expected a string")
        return data
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        # The enum class comes from pinlint's own type hints, never from the data.
        if type(data) not in (str, int):
            raise ShapeError(f"expected a value of {hint.__name__}")
        try:
            return hint(data)
        except ValueError:
            raise ShapeError(f"not a {hint.__name__}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if type(data) is not dict:
            raise ShapeError(f"expected an object for {hint.__name__}")
        fields = _fields(hint)
        if len(data) != len(fields):
            raise ShapeError(f"wrong keys for {hint.__name__}")
        try:
            kwargs = {name: decode(field_hint, data[name]) for name, field_hint in fields}
        except KeyError as exc:
            raise ShapeError(f"missing key {exc} for {hint.__name__}") from None
        return hint(**kwargs)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        for option in args:
            try:
                return decode(option, data)
            except ShapeError:
                continue
        raise ShapeError(f"matches none of {hint}")
    if origin is typing.Literal:
        if data not in args or type(data) not in {type(a) for a in args}:
            raise ShapeError(f"expected one of {args}")
        return data
    if origin in (list, tuple, set, frozenset):
        if type(data) is not list:
            raise ShapeError("expected an array")
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(data) != len(args):
                raise ShapeError("wrong tuple length")
            return tuple(decode(a, v) for a, v in zip(args, data))
        item = args[0] if args else Any
        items = [decode(item, v) for v in data]
        return origin(items)
    if origin is dict:
        if type(data) is not dict or not args or args[0] is not str:
            raise ShapeError("expected an object with string keys")
        return {k: decode(args[1], v) for k, v in data.items()}
    raise ShapeError(f"unsupported type {hint}")
