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
    return _decoder(hint)(data)


Decoder = typing.Callable[[Any], Any]
#: hint -> its decoder, built once: a warm run decodes thousands of values of the same few types,
#: and reading a hint again for each value (its origin, its arguments) cost most of the time.
_DECODERS: dict[Any, Decoder] = {}


def _decoder(hint: Any) -> Decoder:
    found = _DECODERS.get(hint)
    if found is None:
        found = _DECODERS[hint] = _build(hint)
    return found


def _exact(kind: type, what: str) -> Decoder:
    def check(data: Any) -> Any:
        if type(data) is not kind:
            raise ShapeError(f"expected {what}")
        return data

    return check


def _null(data: Any) -> None:
    if data is not None:
        raise ShapeError("expected null")
    return None


def _number(data: Any) -> float:
    if type(data) not in (int, float):
        raise ShapeError("expected a number")
    return float(data)


def _build(hint: Any) -> Decoder:  # noqa: C901 - one case per kind of hint
    if hint is Any:

        def untyped(data: Any) -> Any:
            raise ShapeError("untyped field")

        return untyped
    if hint is type(None) or hint is None:
        return _null
    if hint is bool:
        return _exact(bool, "a boolean")
    if hint is int:
        return _exact(int, "an integer")
    if hint is float:
        return _number
    if hint is str:
        return _exact(str, "a string")
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        # The enum class comes from pinlint's own type hints, never from the data.
        def member(data: Any) -> Any:
            if type(data) not in (str, int):
                raise ShapeError(f"expected a value of {hint.__name__}")
            try:
                return hint(data)
            except ValueError:
                raise ShapeError(f"not a {hint.__name__}") from None

        return member
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        # Built on first use: a dataclass may (through its fields) contain itself.
        fields: list[tuple[str, Decoder]] = []

        def instance(data: Any) -> Any:
            if not fields:
                fields.extend((name, _decoder(field_hint)) for name, field_hint in _fields(hint))
            if type(data) is not dict:
                raise ShapeError(f"expected an object for {hint.__name__}")
            if len(data) != len(fields):
                raise ShapeError(f"wrong keys for {hint.__name__}")
            try:
                kwargs = {name: field(data[name]) for name, field in fields}
            except KeyError as exc:
                raise ShapeError(f"missing key {exc} for {hint.__name__}") from None
            return hint(**kwargs)

        return instance
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        options = [_decoder(option) for option in args]

        def either(data: Any) -> Any:
            for option in options:
                try:
                    return option(data)
                except ShapeError:
                    continue
            raise ShapeError(f"matches none of {hint}")

        return either
    if origin is typing.Literal:
        kinds = {type(a) for a in args}

        def literal(data: Any) -> Any:
            if data not in args or type(data) not in kinds:
                raise ShapeError(f"expected one of {args}")
            return data

        return literal
    if origin in (list, tuple, set, frozenset):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            parts = [_decoder(a) for a in args]

            def fixed(data: Any) -> Any:
                if type(data) is not list:
                    raise ShapeError("expected an array")
                if len(data) != len(parts):
                    raise ShapeError("wrong tuple length")
                return tuple(part(v) for part, v in zip(parts, data))

            return fixed
        item = _decoder(args[0] if args else Any)

        def sequence(data: Any) -> Any:
            if type(data) is not list:
                raise ShapeError("expected an array")
            return origin([item(v) for v in data])

        return sequence
    if origin is dict:
        value = _decoder(args[1]) if len(args) == 2 else None

        def mapping(data: Any) -> Any:
            if type(data) is not dict or value is None or args[0] is not str:
                raise ShapeError("expected an object with string keys")
            return {k: value(v) for k, v in data.items()}

        return mapping

    def unsupported(data: Any) -> Any:
        raise ShapeError(f"unsupported type {hint}")

    return unsupported
